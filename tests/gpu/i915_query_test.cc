// The device's facts through the i915 queries: the simulated i915 answers DRM_I915_QUERY and
// GETPARAM as i915_query.c and i915_getparam_ioctl do (a fused part included), the two-step
// query reads it, and opening a device uses it on every path — or falls back, and says so.
#include "gpu/i915/i915_query.h"

#include <i915_drm.h>

#include <cerrno>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpu/device.h"
#include "gpu/i915/perf_stream.h"
#include "mmio/registers.h"

namespace oaprof::gpu {
namespace {

using ::testing::HasSubstr;

oa::Platform platform_of(std::uint16_t pci_id) {
  const auto p = oa::platform_for_pci_id(pci_id);
  if (!p) ADD_FAILURE() << "no platform for PCI id " << std::hex << pci_id;
  return p.value_or(oa::simulated_platform());
}

class SimI915QueryTest : public ::testing::Test {
 protected:
  mmio::SimConfig fused() {
    mmio::SimConfig c;
    c.eus = 23;  // a UHD 630-like Kaby Lake GT2 with one EU fused off
    return c;
  }
  mmio::ManualClock clock_;
};

// The ioctl as i915 answers it, item by item: the length first, a short buffer refused, flags
// and unknown queries refused in the item's length.
TEST_F(SimI915QueryTest, AnswersAsI915QueryDoes) {
  mmio::SimGpu sim(fused(), clock_);
  auto i915 = make_sim_i915_query(sim);
  drm_i915_query_item item{};
  item.query_id = DRM_I915_QUERY_TOPOLOGY_INFO;
  drm_i915_query q{};
  q.num_items = 1;
  q.items_ptr = reinterpret_cast<std::uintptr_t>(&item);
  ASSERT_EQ(i915->query(q), 0);
  // 16-byte header, 1 slice byte, 1 subslice byte per slice, 1 EU byte per subslice.
  EXPECT_EQ(item.length, 16 + 1 + 1 + 3);
  std::vector<std::uint8_t> data(static_cast<std::size_t>(item.length), 0);
  item.data_ptr = reinterpret_cast<std::uintptr_t>(data.data());
  item.length -= 1;
  ASSERT_EQ(i915->query(q), 0);
  EXPECT_EQ(item.length, -EINVAL);  // shorter than the data
  item.length = static_cast<std::int32_t>(data.size());
  item.flags = 1;
  ASSERT_EQ(i915->query(q), 0);
  EXPECT_EQ(item.length, -EINVAL);  // flags must be 0
  item.flags = 0;
  data[0] = 1;  // the header's flags too
  ASSERT_EQ(i915->query(q), 0);
  EXPECT_EQ(item.length, -EINVAL);
  data[0] = 0;
  item.query_id = 99;
  item.length = static_cast<std::int32_t>(data.size());
  ASSERT_EQ(i915->query(q), 0);
  EXPECT_EQ(item.length, -EINVAL);  // no such query
  item.query_id = 0;
  EXPECT_EQ(i915->query(q), -EINVAL);
  q.flags = 1;
  EXPECT_EQ(i915->query(q), -EINVAL);
}

TEST_F(SimI915QueryTest, TheTopologyOfAFusedPartAndTheTimestampFrequency) {
  mmio::SimGpu sim(fused(), clock_);
  auto i915 = make_sim_i915_query(sim);
  const oa::Topology t = query_topology(*i915);
  EXPECT_EQ(t.eus, 23);
  EXPECT_EQ(t.subslices, 3);
  EXPECT_EQ(t.slices, 1);
  EXPECT_EQ(t.slice_mask, 0x1u);
  EXPECT_EQ(t.subslice_mask, 0x7u);
  EXPECT_EQ(query_cs_timestamp_hz(*i915), 12e6);
  drm_i915_getparam other{};
  int value = 0;
  other.param = I915_PARAM_CHIPSET_ID;
  other.value = &value;
  EXPECT_EQ(i915->get_param(other), -EINVAL);
}

// DG2 as i915's xehp_sseu_info_init() reports it: one slice of 32 possible Xe-cores of up to
// 16 EUs, whatever the die has (an A380's G11: 8 Xe-cores enabled, the first 8).
TEST_F(SimI915QueryTest, Dg2HasOneSliceOf32PossibleXeCores) {
  mmio::SimConfig c;
  c.platform = platform_of(0x56A5);
  mmio::SimGpu sim(c, clock_);
  auto i915 = make_sim_i915_query(sim);
  const oa::Topology t = query_topology(*i915);
  EXPECT_EQ(t.max_slices, 1);
  EXPECT_EQ(t.max_subslices, 32);
  EXPECT_EQ(t.max_eus_per_subslice, 16);
  EXPECT_EQ(t.subslices, 8);
  EXPECT_EQ(t.subslice_mask, 0xFFu);
  EXPECT_EQ(t.eus, 128);
}

// A query that fails leaves the table's topology, with the reason; the timestamp frequency then
// comes from the clock registers when they are mapped.
TEST_F(SimI915QueryTest, FallsBackToTheTableAndTheRegisters) {
  class Refusing final : public I915Query {
   public:
    std::string describe() const override { return "refusing i915"; }
    int query(drm_i915_query&) override { return -ENODEV; }
    int get_param(drm_i915_getparam&) override { return -EINVAL; }
  } refusing;
  mmio::SimConfig c;
  c.platform = platform_of(0x8A52);  // Ice Lake: its crystal is read, not assumed
  c.timestamp_registers = mmio::TimestampRegisters{0, (2u << 3) | (3u << 1), 0};  // 38.4 MHz
  c.platform.timestamp_hz = 38.4e6;
  mmio::SimGpu sim(c, clock_);
  oa::DeviceFacts f = read_device_facts(c.platform, &refusing, "", &sim);
  EXPECT_TRUE(f.topology_from_table());
  EXPECT_EQ(f.topology.eus, c.platform.eus);
  EXPECT_THAT(f.topology_note, HasSubstr("refusing i915: DRM_IOCTL_I915_QUERY failed"));
  EXPECT_EQ(f.timestamp_source, oa::TimestampSource::kRegisters);
  EXPECT_EQ(f.timestamp_hz, 38.4e6);
  // Without registers either: the table's, and why.
  f = read_device_facts(platform_of(0x8A52), nullptr, "no render node", nullptr);
  EXPECT_EQ(f.timestamp_source, oa::TimestampSource::kPlatformTable);
  EXPECT_EQ(f.timestamp_hz, platform_of(0x8A52).timestamp_hz);
  EXPECT_EQ(f.timestamp_note, "no render node");
}

// Opening a simulated device asks its i915: the platform then has the part's 23 EUs, and every
// equation variable follows.
TEST_F(SimI915QueryTest, OpeningADeviceReadsItsFacts) {
  DeviceOptions o;
  o.spec = oaprof::gpu::DeviceSpec::sim();
  o.sim = fused();
  o.forcewake.mode = mmio::ForcewakeMode::kNone;
  Device d = open_device(o);
  EXPECT_EQ(d.facts.topology_source, oa::TopologySource::kI915Query);
  EXPECT_EQ(d.platform.eus, 23);
  EXPECT_EQ(d.facts.timestamp_source, oa::TimestampSource::kI915GetParam);
  EXPECT_EQ(oa::device_variables(d.platform, d.facts).eu_cores_total, 23u);
  // Without an i915: the table's 24 EUs (flagged downstream), the clock from the registers.
  o.sim.i915 = false;
  d = open_device(o);
  EXPECT_TRUE(d.facts.topology_from_table());
  EXPECT_EQ(d.platform.eus, 24);
  EXPECT_THAT(d.facts.topology_note, HasSubstr("--sim-no-i915"));
  EXPECT_EQ(d.facts.timestamp_source, oa::TimestampSource::kRegisters);
  EXPECT_EQ(d.platform.timestamp_hz, 12e6);
}

// A Gen12 part without i915: its timestamp frequency is its crystal's, not the table's 19.2 MHz.
TEST_F(SimI915QueryTest, AGen12ClockComesFromRpmConfig0WithoutI915AndFromGetparamWithIt) {
  mmio::SimConfig c;
  c.platform = platform_of(0x9A49);  // Tiger Lake GT2
  c.platform.timestamp_hz = 19.2e6;  // 38.4 MHz >> 1
  c.timestamp_registers = mmio::TimestampRegisters{0, (2u << 3) | (2u << 1), 0};
  c.i915 = false;
  Device d = make_sim_device(std::make_unique<mmio::ManualClock>(), c);
  EXPECT_EQ(d.facts.timestamp_source, oa::TimestampSource::kRegisters);
  EXPECT_EQ(d.platform.timestamp_hz, 19.2e6);
  EXPECT_THAT(d.facts.timestamp_note, HasSubstr("38.4 MHz crystal"));
  c.platform.timestamp_hz = 38.4e6;  // a part whose i915 says 38.4 MHz
  c.timestamp_registers = mmio::TimestampRegisters{0, (2u << 3) | (3u << 1), 0};
  c.i915 = true;
  d = make_sim_device(std::make_unique<mmio::ManualClock>(), c);
  EXPECT_EQ(d.facts.timestamp_source, oa::TimestampSource::kI915GetParam);
  EXPECT_EQ(d.platform.timestamp_hz, 38.4e6);
}

// I915_PARAM_OA_TIMESTAMP_FREQUENCY as i915_perf_oa_timestamp_frequency() answers it: on
// Meteor Lake the CS rate << (3 - RPM_CONFIG0's CTC shift), the 38.4 MHz crystal at every shift
// (the CS rate is 38.4 MHz >> (3 - shift)); on Tiger Lake the CS rate. A kernel without the
// parameter (EINVAL) gives the CS rate, saying why.
TEST_F(SimI915QueryTest, TheOaTimestampRateIgnoresTheCtcShiftOnMeteorLake) {
  for (const std::uint32_t shift : {1u, 2u, 3u}) {
    mmio::SimConfig c;
    c.platform = platform_of(0x7D55);  // Meteor Lake
    c.platform.timestamp_hz = 38.4e6 / (1 << (3 - shift));
    c.timestamp_registers = mmio::TimestampRegisters{0, (2u << 3) | (shift << 1), 0};
    mmio::SimGpu sim(c, clock_);
    auto i915 = make_sim_i915_query(sim);
    EXPECT_EQ(query_cs_timestamp_hz(*i915), c.platform.timestamp_hz) << "shift " << shift;
    const OaTimestampRate oa = query_oa_timestamp_hz(*i915);
    EXPECT_EQ(oa.hz, 38.4e6) << "shift " << shift;
    EXPECT_THAT(oa.how, HasSubstr("I915_PARAM_OA_TIMESTAMP_FREQUENCY on simulated i915"));
    // i915's sampling period: (2 << exponent) OA ticks, 2^17 / 38.4 MHz at exponent 16.
    EXPECT_DOUBLE_EQ(perf_period_ns(16, oa.hz), 131072 / 38.4e6 * 1e9);
  }
  mmio::SimConfig tgl;
  tgl.platform = platform_of(0x9A49);
  tgl.platform.timestamp_hz = 19.2e6;
  tgl.timestamp_registers = mmio::TimestampRegisters{0, (2u << 3) | (2u << 1), 0};
  mmio::SimGpu sim(tgl, clock_);
  auto i915 = make_sim_i915_query(sim);
  EXPECT_EQ(query_oa_timestamp_hz(*i915).hz, 19.2e6);
}

class NoOaTimestampParam final : public I915Query {
 public:
  std::string describe() const override { return "a 6.1 i915"; }
  int query(drm_i915_query&) override { return -EINVAL; }
  int get_param(drm_i915_getparam& p) override {
    if (p.param != I915_PARAM_CS_TIMESTAMP_FREQUENCY) return -EINVAL;
    *p.value = 12'000'000;
    return 0;
  }
};

TEST(OaTimestampRate, AKernelBefore62GivesTheCsRateAndSaysWhy) {
  NoOaTimestampParam i915;
  const OaTimestampRate oa = query_oa_timestamp_hz(i915);
  EXPECT_EQ(oa.hz, 12e6);
  EXPECT_THAT(oa.how, HasSubstr("I915_PARAM_CS_TIMESTAMP_FREQUENCY on a 6.1 i915: its kernel "
                                "predates I915_PARAM_OA_TIMESTAMP_FREQUENCY"));
}

}  // namespace
}  // namespace oaprof::gpu
