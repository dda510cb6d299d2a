// What oaprof learns from the device itself when it opens it — its fused topology and its
// timestamp clock — and where each came from, so that every equation, peak and output uses the
// part's own figures and says when they are only the platform table's (a UHD 630 with one EU
// fused off has 23, not the table's 24).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "oa/equation.h"
#include "oa/platform.h"
#include "oa/topology.h"

namespace oaprof::oa {

enum class TopologySource : std::uint8_t {
  kI915Query = 0,      // DRM_I915_QUERY_TOPOLOGY_INFO
  kPlatformTable = 1,  // the PCI id's defaults: rows are flagged topology_from_table
  kOptions = 2,        // --eus/--subslices (offline work)
  kXeQuery = 3,        // DRM_XE_DEVICE_QUERY_GT_TOPOLOGY
};
enum class TimestampSource : std::uint8_t {
  kI915GetParam = 0,   // I915_PARAM_CS_TIMESTAMP_FREQUENCY
  kRegisters = 1,      // CTC_MODE / RPM_CONFIG0 / TIMESTAMP_OVERRIDE, decoded as i915 does
  kPlatformTable = 2,  // the platform's default
  kXeOaUnit = 3,       // the OA unit's oa_timestamp_freq (DRM_XE_DEVICE_QUERY_OA_UNITS)
};

// "i915 query", "platform table", "options", "xe query"
std::string_view topology_source_name(TopologySource source);
// "i915 getparam", "registers", "platform table", "xe OA unit"
std::string_view timestamp_source_name(TimestampSource source);

struct DeviceFacts {
  Topology topology;
  TopologySource topology_source = TopologySource::kPlatformTable;
  std::string topology_note;  // why the device was not asked, or what it answered instead
  // The rate a report's timestamp delta counts at (oa::report_timestamp_hz): the CS timestamp
  // frequency but on Xe-LPG, where it is the OA timestamp frequency / 2.
  double timestamp_hz = 0;
  // log2(OA timestamp rate / CS timestamp rate): 3 - the CTC shift on Xe-LPG, else 0 (mmio::
  // oa_timestamp_cs_shift). The MMIO and MI_STORE_REGISTER_MEM read-outs scale RING_TIMESTAMP by
  // it to lay out a report's timestamp. Never sent to a client (ipc/wire.h): only the side that
  // reads the registers uses it.
  int oa_cs_shift = 0;
  TimestampSource timestamp_source = TimestampSource::kPlatformTable;
  std::string timestamp_note;  // how it was read, or why it was not
  // The enabled L3 banks where the device said (xe's L3_BANK mask): $L3BankTotalCount.
  std::optional<std::uint64_t> l3_banks;
  // The compute engines its OA unit counts (xe's OA unit query): $ComputeEngineTotalCount.
  std::optional<std::uint64_t> compute_engines;
  // From the L3 bank mask as metrics-discovery groups it on Xe2 (gpu::xe_l3_counts):
  // $L3NodeTotalCount, $CopyEngineTotalCount and $SqidiTotalCount.
  std::optional<std::uint64_t> l3_nodes;
  std::optional<std::uint64_t> copy_engines;
  std::optional<std::uint64_t> sqidis;
  bool topology_from_table() const { return topology_source == TopologySource::kPlatformTable; }
};

// The platform table's layout as a topology: its subslices spread evenly over its slices, its
// EUs evenly over the subslices, every one enabled.
Topology table_topology(const Platform& platform);

// Facts from the platform table alone, with `note` saying why the device was not asked.
DeviceFacts table_facts(const Platform& platform, std::string note);

// The facts for offline work from --eus/--subslices (each 0 for the platform's): EUs spread over
// the subslices as evenly as they go. Throws std::invalid_argument for a layout no part has
// (more EUs than subslices × 16, more than 64 subslices, a count below 1).
DeviceFacts facts_from_options(const Platform& platform, int eus, int subslices);

// The platform with its EU, subslice and slice counts and timestamp frequency replaced by the
// device's.
Platform apply_facts(Platform platform, const DeviceFacts& facts);

// Equation variables of a device from its facts (topology and timestamp frequency).
DeviceVariables device_variables(const Platform& platform, const DeviceFacts& facts);

// "23 EUs, 3 subslices in 1 slice (slice mask 0x1, subslice mask 0x7)"
std::string describe_topology(const Topology& topology);

}  // namespace oaprof::oa
