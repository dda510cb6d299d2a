// The register journal's replay after a crash, on every platform oaprof programs through MMIO:
// every register a session writes (the OA programming plan and the forcewake requests) is put
// back bit for bit by replaying the state file on hardware whose masked registers ignore the
// bits a write does not select. Which registers the hardware masks is written here from i915,
// not taken from reg::is_masked_register, which is what this checks.
#include "session/register_journal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mmio/forcewake.h"
#include "mmio/oa_programmer.h"
#include "mmio/registers.h"
#include "mmio/saved_registers.h"
#include "mmio/whitelist.h"
#include "oa/platform.h"
#include "tests/common/daemon_test_util.h"

namespace oaprof::session {
namespace {

// The registers i915 writes masked on `platform` (i915_perf.c and intel_uncore.c @ torvalds/linux
// 002c6ca75289a4ac4f6738213dd2d258704886e4): GEN8_OA_DEBUG on Gen9-11 (gen8_enable_metric_set),
// GEN12_OAG_OA_DEBUG on Gen12 and Xe-LPG (gen12_enable_metric_set), HALF_SLICE_CHICKEN2 and
// WAIT_FOR_RC6_EXIT (mask_reg_value), and the platform's forcewake requests (fw_set, fw_clear).
bool i915_writes_masked(const oa::Platform& platform, std::uint32_t offset) {
  const bool gen9_to_11 =
      platform.gen == oa::Generation::kGen9 || platform.gen == oa::Generation::kGen11;
  if (offset == 0x2B04) return gen9_to_11;
  if (offset == 0xDAF8) return oa::is_gen12_family(platform.gen);
  if (offset == 0xE180 || offset == 0x20CC) return true;
  const auto domains = mmio::all_forcewake_domains(platform);
  return std::any_of(domains.begin(), domains.end(),
                     [offset](const mmio::reg::ForcewakeDomain& d) { return d.request == offset; });
}

// A GPU's register file as the hardware behaves: masked registers keep the bits a write's high
// half does not select and read back their low half. Every register starts at a value of its own
// (an idle OA unit: OACONTROL's enable bit clear).
class MaskingHardware final : public mmio::Mmio {
 public:
  explicit MaskingHardware(oa::Platform platform) : platform_(platform) {}
  std::uint32_t read32(std::uint32_t offset) override {
    const auto it = regs_.find(offset);
    return it != regs_.end() ? it->second : initial(offset);
  }
  void write32(std::uint32_t offset, std::uint32_t value) override {
    regs_[offset] = i915_writes_masked(platform_, offset)
                        ? mmio::reg::apply_masked(read32(offset), value)
                        : value;
  }
  std::string describe() const override { return "masking hardware"; }
  std::uint32_t initial(std::uint32_t offset) const {
    const std::uint32_t v = (offset * 2654435761u) & ~1u;
    return i915_writes_masked(platform_, offset) ? v & 0xFFFFu : v;
  }
  // Registers whose value is not the one they started with.
  std::vector<std::uint32_t> changed() const {
    std::vector<std::uint32_t> out;
    for (const auto& [offset, value] : regs_) {
      if (value != initial(offset)) out.push_back(offset);
    }
    return out;
  }

 private:
  oa::Platform platform_;
  std::map<std::uint32_t, std::uint32_t> regs_;
};

// The window a session writes through, until its process "dies": from then on its writes (the
// restores a live process would make on the way out) reach nothing.
class DyingWindow final : public mmio::Mmio {
 public:
  explicit DyingWindow(mmio::Mmio& inner) : inner_(inner) {}
  std::uint32_t read32(std::uint32_t offset) override { return inner_.read32(offset); }
  void write32(std::uint32_t offset, std::uint32_t value) override {
    if (!dead_) inner_.write32(offset, value);
  }
  std::string describe() const override { return inner_.describe(); }
  void die() { dead_ = true; }

 private:
  mmio::Mmio& inner_;
  bool dead_ = false;
};

class Borrowed final : public mmio::Mmio {
 public:
  explicit Borrowed(mmio::Mmio& inner) : inner_(inner) {}
  std::uint32_t read32(std::uint32_t offset) override { return inner_.read32(offset); }
  void write32(std::uint32_t offset, std::uint32_t value) override {
    inner_.write32(offset, value);
  }
  std::string describe() const override { return inner_.describe(); }

 private:
  mmio::Mmio& inner_;
};

// A configuration with every kind of register the platform's whitelist takes among a few
// candidates, the masked mux registers included where i915 accepts them.
mmio::OaConfig config_for(const oa::Platform& p) {
  using Kind = mmio::ConfigRegisterKind;
  mmio::OaConfig c;
  for (std::uint32_t a : {0x9840u, 0x9888u, 0xE180u, 0x20CCu, 0x0D04u, 0x182300u}) {
    if (!mmio::is_whitelisted(p, Kind::kMux, a)) continue;
    const bool masked = a == 0xE180u || a == 0x20CCu;
    c.mux.push_back({a, masked ? mmio::reg::masked_enable(0x00A0) | (0x0050u << 16) : 0x1234567u});
  }
  for (std::uint32_t a : {0x2710u, 0xD900u, 0xDC44u, 0xDC48u}) {
    if (mmio::is_whitelisted(p, Kind::kBoolean, a)) c.boolean.push_back({a, 0x89ABCDEu});
  }
  if (mmio::is_whitelisted(p, Kind::kFlex, 0xE458)) c.flex.push_back({0xE458, 0x5});
  return c;
}

// A session that programs the OA unit and holds forcewake through the registers, journaled to
// `state_file`, and then dies without restoring anything. Returns the registers it journaled.
std::vector<mmio::RestoreStep> crash_a_session(const oa::Platform& p, MaskingHardware& hardware,
                                               const std::filesystem::path& state_file) {
  std::unique_ptr<StateFile> state;
  JournalingMmio journal(std::make_unique<Borrowed>(hardware), [&](const mmio::RestoreStep& s) {
    if (!state) state = std::make_unique<StateFile>(state_file, StateContents{"sim", "", "", {}});
    state->append(s);
  });
  DyingWindow window(journal);
  mmio::SavedRegisters forcewake(window);
  for (const auto& d : mmio::oa_forcewake_domains(p)) {  // what Forcewake::take_registers takes
    forcewake.set_owned_bits(d.request, mmio::reg::kForcewakeOaprofBit);
  }
  mmio::OaProgrammer programmer(window, [](std::chrono::microseconds) {});
  programmer.program(
      mmio::plan_oa_programming(p, oa::formats_for(p.gen).front().format, config_for(p)));
  window.die();
  return {journal.plan().steps().begin(), journal.plan().steps().end()};
}

TEST(RegisterJournalTest, ReplayingTheStateFilePutsBackEveryRegisterOnEveryPlatform) {
  std::set<std::uint32_t> masked_replayed;
  int platforms = 0;
  for (std::string_view name : oa::platform_names()) {
    const oa::Platform p = oa::require_platform_by_name(name);
    if (p.gen == oa::Generation::kGen7_5 || p.gen == oa::Generation::kXe2) continue;  // no MMIO
    ++platforms;
    test_support::ScratchDir dir;
    const std::filesystem::path state_file = dir.path() / "state";
    MaskingHardware hardware(p);
    const std::vector<mmio::RestoreStep> journaled = crash_a_session(p, hardware, state_file);
    ASSERT_FALSE(hardware.changed().empty()) << name;

    const std::optional<StateContents> state = read_state_file(state_file);
    ASSERT_TRUE(state.has_value()) << name;
    EXPECT_EQ(state->entries, journaled) << name;
    mmio::apply_restore_steps(hardware, state->entries);
    EXPECT_THAT(hardware.changed(), ::testing::IsEmpty())
        << name << " (" << p.codename << ") keeps " << fmt::format("{::#x}", hardware.changed());
    for (const mmio::RestoreStep& s : state->entries) {
      EXPECT_EQ(s.kind != mmio::RestoreKind::kPlain, i915_writes_masked(p, s.offset))
          << name << std::hex << " 0x" << s.offset;
      if (s.kind != mmio::RestoreKind::kPlain) masked_replayed.insert(s.offset);
    }
  }
  EXPECT_GE(platforms, 6);
  // Each masked register oaprof writes was among them: both OA_DEBUGs, the masked mux registers,
  // and the forcewake requests it takes (BDW's and Gen9+'s GT, Gen9+'s render, CHV's two).
  for (std::uint32_t offset :
       {0x2B04u, 0xDAF8u, 0xE180u, 0x20CCu, 0xA188u, 0xA278u, 0x1300B0u, 0x1300B8u}) {
    EXPECT_TRUE(masked_replayed.contains(offset)) << std::hex << "0x" << offset;
  }
}

// A state file from before issue 30 says `plain` for Gen12's OAG_OA_DEBUG, with the register's
// whole read-back value: it is replayed as the masked register it is, its low half with a full
// mask, and OA_DEBUG's bits come back.
TEST(RegisterJournalTest, AnOldPlainLineForOagOaDebugIsReplayedMasked) {
  test_support::ScratchDir dir;
  const std::filesystem::path file = dir.path() / "state";
  {
    StateFile state(file, StateContents{"sim", "", "", {}});
    state.append({0xDAF8, 0x00000003, mmio::RestoreKind::kPlain});
    state.append({0x9888, 0x00000003, mmio::RestoreKind::kPlain});
  }
  const std::optional<StateContents> read = read_state_file(file);
  ASSERT_TRUE(read.has_value());
  EXPECT_THAT(read->entries,
              ::testing::ElementsAre(mmio::RestoreStep{0xDAF8, 0x3, mmio::RestoreKind::kMasked},
                                     mmio::RestoreStep{0x9888, 0x3, mmio::RestoreKind::kPlain}));
  MaskingHardware tgl(oa::require_platform_by_name("tglgt2"));
  tgl.write32(0xDAF8, mmio::reg::masked_enable(0x66) | mmio::reg::masked_disable(0x1));
  mmio::apply_restore_steps(tgl, read->entries);
  EXPECT_EQ(tgl.read32(0xDAF8), 0x3u);
}

}  // namespace
}  // namespace oaprof::session
