// The one restore plan: what each kind of step writes, and in which order (the journal's side is
// in tests/daemon/daemon_service_test.cc, JournalTest).
#include "mmio/restore_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

#include "mmio/registers.h"

namespace oaprof::mmio {
namespace {

// Registers in a map; masked registers behave as the hardware's (high half selects the bits).
class MaskedMapMmio final : public Mmio {
 public:
  std::uint32_t read32(std::uint32_t offset) override { return regs[offset]; }
  void write32(std::uint32_t offset, std::uint32_t value) override {
    log.emplace_back(offset, value);
    if (reg::is_masked_register(offset)) {
      const std::uint32_t mask = value >> 16;
      regs[offset] = (regs[offset] & ~mask) | (value & mask & 0xFFFFu);
    } else {
      regs[offset] = value;
    }
  }
  std::string describe() const override { return "map"; }
  std::map<std::uint32_t, std::uint32_t> regs;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> log;
};

TEST(RestorePlanTest, TheFirstWriteOfARegisterDecidesItsStep) {
  EXPECT_EQ(step_for_first_write(0x9888, 0xDEADBEEF),
            (RestoreStep{0x9888, 0xDEADBEEF, RestoreKind::kPlain}));
  EXPECT_EQ(step_for_first_write(reg::kOaDebug, 0xABCD1234),
            (RestoreStep{reg::kOaDebug, 0x1234, RestoreKind::kMasked}));
  // Gen12's OA_DEBUG moved to the OAG block; i915's gen12_enable_metric_set writes it masked too.
  EXPECT_EQ(step_for_first_write(reg::kOagOaDebug, 0xABCD0067),
            (RestoreStep{reg::kOagOaDebug, 0x0067, RestoreKind::kMasked}));
  // A forcewake request is the driver's too: only oaprof's bit is ever put back.
  EXPECT_EQ(
      step_for_first_write(reg::kForcewakeRender, 0x1),
      (RestoreStep{reg::kForcewakeRender, reg::kForcewakeOaprofBit, RestoreKind::kOwnedBits}));
}

TEST(RestorePlanTest, StepsAreUndoneNewestFirstEachAsItsKindNeeds) {
  MaskedMapMmio m;
  m.regs = {{0x9888, 0x11}, {reg::kOaDebug, 0x0003}, {reg::kForcewakeGt, 0x1}};
  RestorePlan plan;
  plan.add({0x9888, 0x11, RestoreKind::kPlain});
  plan.add({reg::kOaDebug, 0x0003, RestoreKind::kMasked});
  plan.add({reg::kForcewakeGt, reg::kForcewakeOaprofBit, RestoreKind::kOwnedBits});
  plan.add({0x9888, 0x99, RestoreKind::kPlain});  // a later write keeps the first prior
  ASSERT_EQ(plan.steps().size(), 3u);
  m.write32(0x9888, 0x77);
  m.write32(reg::kOaDebug, reg::masked_enable(0x00F0) | reg::masked_disable(0x0003));
  m.write32(reg::kForcewakeGt, reg::masked_enable(reg::kForcewakeOaprofBit));
  m.write32(reg::kForcewakeGt, reg::masked_enable(0x2));  // the driver's own request meanwhile
  m.log.clear();
  plan.apply(m);
  EXPECT_EQ(m.regs[0x9888], 0x11u);
  EXPECT_EQ(m.regs[reg::kOaDebug], 0x0003u);
  EXPECT_EQ(m.regs[reg::kForcewakeGt], 0x1u | 0x2u);  // the driver's bits stay
  ASSERT_EQ(m.log.size(), 3u);
  EXPECT_EQ(m.log[0].first, reg::kForcewakeGt);  // newest first
  EXPECT_EQ(m.log[2].first, 0x9888u);
}

TEST(RestorePlanTest, OwnedBitsAccumulate) {
  RestorePlan plan;
  plan.add({reg::kForcewakeRender, 0x4, RestoreKind::kOwnedBits});
  plan.add({reg::kForcewakeRender, 0x8, RestoreKind::kOwnedBits});
  ASSERT_EQ(plan.steps().size(), 1u);
  EXPECT_EQ(plan.steps()[0].prior, 0xCu);
}

TEST(RestorePlanTest, KindsRoundTripTheirNames) {
  for (RestoreKind k : {RestoreKind::kPlain, RestoreKind::kMasked, RestoreKind::kOwnedBits}) {
    EXPECT_EQ(parse_restore_kind(restore_kind_name(k)), k);
  }
  EXPECT_EQ(parse_restore_kind("sideways"), std::nullopt);
}

}  // namespace
}  // namespace oaprof::mmio
