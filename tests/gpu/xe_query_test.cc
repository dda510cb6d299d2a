// xe's OA unit list and GT topology: parsed from the bytes the kernel lays out (xe_uapi.h),
// refused when they are not a well-formed reply, queried in the uapi's two steps, the render OAG
// chosen, and the device's facts taken from them.
#include "gpu/xe/xe_query.h"

#include "gpu/sim/sim_xe_observation.h"
#include "mmio/sim_gpu.h"
#include "oa/device_facts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <ctime>
#include <stdexcept>
#include <string>
#include <vector>

namespace oaprof::gpu {
namespace {

using ::testing::HasSubstr;

struct UnitSpec {
  std::uint32_t id;
  std::uint32_t type;
  std::vector<std::uint16_t> engine_classes;
};

template <typename T>
void append(std::vector<std::uint8_t>& out, const T& value) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

// A reply as xe_query.c writes it: the header, then each unit and its engines.
std::vector<std::uint8_t> reply(const std::vector<UnitSpec>& units) {
  std::vector<std::uint8_t> out;
  append(out, xe::QueryOaUnitsHeader{0, static_cast<std::uint32_t>(units.size()), 0});
  for (const auto& u : units) {
    xe::OaUnitHeader h{};
    h.oa_unit_id = u.id;
    h.oa_unit_type = u.type;
    h.capabilities = xe::kOaCapsBase | xe::kOaCapsSyncs;
    h.oa_timestamp_freq = 19'200'000;
    h.num_engines = u.engine_classes.size();
    append(out, h);
    std::uint16_t instance = 0;
    for (auto c : u.engine_classes) append(out, xe::EngineClassInstance{c, instance++, 0, 0});
  }
  return out;
}

const std::vector<UnitSpec> kLunarLakeLike = {
    {0,
     xe::kOaUnitTypeOag,
     {xe::kEngineClassRender, xe::kEngineClassCompute, xe::kEngineClassCopy}},
    {1, xe::kOaUnitTypeOam, {xe::kEngineClassVideoDecode, xe::kEngineClassVideoEnhance}}};

TEST(XeQueryTest, ParsesEveryUnitAndChoosesTheRenderOag) {
  const auto units = parse_xe_oa_units(reply(kLunarLakeLike));
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(units[0].timestamp_hz, 19'200'000u);
  EXPECT_EQ(units[0].engines.size(), 3u);
  EXPECT_EQ(units[1].type, xe::kOaUnitTypeOam);
  EXPECT_EQ(units[1].engines[1].engine_class, xe::kEngineClassVideoEnhance);
  ASSERT_NE(render_oag(units), nullptr);
  EXPECT_EQ(render_oag(units)->id, 0u);
  // A media unit alone is no unit for OpenCL kernels.
  EXPECT_EQ(render_oag(parse_xe_oa_units(reply({kLunarLakeLike[1]}))), nullptr);
  EXPECT_TRUE(parse_xe_oa_units(reply({})).empty());
}

TEST(XeQueryTest, MalformedRepliesAreRefusedNotReadPast) {
  const auto good = reply(kLunarLakeLike);
  for (std::size_t cut : {std::size_t{0}, std::size_t{8}, std::size_t{40}, good.size() - 1}) {
    EXPECT_THROW((void)parse_xe_oa_units(std::span(good).first(cut)), std::runtime_error) << cut;
  }
  auto trailing = good;
  trailing.push_back(0);
  EXPECT_THROW((void)parse_xe_oa_units(trailing), std::runtime_error);
  auto many_units = good;
  const std::uint32_t huge = 1'000'000;
  std::memcpy(many_units.data() + 8, &huge, sizeof huge);
  EXPECT_THROW((void)parse_xe_oa_units(many_units), std::runtime_error);
  auto many_engines = good;
  const std::uint64_t engines = std::uint64_t{1} << 61;  // would overflow a byte count
  std::memcpy(many_engines.data() + 16 + 64, &engines, sizeof engines);
  try {
    (void)parse_xe_oa_units(many_engines);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("more than 256"));
  }
}

// Answers as xe's query ioctl does: the size when asked with 0, then the data.
class FakeXe final : public XeQuery {
 public:
  explicit FakeXe(std::vector<std::uint8_t> answer, int fail_at = -1)
      : answer_(std::move(answer)), fail_at_(fail_at) {}
  std::string describe() const override { return "fake xe"; }
  int device_query(xe::DeviceQuery& q) override {
    if (calls_++ == fail_at_) return -EINVAL;
    if (q.query != xe::kQueryOaUnits) return -EINVAL;
    if (q.size == 0) {
      q.size = static_cast<std::uint32_t>(answer_.size());
      return 0;
    }
    if (q.size != answer_.size()) return -EINVAL;
    std::memcpy(reinterpret_cast<void*>(static_cast<std::uintptr_t>(q.data)), answer_.data(),
                answer_.size());
    return 0;
  }
  int calls_ = 0;

 private:
  std::vector<std::uint8_t> answer_;
  int fail_at_;
};

TEST(XeQueryTest, QueriesInTheUapisTwoStepsAndNamesAFailedStep) {
  FakeXe xe(reply(kLunarLakeLike));
  EXPECT_EQ(query_xe_oa_units(xe).size(), 2u);
  EXPECT_EQ(xe.calls_, 2);
  FakeXe failing(reply(kLunarLakeLike), 1);
  try {
    (void)query_xe_oa_units(failing);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("fake xe: DRM_XE_DEVICE_QUERY_OA_UNITS (data) failed"));
  }
  FakeXe empty({});
  EXPECT_THROW((void)query_xe_oa_units(empty), std::runtime_error);
}

TEST(XeQueryTest, TheIoctlNumberIsDrmIowrOfTheQueryStruct) {
  // DRM_IOWR(DRM_COMMAND_BASE + 0x00, struct drm_xe_device_query): dir read|write, size 40,
  // type 'd', nr 0x40.
  EXPECT_EQ(xe::kIoctlDeviceQuery, 0xC0286440ul);
}

// One topology mask as xe_query.c copy_mask writes it: gt_id, type, num_bytes, then the bytes.
void mask(std::vector<std::uint8_t>& out, std::uint16_t gt, std::uint16_t type,
          std::vector<std::uint8_t> bytes) {
  append(out, gt);
  append(out, type);
  append(out, static_cast<std::uint32_t>(bytes.size()));
  out.insert(out.end(), bytes.begin(), bytes.end());
}

// A two-GT part as xe answers GT_TOPOLOGY: GT 0 with 8 Xe-cores split between the geometry and
// compute masks, 16 L3 banks and 8 SIMD16 EUs each; a media GT 1 with no Xe-core and no L3 mask.
std::vector<std::uint8_t> topology_reply() {
  std::vector<std::uint8_t> out;
  const std::vector<std::uint8_t> zeros(16, 0);
  mask(out, 0, xe::kTopoDssGeometry, {0x0f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  mask(out, 0, xe::kTopoDssCompute, {0xf0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  mask(out, 0, xe::kTopoL3Bank, {0xff, 0xff, 0, 0, 0, 0, 0, 0});
  mask(out, 0, xe::kTopoSimd16EuPerDss, {0xff, 0, 0, 0, 0, 0, 0, 0});
  mask(out, 1, xe::kTopoDssGeometry, zeros);
  mask(out, 1, xe::kTopoDssCompute, zeros);
  mask(out, 1, xe::kTopoSimd16EuPerDss, {0xff, 0, 0, 0, 0, 0, 0, 0});
  return out;
}

TEST(XeTopologyTest, TakesTheGtsMasksAsXeWritesThem) {
  const XeGtTopology t = parse_xe_gt_topology(topology_reply(), 0);
  EXPECT_EQ(t.dss_mask, 0xffu);  // geometry | compute, as IGT's xe_fill_topology_info
  EXPECT_EQ(t.dss_bits, 64);     // 16 bytes wide, of which oaprof keeps 64 bits
  EXPECT_EQ(t.eu_mask, 0xffu);
  EXPECT_TRUE(t.simd16);
  ASSERT_TRUE(t.l3_bank_mask.has_value());
  EXPECT_EQ(*t.l3_bank_mask, 0xffffu);
  const XeGtTopology media = parse_xe_gt_topology(topology_reply(), 1);
  EXPECT_EQ(media.dss_mask, 0u);
  EXPECT_FALSE(media.l3_bank_mask.has_value());  // left out, as xe does under no_media_l3
  // A mask type newer than oaprof is skipped, not refused.
  auto newer = topology_reply();
  mask(newer, 0, 99, {1});
  EXPECT_EQ(parse_xe_gt_topology(newer, 0).dss_mask, 0xffu);
  // The simulated xe's own encoding parses back to what it meant.
  XeGtTopology sim;
  sim.dss_mask = 0x3f;
  sim.eu_mask = 0xff;
  sim.l3_bank_mask = 0xf;
  const XeGtTopology back = parse_xe_gt_topology(encode_xe_gt_topology(sim, 16), 0);
  EXPECT_EQ(back.dss_mask, 0x3fu);
  EXPECT_EQ(back.l3_bank_mask, 0xfu);
}

TEST(XeTopologyTest, MalformedRepliesAreRefusedNotReadPast) {
  const auto good = topology_reply();
  for (std::size_t cut : {std::size_t{4}, std::size_t{12}, good.size() - 1}) {
    EXPECT_THROW((void)parse_xe_gt_topology(std::span(good).first(cut), 0), std::runtime_error)
        << cut;
  }
  const auto refusal = [](const std::vector<std::uint8_t>& bytes, std::uint16_t gt = 0) {
    try {
      (void)parse_xe_gt_topology(bytes, gt);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::vector<std::uint8_t> wide;
  mask(wide, 0, xe::kTopoDssGeometry, std::vector<std::uint8_t>(65, 0));
  EXPECT_THAT(refusal(wide), HasSubstr("wider than 64"));
  std::vector<std::uint8_t> many;
  for (int i = 0; i < 65; ++i) mask(many, 0, xe::kTopoL3Bank, {1});
  EXPECT_THAT(refusal(many), HasSubstr("more than 64 masks"));
  std::vector<std::uint8_t> past;
  mask(past, 0, xe::kTopoDssGeometry, {0, 0, 0, 0, 0, 0, 0, 0, 1});
  mask(past, 0, xe::kTopoEuPerDss, {0xff});
  EXPECT_THAT(refusal(past), HasSubstr("DSS past the 64th"));
  std::vector<std::uint8_t> no_eus;
  mask(no_eus, 0, xe::kTopoDssGeometry, {0xff});
  EXPECT_THAT(refusal(no_eus), HasSubstr("GT 0 has no EU mask"));
  EXPECT_THAT(refusal(topology_reply(), 7), HasSubstr("GT 7 has no DSS mask"));
  std::vector<std::uint8_t> huge_count = good;
  const std::uint32_t bytes = 0xffffffffu;
  std::memcpy(huge_count.data() + 4, &bytes, sizeof bytes);
  EXPECT_THAT(refusal(huge_count), HasSubstr("wider than 64"));
}

// The device's facts come from xe's queries, as on hardware: the OAG's GT, its Xe-cores and EUs,
// its timestamp rate and its L3 banks, which make $L3BankTotalCount known.
TEST(XeTopologyTest, TheSimulatedXeGivesTheFactsXesQueriesWould) {
  mmio::ManualClock clock;
  const oa::Platform lnl = *oa::platform_by_name("lnl");
  SimXeDevice device(lnl, clock, SimXeOptions{.xe_cores = 6, .l3_banks = 4});
  const auto query = make_sim_xe_query(device);
  const oa::DeviceFacts f = read_xe_device_facts(lnl, query.get(), "");
  EXPECT_EQ(f.topology_source, oa::TopologySource::kXeQuery);
  EXPECT_FALSE(f.topology_from_table());
  EXPECT_EQ(f.topology.subslices, 6);
  EXPECT_EQ(f.topology.eus, 6 * lnl.eus / lnl.subslices);  // two Xe-cores fused off
  EXPECT_EQ(f.timestamp_source, oa::TimestampSource::kXeOaUnit);
  EXPECT_EQ(f.timestamp_hz, lnl.timestamp_hz);
  ASSERT_EQ(f.l3_banks, std::optional<std::uint64_t>(4));
  const oa::DeviceVariables vars = oa::device_variables(lnl, f);
  EXPECT_TRUE(vars.known("L3BankTotalCount"));
  EXPECT_EQ(vars.l3_bank_total, 4u);
  EXPECT_EQ(vars.xe_core_mask, 0x3fu);
  EXPECT_TRUE(vars.known("ComputeEngineTotalCount"));  // the OAG's compute engines
  EXPECT_EQ(vars.compute_engine_total, 1u);
  // Four banks are one L3 node, one copy engine and one SQIDI (xe_l3_counts).
  EXPECT_EQ(vars.l3_node_total, 1u);
  EXPECT_EQ(vars.copy_engine_total, 1u);
  EXPECT_EQ(vars.sqidi_total, 1u);
  EXPECT_TRUE(vars.known("SqidiTotalCount"));
  // Without the L3 mask the counts stay unknown, never made-up ones.
  SimXeDevice no_l3(lnl, clock);
  const auto q2 = make_sim_xe_query(no_l3);
  const oa::DeviceVariables none =
      oa::device_variables(lnl, read_xe_device_facts(lnl, q2.get(), ""));
  for (const char* name :
       {"L3BankTotalCount", "L3NodeTotalCount", "CopyEngineTotalCount", "SqidiTotalCount"}) {
    EXPECT_FALSE(none.known(name)) << name;
  }
  // xe not asked: the table's facts, with the reason.
  const oa::DeviceFacts table = read_xe_device_facts(lnl, nullptr, "no render node");
  EXPECT_TRUE(table.topology_from_table());
  EXPECT_EQ(table.topology_note, "no render node");
}

// metrics-discovery's grouping (md_driver_ifc_linux_xe.cpp @ intel/metrics-discovery
// 80cc115575f1, GetL3NodeMask, GetCopyEngineMask, GetSqidiTotalCount): 4 banks a node with any
// enabled, 2 nodes a copy engine with any enabled, a SQIDI a node; none on Panther Lake, where
// small SKUs have 2 whatever their nodes.
TEST(XeTopologyTest, L3NodesCopyEnginesAndSqidisAreMetricsDiscoverysGroupsOfTheBankMask) {
  const oa::Platform lnl = *oa::platform_by_name("lnl");
  const XeL3Counts split = xe_l3_counts(lnl, 0x0F0F);  // banks 0-3 and 8-11: nodes 0 and 2
  EXPECT_EQ(split.l3_nodes, 2u);
  EXPECT_EQ(split.copy_engines, 2u);  // node pairs (0, 1) and (2, 3)
  EXPECT_EQ(split.sqidis, std::optional<std::uint64_t>(2));
  const XeL3Counts one_bank_each = xe_l3_counts(lnl, 0x1111);  // banks 0, 4, 8, 12
  EXPECT_EQ(one_bank_each.l3_nodes, 4u);
  EXPECT_EQ(one_bank_each.copy_engines, 2u);
  const XeL3Counts high = xe_l3_counts(lnl, std::uint64_t{1} << 63);  // the last node only
  EXPECT_EQ(high.l3_nodes, 1u);
  EXPECT_EQ(high.copy_engines, 1u);
  EXPECT_FALSE(xe_l3_counts(*oa::platform_by_name("ptl"), 0xFF).sqidis.has_value());
  EXPECT_EQ(xe_l3_counts(*oa::platform_by_name("ptl"), 0xFF).l3_nodes, 2u);
}

// ENGINE_CYCLES as xe_query.c answers it: the caller's struct filled in place, the engine's
// timestamp (the OA unit's clock on Xe2) beside CLOCK_MONOTONIC, -EINVAL for an engine xe does
// not have, and a wrong size refused.
TEST(XeEngineCyclesTest, TheEnginesTimestampIsTheOaUnitsClockBesideTheCpus) {
  mmio::ManualClock clock;
  clock.advance_ns(1'000'000'000);
  const oa::Platform lnl = *oa::platform_by_name("lnl");
  SimXeDevice device(lnl, clock);
  const auto query = make_sim_xe_query(device);
  const XeOaUnit oag = *render_oag(device.oa_units());
  const XeEngineCycles c = query_xe_engine_cycles(*query, oag.engines.front());
  EXPECT_EQ(c.width, 64);
  EXPECT_EQ(c.cpu_ns, 1'000'000'000u);
  // One second of the 19.2 MHz timestamp past the counter's base.
  EXPECT_EQ(c.engine_cycles - device.options().timestamp_base_ticks,
            static_cast<std::uint64_t>(lnl.timestamp_hz));
  xe::EngineClassInstance absent{xe::kEngineClassRender, 7, 0, 0};
  EXPECT_THAT([&] { query_xe_engine_cycles(*query, absent); },
              ::testing::ThrowsMessage<std::runtime_error>(HasSubstr(
                  "ENGINE_CYCLES for engine class 0 instance 7 on GT 0 failed: Invalid")));
  xe::QueryEngineCycles raw;
  raw.eci = oag.engines.front();
  raw.clockid = CLOCK_MONOTONIC;
  xe::DeviceQuery q;
  q.query = xe::kQueryEngineCycles;
  q.data = reinterpret_cast<std::uintptr_t>(&raw);
  ASSERT_EQ(query->device_query(q), 0);  // size 0: xe says the size it wants
  EXPECT_EQ(q.size, sizeof raw);
  q.size = sizeof raw - 8;
  EXPECT_EQ(query->device_query(q), -EINVAL);
  raw.clockid = 12345;  // not a clock xe maps
  q.size = sizeof raw;
  EXPECT_EQ(query->device_query(q), -EINVAL);
}

TEST(XeEngineCyclesTest, AtOrAfterHoldsAcrossTheCountersWrap) {
  EXPECT_EQ(ticks_at_or_after(10, 10, 64), 0u);
  EXPECT_EQ(ticks_at_or_after(11, 10, 64), 1u);
  EXPECT_FALSE(ticks_at_or_after(9, 10, 64));
  const std::uint64_t top36 = (1ull << 36) - 1;
  EXPECT_EQ(ticks_at_or_after(3, top36 - 2, 36), 6u);  // wrapped past 2^36
  EXPECT_FALSE(ticks_at_or_after(top36 - 2, 3, 36));   // before the wrap
  EXPECT_EQ(ticks_at_or_after(5, 0, 0), 5u);           // no width given: 64 bits
  EXPECT_FALSE(ticks_at_or_after(0, 5, 0));
}

}  // namespace
}  // namespace oaprof::gpu
