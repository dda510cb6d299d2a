// Meteor Lake and Arrow Lake (Xe-LPG) report timestamps at every CTC shift (issue 30, item 2).
// The OA unit "ignores the CTC_SHIFT" (linux i915_perf.c i915_perf_oa_timestamp_frequency,
// Wa_18013179988; xe_oa.c xe_oa_timestamp_frequency): its raw report timestamp counts the
// undivided crystal, CS << (3 - shift), which i915 gives as I915_PARAM_OA_TIMESTAMP_FREQUENCY and
// xe as the OA unit's oa_timestamp_freq; IGT's tests/intel/perf.c divides the raw delta by it. So
// a report pair 1 ms apart is 38 400 raw ticks apart on a 38.4 MHz crystal whatever the shift,
// and every way oaprof learns the rate (i915, the clock registers, xe) must decode it to 1 ms;
// reports oaprof builds itself from RING_TIMESTAMP (mmio, rpc) must count the same way.
#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "gpu/counter_source.h"
#include "mmio/registers.h"
#include "mmio/sim_gpu.h"
#include "oa/delta.h"
#include "oa/report.h"

namespace oaprof::gpu {
namespace {

constexpr double kCrystalHz = 38.4e6;  // RPM_CONFIG0 crystal code 2
constexpr auto kXeLpgFormat = oa::ReportFormat::kA24u40_A14u32_B8_C8;

// A Meteor Lake part (or its xe-driven twin) whose RPM_CONFIG0 holds the 38.4 MHz crystal and
// `ctc_shift`, so that its CS timestamp runs at 38.4 MHz >> (3 - shift).
mmio::SimConfig meteor_lake(std::uint32_t ctc_shift, bool xe = false, bool i915 = true) {
  mmio::SimConfig c;
  c.platform = mmio::sim_platform_by_name(xe ? "mtlgt2-xe" : "mtlgt2");
  c.platform.timestamp_hz = kCrystalHz / (1 << (3 - ctc_shift));
  c.timestamp_registers = mmio::TimestampRegisters{0, (2u << 3) | (ctc_shift << 1), 0};
  c.i915 = i915;
  return c;
}

// Nanoseconds between two reports whose raw timestamps are `raw_ticks` apart (the first just
// below the 32-bit field's top, so that the pair wraps), decoded at `platform`'s rate.
double decoded_ns(const oa::Platform& platform, std::uint32_t raw_ticks) {
  oa::Report r0;
  r0.timestamp = 0xFFFFF000u;
  oa::Report r1;
  r1.timestamp = static_cast<std::uint32_t>(r0.timestamp + raw_ticks);
  const auto d = oa::compute_deltas(oa::decode(kXeLpgFormat, oa::encode(kXeLpgFormat, r0).bytes),
                                    oa::decode(kXeLpgFormat, oa::encode(kXeLpgFormat, r1).bytes));
  return oa::gpu_time_ns(d, platform.timestamp_hz);
}

TEST(XeLpgTimestampTest, AReportPairAMillisecondApartDecodesToOneAtEveryCtcShift) {
  const auto one_ms = static_cast<std::uint32_t>(kCrystalHz / 1000);
  for (const std::uint32_t shift : {1u, 2u, 3u}) {
    for (const bool i915 : {true, false}) {  // I915_PARAM_OA_TIMESTAMP_FREQUENCY, or registers
      const Device d =
          make_sim_device(std::make_unique<mmio::ManualClock>(), meteor_lake(shift, false, i915));
      EXPECT_DOUBLE_EQ(decoded_ns(d.platform, one_ms), 1e6)
          << "shift " << shift << " i915 " << i915;
      EXPECT_EQ(d.facts.oa_cs_shift, 3 - static_cast<int>(shift));
    }
    const Device xe =
        make_sim_device(std::make_unique<mmio::ManualClock>(), meteor_lake(shift, true));
    ASSERT_EQ(xe.facts.timestamp_source, oa::TimestampSource::kXeOaUnit) << xe.facts.timestamp_note;
    EXPECT_DOUBLE_EQ(decoded_ns(xe.platform, one_ms), 1e6) << "xe, shift " << shift;
  }
}

// The table's rate without i915 or registers assumes shift 2, where the OA rate is twice the CS
// one (mmio::crystal_registers_for gives the simulator that shift by default).
TEST(XeLpgTimestampTest, TheSimulatorAndTheTableAssumeShiftTwo) {
  mmio::SimConfig c;
  c.platform = mmio::sim_platform_by_name("mtlgt2");
  const Device d = make_sim_device(std::make_unique<mmio::ManualClock>(), c);
  EXPECT_EQ(d.mmio->read32(mmio::reg::kRpmConfig0) & 0x6u, 2u << 1);
  EXPECT_EQ(d.platform.timestamp_hz, c.platform.timestamp_hz);
  const oa::DeviceFacts table = oa::table_facts(c.platform, "no device");
  EXPECT_EQ(table.oa_cs_shift, 1);
  EXPECT_EQ(table.timestamp_hz, c.platform.timestamp_hz);
}

// Snapshots oaprof lays out from RING_TIMESTAMP (mmio) or stores with MI_STORE_REGISTER_MEM (rpc)
// 1 ms of simulated time apart decode to 1 ms with the device's own facts at every shift.
TEST(XeLpgTimestampTest, RegisterBuiltSnapshotsCountAsTheOaUnitDoes) {
  for (const char* access : {"mmio", "rpc"}) {
    for (const std::uint32_t shift : {1u, 2u, 3u}) {
      auto owned = std::make_unique<mmio::ManualClock>();
      mmio::ManualClock& clock = *owned;
      Device d = make_sim_device(std::move(owned), meteor_lake(shift));
      auto src = make_counter_source(access, d);
      src->start(kXeLpgFormat);
      const auto r0 = src->snapshot(1);
      clock.advance_ns(1'000'000);
      const auto r1 = src->snapshot(2);
      const auto delta = oa::compute_deltas(oa::decode(kXeLpgFormat, r0.bytes),
                                            oa::decode(kXeLpgFormat, r1.bytes));
      EXPECT_NEAR(oa::gpu_time_ns(delta, d.platform.timestamp_hz), 1e6, 1e3)
          << access << ", shift " << shift;
      src->stop();
    }
  }
}

}  // namespace
}  // namespace oaprof::gpu
