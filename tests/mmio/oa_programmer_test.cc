#include "mmio/oa_programmer.h"
#include "mmio/signal_restore.h"

#include <csignal>
#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mmio/registers.h"
#include "mmio/sim_gpu.h"
#include "tests/mmio/signalled_child.h"

namespace oaprof::mmio {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Kind = PlanStep::Kind;

// Registers on plain (possibly shared) memory, to see every bit a session leaves behind.
class MemoryMmio final : public Mmio {
 public:
  explicit MemoryMmio(std::uint32_t* words) : words_(words) {}
  std::uint32_t read32(std::uint32_t offset) override { return words_[offset / 4]; }
  void write32(std::uint32_t offset, std::uint32_t value) override {
    if (fail_at_write_ >= 0 && writes_++ == fail_at_write_) {
      throw std::runtime_error("device vanished");
    }
    // OA_DEBUG is masked, as on the hardware.
    words_[offset / 4] =
        offset == reg::kOaDebug ? reg::apply_masked(words_[offset / 4], value) : value;
  }
  std::string describe() const override { return "memory"; }
  int fail_at_write_ = -1;
  int writes_ = 0;

 private:
  std::uint32_t* words_;
};

constexpr std::size_t kWords = SimGpu::kRegisterFileBytes / 4;

OaConfig sample_config() {
  OaConfig c;
  c.mux = {{0x9840, 0x80}, {0x9888, 0x166C01E0}, {0x9888, 0x12170280}};
  c.boolean = {{0x2740, 0x0}, {0x2710, 0x1234}};
  c.flex = {{0xE458, 0x5}, {0xE65C, 0x7}};
  return c;
}

std::vector<std::uint32_t> scrambled_registers() {
  std::vector<std::uint32_t> regs(kWords);
  for (std::size_t i = 0; i < kWords; ++i) regs[i] = static_cast<std::uint32_t>(i * 2654435761u);
  regs[reg::kOaDebug / 4] = 0x0003;  // masked registers read back their low half only
  return regs;
}

TEST(OaPlanTest, OrdersStopDebugMuxSettleBooleanFlexContextAndEnable) {
  const auto plan = plan_oa_programming(oa::simulated_platform(),
                                        oa::ReportFormat::kA32u40_A4u32_B8_C8, sample_config());
  std::vector<std::pair<Kind, std::uint32_t>> order;
  for (const auto& s : plan) order.emplace_back(s.kind, s.address);
  EXPECT_THAT(order,
              ElementsAre(std::pair{Kind::kWrite, 0x2B00u}, std::pair{Kind::kMaskedWrite, 0x2B04u},
                          std::pair{Kind::kWrite, 0x9840u}, std::pair{Kind::kWrite, 0x9888u},
                          std::pair{Kind::kWrite, 0x9888u}, std::pair{Kind::kSettle, 0u},
                          std::pair{Kind::kWrite, 0x2740u}, std::pair{Kind::kWrite, 0x2710u},
                          std::pair{Kind::kWrite, 0xE458u}, std::pair{Kind::kWrite, 0xE65Cu},
                          std::pair{Kind::kWrite, 0x2360u}, std::pair{Kind::kWrite, 0x2B00u}));
  EXPECT_EQ(plan[0].value, 0u);                     // stop before configuring
  EXPECT_EQ(plan[1].value, (0x60u << 16) | 0x60u);  // clock-ratio bits 5 and 6, masked
  EXPECT_EQ(plan[5].settle, std::chrono::microseconds(500));
  EXPECT_EQ(plan.back().value, (5u << 2) | 1u);  // A32u40_A4u32_B8_C8, enabled
  EXPECT_TRUE(plan[8].context_saved);
  EXPECT_TRUE(plan[10].context_saved);
  EXPECT_FALSE(plan[6].context_saved);
}

TEST(OaPlanTest, Gen8HasNoClockRatioAndNoMuxMeansNoSettle) {
  oa::Platform bdw = oa::simulated_platform();
  bdw.gen = oa::Generation::kGen8;
  const auto plan = plan_oa_programming(bdw, oa::ReportFormat::kC4_B8, {});
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[1].address, reg::kOaCtxControl);
  EXPECT_EQ(plan[2].value, (7u << 2) | 1u);
}

TEST(OaPlanTest, RefusesWritesOutsideTheWhitelistAndGenerationsOutOfScope) {
  OaConfig bad = sample_config();
  bad.boolean.push_back({0x2B00, 0xFFFFFFFF});  // OACONTROL smuggled in as a boolean register
  EXPECT_THROW(
      plan_oa_programming(oa::simulated_platform(), oa::ReportFormat::kA32u40_A4u32_B8_C8, bad),
      std::invalid_argument);
  oa::Platform hsw = oa::simulated_platform();
  hsw.gen = oa::Generation::kGen7_5;
  try {
    plan_oa_programming(hsw, oa::ReportFormat::kA45_B8_C8, {});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("--access perf"));
  }
}

// Gen12 and Xe-LPG program the global OAG unit as i915's gen12_enable_metric_set: stop, OA_DEBUG
// (clock ratio, context-switch and GO reports), the global timer off, SQCNT1's PMON enable (and
// Xe-LPG's BPC reporting) set by read-modify-write, the configuration, OAG_OACONTROL last; nothing
// context-saved, the global registers watched.
TEST(OaPlanTest, Gen12AndXeLpgProgramOagAsI915Does) {
  for (const std::uint16_t id : {std::uint16_t{0x9A49}, std::uint16_t{0x7D45}}) {
    const oa::Platform p = sim_platform_by_name(id == 0x9A49 ? "tglgt2" : "mtlgt2");
    const bool mtl = p.gen == oa::Generation::kXeLpg;
    const oa::ReportFormat f = oa::formats_for(p.gen).front().format;
    OaConfig c;
    c.mux = {{0x9888, 0x1}};
    c.boolean = {{0xD920, 0x2}};
    c.flex = {{0xE458, 0x5}};
    const auto plan = plan_oa_programming(p, f, c);
    std::vector<std::pair<Kind, std::uint32_t>> order;
    for (const auto& s : plan) order.emplace_back(s.kind, s.address);
    EXPECT_THAT(
        order, ElementsAre(std::pair{Kind::kWrite, 0xDAF4u}, std::pair{Kind::kMaskedWrite, 0xDAF8u},
                           std::pair{Kind::kWrite, 0x2B28u}, std::pair{Kind::kSetBits, 0x8718u},
                           std::pair{Kind::kWrite, 0x9888u}, std::pair{Kind::kSettle, 0u},
                           std::pair{Kind::kWrite, 0xD920u}, std::pair{Kind::kWrite, 0xE458u},
                           std::pair{Kind::kWrite, 0xDAF4u}))
        << p.codename;
    EXPECT_EQ(plan[3].value, mtl ? (3u << 29) : (1u << 30)) << p.codename;
    EXPECT_EQ(plan.back().value,
              (static_cast<std::uint32_t>(oa::layout_of(f).select_code) << 2) | 1u);
    for (const auto& s : plan) EXPECT_FALSE(s.context_saved) << std::hex << s.address;
    EXPECT_TRUE(plan[7].watched);
    EXPECT_TRUE(plan[3].watched);
  }
}

TEST(OaPlanTest, XeLpgRefusesTheMediaUnitsFormatsAndRegisters) {
  const oa::Platform mtl = sim_platform_by_name("mtlgt2");
  OaConfig media;
  media.boolean = {{0x393000, 0x1}};  // GEN12_OAM_STARTTRIG1: whitelisted, but the media GT's
  try {
    plan_oa_programming(mtl, oa::formats_for(mtl.gen).front().format, media);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("media GT"));
  }
  for (const auto& l : oa::formats_for(mtl.gen)) {
    if (l.header64) {
      EXPECT_THROW(plan_oa_programming(mtl, l.format, {}), std::invalid_argument);
    }
  }
}

// On Gen12 a changed SQCNT1 (another stream closed and cleared PMON enable) is lost and set again
// without disturbing its other bits.
TEST(OaProgrammerTest, Gen12WatchesSqcnt1BitsAndSetsThemAgain) {
  auto regs = scrambled_registers();
  regs[reg::kOagOaControl / 4] = 0;
  regs[reg::kOagOaDebug / 4] = 0;
  regs[reg::kSqCnt1 / 4] = 0x5;
  MemoryMmio m(regs.data());
  OaProgrammer p(m, [](std::chrono::microseconds) {});
  const oa::Platform tgl = sim_platform_by_name("tglgt2");
  p.program(plan_oa_programming(tgl, oa::formats_for(tgl.gen).front().format, {}));
  EXPECT_EQ(regs[reg::kSqCnt1 / 4], 0x5u | reg::kSqCnt1PmonEnable);
  EXPECT_TRUE(p.lost_watched_registers().empty());
  regs[reg::kSqCnt1 / 4] = 0x5;
  EXPECT_THAT(p.lost_watched_registers(),
              ElementsAre(oa::RegisterWrite{reg::kSqCnt1, reg::kSqCnt1PmonEnable}));
  p.reprogram_watched_registers();
  EXPECT_EQ(regs[reg::kSqCnt1 / 4], 0x5u | reg::kSqCnt1PmonEnable);
  p.restore();
  EXPECT_EQ(regs[reg::kSqCnt1 / 4], 0x5u);
}

TEST(OaProgrammerTest, ProgramsSettlesAndRestoresEveryBitAfterANormalEnd) {
  auto regs = scrambled_registers();
  const auto before = regs;
  MemoryMmio m(regs.data());
  std::vector<std::chrono::microseconds> slept;
  {
    OaProgrammer p(m, [&](std::chrono::microseconds d) { slept.push_back(d); });
    p.program(plan_oa_programming(oa::simulated_platform(), oa::ReportFormat::kA32u40_A4u32_B8_C8,
                                  sample_config()));
    EXPECT_EQ(regs[reg::kOaControl / 4], (5u << 2) | 1u);
    EXPECT_EQ(regs[0x9888 / 4], 0x12170280u);
    EXPECT_EQ(regs[reg::kOaDebug / 4], 0x63u);
    EXPECT_THAT(slept, ElementsAre(std::chrono::microseconds(500)));
    EXPECT_TRUE(p.programmed());
    p.restore();
    EXPECT_EQ(regs, before);
    p.restore();
  }
  EXPECT_EQ(regs, before);
}

TEST(OaProgrammerTest, AnErrorHalfWayRestoresWhatWasWritten) {
  auto regs = scrambled_registers();
  const auto before = regs;
  MemoryMmio m(regs.data());
  m.fail_at_write_ = 6;  // inside the boolean list
  OaProgrammer p(m, [](std::chrono::microseconds) {});
  EXPECT_THROW(
      p.program(plan_oa_programming(oa::simulated_platform(), oa::ReportFormat::kA32u40_A4u32_B8_C8,
                                    sample_config())),
      std::runtime_error);
  EXPECT_EQ(regs, before);
  EXPECT_FALSE(p.programmed());
}

TEST(OaProgrammerTest, RefusesAnOaUnitThatIsAlreadyCountingAndWritesNothing) {
  ManualClock clock;
  SimGpu sim(SimConfig{}, clock);
  // An i915 perf stream (or another profiler) counting with format 101 and its own mux.
  sim.write32(reg::kOaControl, (5u << 2) | reg::kOaControlEnable);
  sim.write32(0x9888, 0x11111111);
  OaProgrammer p(sim, [](std::chrono::microseconds) {});
  try {
    p.program(
        plan_oa_programming(oa::simulated_platform(), oa::ReportFormat::kA12, sample_config()));
    FAIL() << "programmed over a counting OA unit";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("already counting (OACONTROL 0x15)"));
    EXPECT_THAT(e.what(), HasSubstr("close the other profiler"));
    EXPECT_THAT(e.what(), HasSubstr("--access perf"));
  }
  EXPECT_FALSE(p.programmed());
  EXPECT_EQ(sim.read32(reg::kOaControl), (5u << 2) | reg::kOaControlEnable);
  EXPECT_EQ(sim.read32(0x9888), 0x11111111u);
  // Once the other user stopped (select bits left behind do not count), programming goes on.
  sim.write32(reg::kOaControl, 5u << 2);
  p.program(plan_oa_programming(oa::simulated_platform(), oa::ReportFormat::kA12, sample_config()));
  EXPECT_TRUE(p.programmed());
  p.restore();
  EXPECT_EQ(sim.read32(reg::kOaControl), 5u << 2);
}

TEST(OaProgrammerTest, DetectsAndRepairsLostContextSavedRegisters) {
  auto regs = scrambled_registers();
  MemoryMmio m(regs.data());
  OaProgrammer p(m, [](std::chrono::microseconds) {});
  p.program(plan_oa_programming(oa::simulated_platform(), oa::ReportFormat::kA32u40_A4u32_B8_C8,
                                sample_config()));
  EXPECT_TRUE(p.lost_watched_registers().empty());
  regs[0xE65C / 4] = 0;  // a context switch loaded another context's flex configuration
  EXPECT_THAT(p.lost_watched_registers(), ElementsAre(oa::RegisterWrite{0xE65C, 0x7}));
  p.reprogram_watched_registers();
  EXPECT_TRUE(p.lost_watched_registers().empty());
}

// HALF_SLICE_CHICKEN2 and WAIT_FOR_RC6_EXIT are masked, and i915 keeps its workaround bit in
// each out of a configuration's reach (i915_perf.c mask_reg_value): the value goes in as a
// masked write without that bit, and the prior value comes back with a full mask, since a plain
// write of it would change nothing.
TEST(OaProgrammerTest, MaskedMuxRegistersKeepTheKernelsWorkaroundsAndComeBack) {
  ManualClock clock;
  SimGpu sim(SimConfig{}, clock);
  // What i915 left there: its workaround bits and a field of its own.
  sim.write32(reg::kHalfSliceChicken2, reg::masked_enable(reg::kStPoDisable | 0x1));
  sim.write32(reg::kWaitForRc6Exit, reg::masked_enable(reg::kWaitForRc6ExitEnable | 0x10));
  OaConfig config;
  // A configuration that clears every bit and sets its own.
  config.mux = {{reg::kHalfSliceChicken2, 0xFFFF0040}, {reg::kWaitForRc6Exit, 0xFFFF0002}};
  const auto plan = plan_oa_programming(oa::simulated_platform(), oa::ReportFormat::kA12, config);
  EXPECT_EQ(plan[2], (PlanStep{Kind::kMaskedWrite, reg::kHalfSliceChicken2, 0xDFFF0040}));
  EXPECT_EQ(plan[3], (PlanStep{Kind::kMaskedWrite, reg::kWaitForRc6Exit, 0xFFFE0002}));
  OaProgrammer p(sim, [](std::chrono::microseconds) {});
  p.program(plan);
  EXPECT_EQ(sim.read32(reg::kHalfSliceChicken2), reg::kStPoDisable | 0x40);
  EXPECT_EQ(sim.read32(reg::kWaitForRc6Exit), reg::kWaitForRc6ExitEnable | 0x2);
  p.restore();
  EXPECT_EQ(sim.read32(reg::kHalfSliceChicken2), reg::kStPoDisable | 0x1);
  EXPECT_EQ(sim.read32(reg::kWaitForRc6Exit), reg::kWaitForRc6ExitEnable | 0x10);
}

TEST(OaProgrammerTest, SigtermRestoresEveryRegisterBeforeTheProcessEnds) {
  const std::size_t bytes = kWords * 4;
  testing::SharedWords shared(bytes);
  std::uint32_t* words = shared.data();
  const auto before = scrambled_registers();
  std::memcpy(words, before.data(), bytes);
  const int status = testing::run_child_until_signalled(
      [&] {  // static: what the child sets up must outlive set_up, until the signal
        SignalThread::start();  // as oaprof's main does, before anything is programmed
        static MemoryMmio m(words);
        static OaProgrammer p(m, [](std::chrono::microseconds) {});
        p.program(plan_oa_programming(oa::simulated_platform(),
                                      oa::ReportFormat::kA32u40_A4u32_B8_C8, sample_config()));
      },
      [&] { EXPECT_EQ(words[reg::kOaControl / 4], (5u << 2) | 1u); },  // it really programmed
      SIGTERM);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);  // and still died of it
  EXPECT_EQ(std::memcmp(words, before.data(), bytes), 0);
}

}  // namespace
}  // namespace oaprof::mmio
