#include "oa/topology.h"

#include "oa/device_facts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "tests/oa/topology_buffer.h"

namespace oaprof::oa {
namespace {

using testing::topology_buffer;

std::uint64_t eval_slice_core(const DeviceVariables& v, int slice, int core) {
  const std::string text = "$GtSlice" + std::to_string(slice) + "XeCore" + std::to_string(core);
  return Equation::compile(text).evaluate({CounterDeltas{}, v}).u;
}

std::uint64_t eval_variable(const DeviceVariables& v, const std::string& name) {
  return Equation::compile("$" + name).evaluate({CounterDeltas{}, v}).u;
}

// Xe2 under xe (issue 30, item 5), as Intel's metrics-discovery computes these on xe
// (intel/metrics-discovery 80cc115575f1): $SliceTotalCount counts the groups of 4 Xe-cores of
// the DSS mask with any core enabled (instrumentation/metrics_discovery/linux/
// md_driver_ifc_linux_xe.cpp GetSliceMask, lines 1297-1317, with GetGtMaxSubslicePerSlice() =
// MD_SUBSLICE_PER_SLICE_XE2 = 4 for LNL and BMG, md_driver_ifc_linux_common.cpp line 3108 and
// md_driver_ifc_linux_common.h line 80); $VectorEngineThreadsCount is 8 (md_gfx_device_info.h
// threadsPerEuMap, lines 228-229). IGT's xe library has one slice and 7 threads (lib/xe/xe_oa.c
// @ b3d809d537fe lines 467 and 256): the values here are metrics-discovery's.
TEST(TopologyTest, Xe2SlicesAreGroupsOfFourXeCoresWithEightThreadsPerVectorEngine) {
  struct Case {
    const char* platform;
    std::uint64_t xe_cores;  // the DSS mask xe reports
    std::uint64_t slices;
  };
  for (const Case& c :
       {Case{"lnl", 0xFF, 2}, Case{"bmg", 0xFFFFF, 5}, Case{"bmg", 0xF0F0F, 3},
        Case{"bmg", 0x0F00F, 2}, Case{"bmg", 0x11111, 5}, Case{"bmg", 0xFFFFFFFF, 8}}) {
    Topology t;  // as gpu::topology_from_xe lays xe's masks out: one slice of Xe-cores
    t.max_slices = 1;
    t.max_subslices = 32;
    t.max_eus_per_subslice = 8;
    t.slice_mask = 1;
    t.slices = 1;
    t.subslice_mask = c.xe_cores;
    t.subslices = std::popcount(c.xe_cores);
    t.eus = 8 * t.subslices;
    const DeviceVariables v = device_variables(*platform_by_name(c.platform), t);
    EXPECT_EQ(eval_variable(v, "SliceTotalCount"), c.slices)
        << c.platform << " 0x" << std::hex << c.xe_cores;
    EXPECT_EQ(eval_variable(v, "VectorEngineThreadsCount"), 8u) << c.platform;
  }
}

TEST(TopologyTest, KabyLakeGt2WithAFusedOffEu) {
  // 1 slice, 3 subslices of 8 EUs, one EU fused off in subslice 1.
  const auto buf = topology_buffer(3, 4, 8, {{0xFF, 0x7F, 0xFF, 0x00}});
  const Topology t = parse_topology(buf);
  EXPECT_EQ(t.slices, 1);
  EXPECT_EQ(t.subslices, 3);
  EXPECT_EQ(t.eus, 23);
  EXPECT_EQ(t.slice_mask, 1u);
  EXPECT_EQ(t.subslice_mask, 0b111u);
  const Platform p = apply_topology(*platform_by_name("kblgt2"), t);
  EXPECT_EQ(p.eus, 23);
  const DeviceVariables v = device_variables(p, t);
  EXPECT_EQ(v.eu_cores_total, 23u);
  EXPECT_EQ(v.eu_subslices_total, 3u);
  EXPECT_EQ(v.timestamp_frequency_hz, 12'000'000u);
  EXPECT_EQ(v.gpu_max_freq_hz, 1'150'000'000u);
}

TEST(TopologyTest, TwoSlicesFlattenSubslicesPerSlice) {
  const auto buf = topology_buffer(2, 3, 8, {{0xFF, 0xFF, 0xFF}, {0xFF, 0x00, 0xFF}});
  const Topology t = parse_topology(buf);
  EXPECT_EQ(t.slices, 2);
  EXPECT_EQ(t.subslices, 5);
  EXPECT_EQ(t.eus, 40);
  EXPECT_EQ(t.slice_mask, 0b11u);
  EXPECT_EQ(t.subslice_mask, 0b101111u);  // slice 1's subslice 1 is bit 4, absent
}

TEST(TopologyTest, MalformedBuffersAreRefused) {
  EXPECT_THROW(parse_topology(std::vector<std::uint8_t>(8)), std::invalid_argument);
  auto buf = topology_buffer(1, 3, 8, {{0xFF, 0xFF, 0xFF}});
  auto truncated = buf;
  truncated.resize(truncated.size() - 1);
  EXPECT_THROW(parse_topology(truncated), std::invalid_argument);
  auto bad_offset = buf;
  bad_offset[12] = 0xFF;  // eu_offset far past the end
  bad_offset[13] = 0x7F;
  EXPECT_THROW(parse_topology(bad_offset), std::invalid_argument);
  auto bad_stride = buf;
  bad_stride[14] = 0;  // EU stride 0 for 8 EUs
  EXPECT_THROW(parse_topology(bad_stride), std::invalid_argument);
  auto too_many = buf;
  too_many[2] = 65;  // 65 slices
  EXPECT_THROW(parse_topology(too_many), std::invalid_argument);
}

TEST(TopologyTest, DefaultsWithoutAQuery) {
  const DeviceVariables v = device_variables(*platform_by_name("kblgt3"));
  EXPECT_EQ(v.eu_cores_total, 48u);
  EXPECT_EQ(v.slice_mask, 0b11u);
  EXPECT_EQ(v.subslice_mask, 0b111111u);
  EXPECT_EQ(v.dual_subslice_mask, 0u);
  const DeviceVariables tgl = device_variables(*platform_by_name("tglgt2"));
  EXPECT_EQ(tgl.dual_subslice_mask, 0b111111u);
  EXPECT_EQ(tgl.eu_dual_subslices_total, 6u);
}

TEST(TopologyTest, Gen9SubsliceMaskHasThreeBitsPerSlice) {
  // i915 reports Gen9 big cores with max_subslices 4 (gt/intel_sseu.c gen9_sseu_info_init),
  // while IGT and Mesa build $SubsliceMask with 3 bits per slice before Gen11.
  const auto buf = topology_buffer(3, 4, 8, {{0xFF, 0xFF, 0xFF, 0}, {0xFF, 0xFF, 0xFF, 0}});
  const Topology t = parse_topology(buf);
  EXPECT_EQ(t.subslice_mask, 0b01110111u);  // the query's own numbering
  const DeviceVariables v = device_variables(*platform_by_name("sklgt3"), t);
  EXPECT_EQ(v.slice_mask, 0b11u);
  EXPECT_EQ(v.subslice_mask, 0b111111u);
  EXPECT_EQ(v.eu_subslices_total, 6u);
  EXPECT_EQ(v.eu_slices_total, 2u);
  // Gen11+ keeps 8 bits per slice.
  const auto icl = topology_buffer(1, 8, 8, {{0xFF, 0xFF, 0, 0xFF, 0, 0, 0, 0}});
  EXPECT_EQ(device_variables(*platform_by_name("icl"), parse_topology(icl)).subslice_mask, 0b1011u);
}

TEST(TopologyTest, XeLpgRegroupsXeCoresIntoSlicesOfFour) {
  // i915 reports one slice of Xe-cores; Mesa's update_from_single_slice_topology rebuilds
  // slices of 4, which $SliceMask and $GtSlice<N>XeCore<M> follow.
  const auto buf =
      topology_buffer(1, 8, 16, {{0xFFFF, 0xFFFF, 0, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF}});
  const Platform mtl = *platform_by_name("mtlgt3");
  const DeviceVariables v = device_variables(mtl, parse_topology(buf));
  EXPECT_EQ(v.slice_mask, 0b11u);
  EXPECT_EQ(v.subslice_mask, 0x0F0Bu);
  EXPECT_EQ(v.dual_subslice_mask, 0x0F0Bu);
  EXPECT_EQ(v.eu_subslices_total, 7u);
  EXPECT_EQ(v.eu_dual_subslices_total, 7u);
  EXPECT_EQ(v.eu_cores_total, 112u);
  EXPECT_EQ(v.eu_threads_count, 8u);
  EXPECT_EQ(eval_slice_core(v, 1, 0), 1u);
  const DeviceVariables gt2 = device_variables(*platform_by_name("mtlgt2"));
  EXPECT_EQ(gt2.slice_mask, 1u);
  EXPECT_EQ(gt2.subslice_mask, 0xFu);
  EXPECT_EQ(gt2.eu_cores_total, 64u);
}

// encode_topology lays the masks out as i915's query_topology_info does, so parse reads back the
// same part, and the two hand-laid buffers of this file agree with it.
TEST(TopologyTest, EncodeWritesWhatI915WritesAndParseReadsItBack) {
  const std::vector<std::uint32_t> masks = {0xFF, 0x7F, 0xFF, 0x00};
  EXPECT_EQ(encode_topology(1, 4, 8, masks), topology_buffer(1, 4, 8, {{0xFF, 0x7F, 0xFF, 0x00}}));
  const std::vector<std::uint32_t> two = {0xFFFF, 0x0, 0xFFFF, 0xFFFF, 0x0F0F, 0x0};  // 2 × 3
  const Topology t = parse_topology(encode_topology(2, 3, 16, two));
  EXPECT_EQ(t.slices, 2);
  EXPECT_EQ(t.subslices, 4);
  EXPECT_EQ(t.eus, 16 + 16 + 16 + 8);
  EXPECT_EQ(t.subslice_mask, 0b011101u);
  EXPECT_THROW(encode_topology(1, 4, 8, two), std::invalid_argument);
  EXPECT_THROW(encode_topology(9, 1, 8, std::vector<std::uint32_t>(9, 1)), std::invalid_argument);
}

TEST(DeviceFactsTest, TheTableTopologyAndItsFlag) {
  const Platform kbl = *platform_by_name("kblgt2");
  const DeviceFacts f = table_facts(kbl, "no render node");
  EXPECT_TRUE(f.topology_from_table());
  EXPECT_EQ(f.topology.eus, 24);
  EXPECT_EQ(f.topology.subslices, 3);
  EXPECT_EQ(f.topology.subslice_mask, 0x7u);
  EXPECT_EQ(f.timestamp_hz, 12e6);
  EXPECT_EQ(describe_topology(f.topology),
            "24 EUs, 3 subslices in 1 slice (slice mask 0x1, subslice mask 0x7)");
}

// --eus/--subslices for offline work: the equations read them, the source says "options".
TEST(DeviceFactsTest, OptionsOverrideTheTableForOfflineWork) {
  const Platform kbl = *platform_by_name("kblgt2");
  DeviceFacts f = facts_from_options(kbl, 23, 0);
  EXPECT_EQ(f.topology_source, TopologySource::kOptions);
  EXPECT_FALSE(f.topology_from_table());
  EXPECT_EQ(device_variables(kbl, f).eu_cores_total, 23u);
  EXPECT_EQ(device_variables(kbl, f).eu_subslices_total, 3u);
  EXPECT_EQ(apply_facts(kbl, f).eus, 23);
  f = facts_from_options(kbl, 0, 2);
  EXPECT_EQ(device_variables(kbl, f).eu_subslices_total, 2u);
  EXPECT_EQ(device_variables(kbl, f).subslice_mask, 0x3u);
  EXPECT_TRUE(facts_from_options(kbl, 0, 0).topology_from_table());
  EXPECT_THROW(facts_from_options(kbl, 2, 3), std::invalid_argument);    // fewer EUs than subslices
  EXPECT_THROW(facts_from_options(kbl, 100, 3), std::invalid_argument);  // 34 per subslice
  EXPECT_THROW(facts_from_options(kbl, -1, 0), std::invalid_argument);
}

TEST(TopologyTest, ThreadsPerEuComeFromThePlatform) {
  // Mesa intel_device_info.c: GFX9_LP_FEATURES (Broxton, Gemini Lake) have 6 threads per EU,
  // the other Gen8–12 parts 7.
  EXPECT_EQ(device_variables(*platform_for_pci_id(0x5A85)).eu_threads_count, 6u);  // APL
  EXPECT_EQ(device_variables(*platform_for_pci_id(0x3184)).eu_threads_count, 6u);  // GLK
  EXPECT_EQ(device_variables(*platform_for_pci_id(0x5916)).eu_threads_count, 7u);  // KBL
  EXPECT_EQ(device_variables(*platform_for_pci_id(0x9A49)).eu_threads_count, 7u);  // TGL
}

}  // namespace
}  // namespace oaprof::oa
