#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <initializer_list>

#include "gpu/counter_source.h"
#include "gpu/i915/report_batch.h"
#include "mmio/commands.h"
#include "mmio/registers.h"
#include "mmio/sim_gpu.h"
#include "oa/delta.h"

namespace oaprof::gpu {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr auto kFmt = oa::ReportFormat::kA32u40_A4u32_B8_C8;

Device sim_device(mmio::ManualClock*& clock, const mmio::SimConfig& cfg = {}) {
  auto c = std::make_unique<mmio::ManualClock>();
  clock = c.get();
  return make_sim_device(std::move(c), cfg);
}

mmio::OaConfig flex_config() {
  mmio::OaConfig c;
  c.guid = "db41edd4-d8e7-4730-ad11-b9a2d6833503";  // for perf, which needs one
  c.mux = {{0x9840, 0x80}, {0x9888, 0x166C01E0}};
  c.boolean = {{0x2710, 0x1}};
  c.flex = {{0xE458, 0x5}, {0xE558, 0x6}};
  return c;
}

TEST(ReportBatchTest, EncodesBothGenerationsAsTheCommandStreamerExpects) {
  // Literal encodings from reference/hardware.md §4.
  EXPECT_THAT(build_report_batch(oa::Generation::kGen9, 0x1'2345'6740, 9).dwords,
              ElementsAre(0x14000002u, 0x23456740u, 0x1u, 9u, 0x05000000u, 0u));
  const auto gen7 = build_report_batch(oa::Generation::kGen7_5, 0x1000, 3);
  EXPECT_THAT(gen7.dwords, ElementsAre(0x14000001u, 0x1000u, 3u, 0x05000000u));
  EXPECT_EQ(gen7.relocations.at(0).dword, 1u);
  EXPECT_THROW(build_report_batch(oa::Generation::kGen9, 0x1010, 1), std::invalid_argument);
  EXPECT_THROW(build_report_batch(oa::Generation::kGen7_5, 0x1'0000'0000, 1),
               std::invalid_argument);
}

// One workload, measured by every read-out on its own simulator with the same virtual clock.
oa::CounterDeltas measure_with(std::string_view access, const mmio::SimConfig& cfg,
                               oa::ReportFormat f, const mmio::OaConfig& config,
                               oa::Report* last = nullptr) {
  mmio::ManualClock* clock = nullptr;
  Device d = sim_device(clock, cfg);
  auto src = make_counter_source(access, d);
  src->start(f, config);
  clock->advance_ns(12'345);
  const auto r0 = src->snapshot(1);
  src->kernel_running(true);
  clock->advance_ns(2'500'000);
  src->kernel_running(false);
  clock->advance_ns(777);
  const auto r1 = src->snapshot(2);
  EXPECT_EQ(r0.dword(0), 1u);
  EXPECT_EQ(r1.dword(0), 2u);
  EXPECT_FALSE(src->config_lost());
  src->stop();
  const oa::Report b = oa::decode(f, r0.bytes), e = oa::decode(f, r1.bytes);
  if (last != nullptr) *last = e;
  return oa::compute_deltas(b, e);
}

oa::CounterDeltas measure(std::string_view access) {
  return measure_with(access, {}, kFmt, flex_config());
}

TEST(ReadOutAgreementTest, MmioRpcSimAndPerfGiveIdenticalDeltas) {
  const oa::CounterDeltas mmio = measure("mmio");
  const oa::CounterDeltas rpc = measure("rpc");
  const oa::CounterDeltas sim = measure("sim");
  const oa::CounterDeltas perf = measure("perf");  // through the simulated i915
  EXPECT_GT(mmio.a[7], 0u);
  EXPECT_NEAR(static_cast<double>(mmio.gpu_ticks), 2'500'777 * 1.15, 1.0);
  for (const oa::CounterDeltas* other : {&rpc, &sim, &perf}) {
    EXPECT_EQ(other->timestamp, mmio.timestamp);
    EXPECT_EQ(other->gpu_ticks, mmio.gpu_ticks);
    EXPECT_EQ(other->a, mmio.a);
    EXPECT_EQ(other->b, mmio.b);
    EXPECT_EQ(other->c, mmio.c);
  }
}

// The same on the simulated Gen12 (TGL GT2) and Xe-LPG (MTL GT2) parts: mmio reads the OAG
// registers over the BAR, rpc stores them from a batch (MI_STORE_REGISTER_MEM), perf streams the
// OAG unit through the simulated i915; all three give the same deltas, in the generation's OAG
// format, and the EU counters count (SQCNT1's PMON enable was set).
oa::CounterDeltas measure_on(std::string_view access, const oa::Platform& platform,
                             oa::Report* last = nullptr) {
  mmio::SimConfig cfg;
  cfg.platform = platform;
  mmio::OaConfig c;
  c.guid = "db41edd4-d8e7-4730-ad11-b9a2d6833503";
  c.mux = {{0x9888, 0x166C01E0}};
  c.boolean = {{0xD920, 0x1}};  // OAG_OAREPORTTRIG1
  c.flex = {{0xE458, 0x5}};
  // The generation's 256-byte OAG format: A32u40_A4u32_B8_C8 on Gen12, A24u40_A14u32_B8_C8 on
  // Xe-LPG (select code 5 on both).
  return measure_with(access, cfg, oa::parse_format("101", platform.gen), c, last);
}

// mmio's deltas on `p`, after checking that each of `others` gives the same.
oa::CounterDeltas expect_read_outs_agree(const oa::Platform& p,
                                         std::initializer_list<const char*> others) {
  oa::Report end;
  const oa::CounterDeltas mmio = measure_on("mmio", p, &end);
  EXPECT_EQ(end.rpt_id & 0xFFFF, 2u);
  EXPECT_GT(mmio.a[7], 0u);  // an EU counter of the generation's layout counted
  EXPECT_GT(mmio.timestamp, 0u);
  for (const char* access : others) {
    SCOPED_TRACE(access);
    const oa::CounterDeltas other = measure_on(access, p);
    EXPECT_EQ(other.timestamp, mmio.timestamp);
    EXPECT_EQ(other.gpu_ticks, mmio.gpu_ticks);
    EXPECT_EQ(other.a, mmio.a);
    EXPECT_EQ(other.b, mmio.b);
    EXPECT_EQ(other.c, mmio.c);
  }
  return mmio;
}

TEST(ReadOutAgreementTest, Gen12AndXeLpgReadOutsGiveIdenticalDeltas) {
  for (const char* name : {"tglgt2", "mtlgt2"}) {
    SCOPED_TRACE(name);
    const oa::CounterDeltas mmio =
        expect_read_outs_agree(mmio::sim_platform_by_name(name), {"rpc", "sim", "perf"});
    EXPECT_NEAR(static_cast<double>(mmio.gpu_ticks), 2'500'777 * 1.15, 1.0);
  }
}

// DG2 (acmgt3, an A770's G10): mmio, sim and perf agree in A24u40_A14u32_B8_C8, and rpc is
// refused with the reason, as DG2's i915 refuses the batch's relocations and pread/pwrite.
TEST(ReadOutAgreementTest, Dg2ReadOutsGiveIdenticalDeltasAndRpcIsRefused) {
  const oa::Platform p = mmio::sim_platform_by_name("acmgt3");
  expect_read_outs_agree(p, {"sim", "perf"});
  mmio::ManualClock* clock = nullptr;
  mmio::SimConfig cfg;
  cfg.platform = p;
  Device d = sim_device(clock, cfg);
  try {
    make_counter_source("rpc", d);
    ADD_FAILURE() << "rpc was not refused on DG2";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("use --access mmio or --access perf"));
  }
  EXPECT_FALSE(rpc_refusal(mmio::sim_platform_by_name("tglgt2")).has_value());
}

TEST(ReadOutAgreementTest, AContextSwitchDuringAKernelIsFlaggedAndRepaired) {
  for (const char* access : {"mmio", "rpc"}) {
    SCOPED_TRACE(access);
    mmio::ManualClock* clock = nullptr;
    mmio::SimConfig cfg;
    cfg.context_switch_period_ns = 10'000'000;
    Device d = sim_device(clock, cfg);
    auto src = make_counter_source(access, d);
    src->start(kFmt, flex_config());
    src->snapshot(1);
    EXPECT_FALSE(src->config_lost());
    clock->advance_ns(4'000'000);  // a kernel that ends before the switch
    src->snapshot(2);
    EXPECT_FALSE(src->config_lost());
    clock->advance_ns(8'000'000);           // one that spans it
    EXPECT_EQ(d.mmio->read32(0xE458), 0u);  // the switch loaded another context's flex value
    src->snapshot(3);
    EXPECT_TRUE(src->config_lost());
    EXPECT_EQ(d.mmio->read32(0xE458), 0x5u);  // written again for the next kernel
    src->snapshot(4);
    EXPECT_FALSE(src->config_lost());
  }
}

TEST(RpcCounterSourceTest, StopRestoresEveryRegisterTheSessionTouched) {
  mmio::ManualClock* clock = nullptr;
  Device d = sim_device(clock);
  const std::uint32_t offsets[] = {
      mmio::reg::kOaControl,   mmio::reg::kOaDebug, 0x9840, 0x9888, 0x2710, 0xE458, 0xE558,
      mmio::reg::kOaCtxControl};
  std::vector<std::uint32_t> before;
  for (std::uint32_t o : offsets) {
    d.mmio->write32(o, o == mmio::reg::kOaDebug ? 0xFFFF0011u : o * 3);
    before.push_back(d.mmio->read32(o));
  }
  auto src = make_counter_source("rpc", d);
  src->start(kFmt, flex_config());
  EXPECT_NE(d.mmio->read32(mmio::reg::kOaControl), before[0]);
  src->snapshot(5);
  src->stop();
  for (std::size_t i = 0; i < std::size(offsets); ++i) {
    EXPECT_EQ(d.mmio->read32(offsets[i]), before[i]) << std::hex << offsets[i];
  }
}

TEST(RpcCounterSourceTest, SnapshotBeforeStartAndForeignConfigsAreRefused) {
  mmio::ManualClock* clock = nullptr;
  Device d = sim_device(clock);
  auto src = make_counter_source("rpc", d);
  EXPECT_THROW(src->snapshot(1), std::logic_error);
  mmio::OaConfig bad;
  bad.flex = {{0x2B00, 0}};
  EXPECT_THROW(src->start(kFmt, bad), std::invalid_argument);
  EXPECT_EQ(d.mmio->read32(mmio::reg::kOaControl), 0u);  // nothing was written
}

TEST(RpcCounterSourceTest, RealHardwareWithoutARenderNodeSaysWhatToDo) {
  try {
    make_drm_batch_runner("/nonexistent/renderD128");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot open render node /nonexistent/renderD128"));
  }
}

TEST(SimAccessTest, RefusesARealDevice) {
  class Bar final : public mmio::Mmio {
   public:
    std::uint32_t read32(std::uint32_t) override { return 0; }
    void write32(std::uint32_t, std::uint32_t) override {}
    std::string describe() const override { return "0000:00:02.0 [8086:5916]"; }
  };
  Device d;
  d.mmio = std::make_unique<Bar>();
  try {
    make_counter_source("sim", d);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("--device sim"));
  }
}

}  // namespace
}  // namespace oaprof::gpu
