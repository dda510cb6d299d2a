// SimGpu's model beyond plain counting: masked registers, context switches, the batch
// interpreter and serving a shared mapping.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "mmio/commands.h"
#include "mmio/registers.h"
#include "mmio/sim_gpu.h"
#include "oa/report.h"

namespace oaprof::mmio {
namespace {

using ::testing::HasSubstr;

constexpr std::uint32_t kBatchEnableA36 =
    (5u << reg::kOaControlSelectShift) | reg::kOaControlEnable;

class Memory final : public GpuAddressSpace {
 public:
  static constexpr std::uint64_t kBase = 0x10000;
  std::uint8_t* resolve(std::uint64_t address, std::size_t size) override {
    if (address < kBase || address + size > kBase + bytes.size()) {
      throw std::invalid_argument("unmapped");
    }
    return bytes.data() + (address - kBase);
  }
  std::uint32_t dword(std::size_t byte_offset) const {
    std::uint32_t v;
    std::memcpy(&v, bytes.data() + byte_offset, 4);
    return v;
  }
  std::vector<std::uint8_t> bytes = std::vector<std::uint8_t>(1024, 0xEE);
};

class SimBatchTest : public ::testing::Test {
 protected:
  void run(std::vector<std::uint32_t> batch) { sim_.execute_batch(batch, mem_); }
  ManualClock clock_;
  SimGpu sim_{SimConfig{}, clock_};
  Memory mem_;
};

TEST_F(SimBatchTest, ReportPerfCountWritesTheSelectedFormatWithTheReportId) {
  sim_.write32(reg::kOaControl, kBatchEnableA36);
  sim_.set_kernel_running(true);
  clock_.advance_ns(1'000'000);
  run({cmd::kMiNoop, cmd::kMiReportPerfCountGen8, Memory::kBase + 64, 0, 0xABC,
       cmd::kMiBatchBufferEnd});
  const auto r =
      oa::decode(oa::ReportFormat::kA32u40_A4u32_B8_C8, std::span(mem_.bytes).subspan(64, 256));
  EXPECT_EQ(r.rpt_id, 0xABCu);
  EXPECT_EQ(r.gpu_ticks, 1'150'000u);
  EXPECT_EQ(r.a[0], 1'150'000u);
  EXPECT_EQ(r.timestamp, 12'000u);
  EXPECT_EQ(mem_.bytes[64 + 256], 0xEE);  // nothing past the 256-byte report

  // The counter select decides the report: C4_B8 is 64 bytes.
  sim_.write32(reg::kOaControl, (7u << reg::kOaControlSelectShift) | reg::kOaControlEnable);
  std::fill(mem_.bytes.begin(), mem_.bytes.end(), 0xEE);
  run({cmd::kMiReportPerfCountGen8, Memory::kBase, 0, 7, cmd::kMiBatchBufferEnd});
  EXPECT_EQ(mem_.dword(0), 7u);
  EXPECT_EQ(mem_.bytes[64], 0xEE);
}

TEST_F(SimBatchTest, LoadAndStoreRegisterMoveValuesBothWays) {
  run({cmd::mi_load_register_imm(2), 0x2710, 0x1234, 0x2714, 0x5678,
       cmd::kMiStoreRegisterMemGen8 | cmd::kUseGlobalGtt, 0x2714, Memory::kBase + 8, 0,
       cmd::kMiBatchBufferEnd});
  EXPECT_EQ(sim_.read32(0x2710), 0x1234u);
  EXPECT_EQ(mem_.dword(8), 0x5678u);
}

TEST_F(SimBatchTest, RejectsWhatTheHardwareWouldNotRunAsMeant) {
  sim_.write32(reg::kOaControl, kBatchEnableA36);
  auto expect_rejected = [&](std::vector<std::uint32_t> batch, const char* why) {
    try {
      run(std::move(batch));
      ADD_FAILURE() << "accepted: " << why;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr(why));
    }
  };
  expect_rejected({cmd::kMiReportPerfCountGen7, Memory::kBase, 1, cmd::kMiBatchBufferEnd},
                  "Gen6/7 form");
  expect_rejected({cmd::kMiReportPerfCountGen8, Memory::kBase + 32, 0, 1, cmd::kMiBatchBufferEnd},
                  "not 64-byte aligned");
  expect_rejected({cmd::mi_instr(0x26, 0), cmd::kMiBatchBufferEnd}, "MI opcode 0x26");
  expect_rejected({0x7A000004, cmd::kMiBatchBufferEnd}, "not an MI command");  // PIPE_CONTROL
  expect_rejected({cmd::kMiReportPerfCountGen8, Memory::kBase}, "needs 4 dwords");
  expect_rejected({cmd::kMiNoop, cmd::kMiNoop}, "without MI_BATCH_BUFFER_END");
  EXPECT_THROW(run({cmd::kMiReportPerfCountGen8, 0x900000, 0, 1, cmd::kMiBatchBufferEnd}),
               std::invalid_argument);                                     // unmapped target
  sim_.write32(reg::kOaControl, (1u << reg::kOaControlSelectShift) | 1u);  // no format 1
  expect_rejected({cmd::kMiReportPerfCountGen8, Memory::kBase, 0, 1, cmd::kMiBatchBufferEnd},
                  "names no report format");
}

TEST(SimModelTest, OaDebugIsMasked) {
  ManualClock clock;
  SimGpu sim(SimConfig{}, clock);
  sim.write32(reg::kOaDebug, reg::masked_enable(0x60));
  sim.write32(reg::kOaDebug, 0x00000002);  // no mask bits: changes nothing
  EXPECT_EQ(sim.read32(reg::kOaDebug), 0x60u);
  sim.write32(reg::kOaDebug, reg::masked_disable(0x20));
  EXPECT_EQ(sim.read32(reg::kOaDebug), 0x40u);
}

TEST(SimModelTest, AContextSwitchReloadsOnlyTheContextSavedRegisters) {
  ManualClock clock;
  SimConfig cfg;
  cfg.context_switch_period_ns = 1'000'000;
  SimGpu sim(cfg, clock);
  sim.write32(reg::kOaCtxControl, 1);
  sim.write32(reg::kEuPerfCntl[6], 0x77);
  sim.write32(0x2710, 0x99);
  sim.write32(reg::kOaControl, kBatchEnableA36);
  clock.advance_ns(999'999);
  EXPECT_EQ(sim.read32(reg::kEuPerfCntl[6]), 0x77u);
  clock.advance_ns(1);
  EXPECT_EQ(sim.read32(reg::kEuPerfCntl[6]), 0u);
  EXPECT_EQ(sim.read32(reg::kOaCtxControl), 0u);
  EXPECT_EQ(sim.read32(0x2710), 0x99u);                     // boolean: global
  EXPECT_EQ(sim.read32(reg::kOaControl), kBatchEnableA36);  // OACONTROL: global
  EXPECT_EQ(sim.context_switches(), 1u);
}

TEST(SimModelTest, ServePublishesCountersAndTakesWritesFromTheMapping) {
  ManualClock clock;
  SimGpu sim(SimConfig{}, clock);
  std::vector<std::uint32_t> bar(SimGpu::kRegisterFileBytes / 4, 0xFFFFFFFF);
  sim.serve(bar);
  EXPECT_EQ(bar[reg::kOaControl / 4], 0u);     // the model's state, not the mapping's garbage
  bar[reg::kOaControl / 4] = kBatchEnableA36;  // the other side enables OA
  bar[reg::kGpuTicks / 4] = 42;                // and scribbles on a read-only counter
  sim.serve(bar);
  sim.set_kernel_running(true);
  clock.advance_ns(1000);
  sim.serve(bar);
  EXPECT_EQ(bar[reg::kGpuTicks / 4], 1150u);
  EXPECT_EQ(bar[reg::a_low(0) / 4], 1150u);
  bar[reg::kForcewakeGt / 4] = reg::masked_enable(reg::kForcewakeOaprofBit);
  sim.serve(bar);
  EXPECT_EQ(bar[reg::kForcewakeAckGt / 4], reg::kForcewakeOaprofBit);
  std::vector<std::uint32_t> small(16);
  EXPECT_THROW(sim.serve(small), std::invalid_argument);
}

}  // namespace
}  // namespace oaprof::mmio
