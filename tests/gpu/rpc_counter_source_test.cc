#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <initializer_list>

#include <fmt/format.h>
#include <i915_drm.h>

#include "gpu/counter_source.h"
#include "gpu/i915/i915_gem.h"
#include "gpu/i915/report_batch.h"
#include "mmio/commands.h"
#include "mmio/registers.h"
#include "mmio/sim_gpu.h"
#include "oa/delta.h"

namespace oaprof::gpu {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr auto kRpcFmt = oa::ReportFormat::kA32u40_A4u32_B8_C8;

Device rpc_sim_device(mmio::ManualClock*& clock, const mmio::SimConfig& cfg = {}) {
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
  Device d = rpc_sim_device(clock, cfg);
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
  return measure_with(access, {}, kRpcFmt, flex_config());
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

// DG2 (acmgt3, an A770's G10): every read-out agrees in A24u40_A14u32_B8_C8; rpc's batch goes
// through softpin and FIXED mappings there, as DG2's i915 takes no other.
TEST(ReadOutAgreementTest, Dg2ReadOutsGiveIdenticalDeltas) {
  expect_read_outs_agree(mmio::sim_platform_by_name("acmgt3"), {"rpc", "sim", "perf"});
}

// The old path, tried on the simulated i915 of each part: a relocation (EXECBUFFER2) and a
// pwrite/pread of one GEM buffer. i915 takes them before Gen12 and on Tiger Lake only.
struct OldPathAnswers {
  int execbuffer_with_relocation;
  int pwrite;
  int pread;
};

OldPathAnswers try_old_path(const char* platform) {
  mmio::ManualClock* clock = nullptr;
  mmio::SimConfig cfg;
  cfg.platform = mmio::sim_platform_by_name(platform);
  Device d = rpc_sim_device(clock, cfg);
  auto gem = make_sim_i915_gem(*d.sim);
  drm_i915_gem_create create{};
  create.size = 4096;
  EXPECT_EQ(gem->create(create), 0);
  const std::uint32_t batch[] = {mmio::cmd::kMiBatchBufferEnd, mmio::cmd::kMiNoop};
  std::uint8_t bytes[sizeof batch];
  drm_i915_gem_pwrite w{};
  w.handle = create.handle;
  w.size = sizeof batch;
  w.data_ptr = reinterpret_cast<std::uintptr_t>(batch);
  drm_i915_gem_pread r{};
  r.handle = create.handle;
  r.size = sizeof bytes;
  r.data_ptr = reinterpret_cast<std::uintptr_t>(bytes);
  OldPathAnswers answers{0, gem->pwrite(w), gem->pread(r)};
  drm_i915_gem_relocation_entry reloc{};
  reloc.target_handle = create.handle;
  reloc.offset = 8;  // after the end: harmless where it is applied
  drm_i915_gem_exec_object2 object{};
  object.handle = create.handle;
  object.relocation_count = 1;
  object.relocs_ptr = reinterpret_cast<std::uintptr_t>(&reloc);
  drm_i915_gem_execbuffer2 exec{};
  exec.buffers_ptr = reinterpret_cast<std::uintptr_t>(&object);
  exec.buffer_count = 1;
  exec.batch_len = sizeof batch;
  exec.flags = I915_EXEC_RENDER;
  answers.execbuffer_with_relocation = gem->execbuffer2(exec);
  return answers;
}

TEST(SimI915GemTest, RefusesRelocationsAndPreadPwriteOnEveryGen12PartButTigerLake) {
  for (const char* name : {"mtlgt2", "acmgt1", "acmgt2", "acmgt3"}) {
    SCOPED_TRACE(name);
    const OldPathAnswers a = try_old_path(name);
    EXPECT_EQ(a.execbuffer_with_relocation, -EINVAL);  // eb_validate_vma
    EXPECT_EQ(a.pwrite, -EOPNOTSUPP);                  // i915_gem_pwrite_ioctl
    EXPECT_EQ(a.pread, -EOPNOTSUPP);                   // i915_gem_pread_ioctl
  }
  for (const char* name : {"kblgt2", "tglgt2"}) {
    SCOPED_TRACE(name);
    const OldPathAnswers a = try_old_path(name);
    EXPECT_EQ(a.execbuffer_with_relocation, 0);
    EXPECT_EQ(a.pwrite, 0);
    EXPECT_EQ(a.pread, 0);
  }
}

// GEM_MMAP_OFFSET: a card with local memory offers only FIXED, an integrated part everything
// but FIXED (__assign_mmap_offset).
TEST(SimI915GemTest, OffersTheMmapTypesI915OffersOnThePart) {
  struct Case {
    const char* platform;
    std::uint64_t type;
    int expected;
  };
  for (const Case c :
       {Case{"acmgt1", I915_MMAP_OFFSET_FIXED, 0}, Case{"acmgt1", I915_MMAP_OFFSET_WB, -ENODEV},
        Case{"mtlgt2", I915_MMAP_OFFSET_FIXED, -ENODEV}, Case{"mtlgt2", I915_MMAP_OFFSET_WC, 0}}) {
    SCOPED_TRACE(fmt::format("{} type {}", c.platform, c.type));
    mmio::ManualClock* clock = nullptr;
    mmio::SimConfig cfg;
    cfg.platform = mmio::sim_platform_by_name(c.platform);
    Device d = rpc_sim_device(clock, cfg);
    auto gem = make_sim_i915_gem(*d.sim);
    drm_i915_gem_create create{};
    create.size = 4096;
    ASSERT_EQ(gem->create(create), 0);
    drm_i915_gem_mmap_offset m{};
    m.handle = create.handle;
    m.flags = c.type;
    EXPECT_EQ(gem->mmap_offset(m), c.expected);
  }
}

// Where i915 refuses relocations, a softpinned object that overlaps another or is not canonical
// is refused, as i915 cannot move it.
TEST(SimI915GemTest, RefusesMisplacedSoftpins) {
  mmio::ManualClock* clock = nullptr;
  mmio::SimConfig cfg;
  cfg.platform = mmio::sim_platform_by_name("mtlgt2");
  Device d = rpc_sim_device(clock, cfg);
  auto gem = make_sim_i915_gem(*d.sim);
  drm_i915_gem_create a{}, b{};
  a.size = b.size = 8192;
  ASSERT_EQ(gem->create(a), 0);
  ASSERT_EQ(gem->create(b), 0);
  drm_i915_gem_exec_object2 objects[2]{};
  objects[0].handle = a.handle;
  objects[1].handle = b.handle;
  for (auto& o : objects) o.flags = EXEC_OBJECT_PINNED | EXEC_OBJECT_SUPPORTS_48B_ADDRESS;
  objects[0].offset = 0x200000;
  objects[1].offset = 0x201000;  // inside the first
  drm_i915_gem_execbuffer2 exec{};
  exec.buffers_ptr = reinterpret_cast<std::uintptr_t>(objects);
  exec.buffer_count = 2;
  exec.flags = I915_EXEC_RENDER;
  EXPECT_EQ(gem->execbuffer2(exec), -EINVAL);
  objects[1].offset = 0x0000'8000'0000'0000ull;  // bit 47 set but not sign-extended
  EXPECT_EQ(gem->execbuffer2(exec), -EINVAL);
}

TEST(ReadOutAgreementTest, AContextSwitchDuringAKernelIsFlaggedAndRepaired) {
  for (const char* access : {"mmio", "rpc"}) {
    SCOPED_TRACE(access);
    mmio::ManualClock* clock = nullptr;
    mmio::SimConfig cfg;
    cfg.context_switch_period_ns = 10'000'000;
    Device d = rpc_sim_device(clock, cfg);
    auto src = make_counter_source(access, d);
    src->start(kRpcFmt, flex_config());
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
  Device d = rpc_sim_device(clock);
  const std::uint32_t offsets[] = {
      mmio::reg::kOaControl,   mmio::reg::kOaDebug, 0x9840, 0x9888, 0x2710, 0xE458, 0xE558,
      mmio::reg::kOaCtxControl};
  std::vector<std::uint32_t> before;
  for (std::uint32_t o : offsets) {
    d.mmio->write32(o, o == mmio::reg::kOaDebug ? 0xFFFF0011u : o * 3);
    before.push_back(d.mmio->read32(o));
  }
  auto src = make_counter_source("rpc", d);
  src->start(kRpcFmt, flex_config());
  EXPECT_NE(d.mmio->read32(mmio::reg::kOaControl), before[0]);
  src->snapshot(5);
  src->stop();
  for (std::size_t i = 0; i < std::size(offsets); ++i) {
    EXPECT_EQ(d.mmio->read32(offsets[i]), before[i]) << std::hex << offsets[i];
  }
}

TEST(RpcCounterSourceTest, SnapshotBeforeStartAndForeignConfigsAreRefused) {
  mmio::ManualClock* clock = nullptr;
  Device d = rpc_sim_device(clock);
  auto src = make_counter_source("rpc", d);
  EXPECT_THROW(src->snapshot(1), std::logic_error);
  mmio::OaConfig bad;
  bad.flex = {{0x2B00, 0}};
  EXPECT_THROW(src->start(kRpcFmt, bad), std::invalid_argument);
  EXPECT_EQ(d.mmio->read32(mmio::reg::kOaControl), 0u);  // nothing was written
}

TEST(RpcCounterSourceTest, RealHardwareWithoutARenderNodeSaysWhatToDo) {
  try {
    make_drm_batch_runner("/nonexistent/renderD128", mmio::sim_platform_by_name("mtlgt2"));
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
