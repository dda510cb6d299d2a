#include "oa/device_facts.h"

#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::oa {
namespace {

// EUs per subslice on any part oaprof knows is at most 16 (Gen12 dual subslices); a larger
// request is a typo.
constexpr int kMaxEusPerSubslice = 16;

// `eus` spread over `subslices` (the first ones get the remainder), `subslices` over `slices`.
Topology even_topology(int slices, int subslices, int eus) {
  Topology t;
  t.max_slices = slices;
  t.max_subslices = (subslices + slices - 1) / slices;
  t.max_eus_per_subslice = (eus + subslices - 1) / subslices;
  for (int s = 0; s < slices; ++s) t.slice_mask |= std::uint64_t{1} << s;
  for (int i = 0; i < subslices; ++i) {
    const int s = i / t.max_subslices, ss = i % t.max_subslices;
    t.subslice_mask |= std::uint64_t{1} << (s * t.max_subslices + ss);
  }
  t.slices = slices;
  t.subslices = subslices;
  t.eus = eus;
  return t;
}

}  // namespace

std::string_view topology_source_name(TopologySource source) {
  switch (source) {
    case TopologySource::kI915Query:
      return "i915 query";
    case TopologySource::kPlatformTable:
      return "platform table";
    case TopologySource::kOptions:
      return "options";
    case TopologySource::kXeQuery:
      return "xe query";
  }
  return "unknown";
}

std::string_view timestamp_source_name(TimestampSource source) {
  switch (source) {
    case TimestampSource::kI915GetParam:
      return "i915 getparam";
    case TimestampSource::kRegisters:
      return "registers";
    case TimestampSource::kPlatformTable:
      return "platform table";
    case TimestampSource::kXeOaUnit:
      return "xe OA unit";
  }
  return "unknown";
}

Topology table_topology(const Platform& platform) {
  const int slices = platform.slices > 0 ? platform.slices : 1;
  const int subslices = platform.subslices > 0 ? platform.subslices : 1;
  return even_topology(slices, subslices, platform.eus);
}

DeviceFacts table_facts(const Platform& platform, std::string note) {
  DeviceFacts f;
  f.topology = table_topology(platform);
  f.topology_source = TopologySource::kPlatformTable;
  f.topology_note = note;
  f.timestamp_hz = platform.timestamp_hz;
  // The table's Xe-LPG and DG2 rate is the CS rate at CTC shift 2 (mmio::crystal_registers_for),
  // where the OA timestamp runs at twice it and the shifted delta at the CS rate.
  f.oa_cs_shift = is_xehp_oa(platform.gen) ? 1 : 0;
  f.timestamp_source = TimestampSource::kPlatformTable;
  f.timestamp_note = std::move(note);
  return f;
}

DeviceFacts facts_from_options(const Platform& platform, int eus, int subslices) {
  if (eus < 0 || subslices < 0) {
    throw std::invalid_argument("--eus and --subslices take a positive count");
  }
  const int ss = subslices > 0 ? subslices : platform.subslices;
  const int e = eus > 0 ? eus : platform.eus;
  const int slices = platform.slices > 0 ? std::min(platform.slices, ss) : 1;
  if (ss > 64 || e < ss || e > ss * kMaxEusPerSubslice) {
    throw std::invalid_argument(fmt::format(
        "--eus {} in --subslices {}: a part has 1 to {} EUs in each of at most 64 subslices; "
        "give the counts `oaprof doctor` reports for the device that wrote the capture",
        e, ss, kMaxEusPerSubslice));
  }
  DeviceFacts f = table_facts(platform, "");
  if (eus == 0 && subslices == 0) {
    f.topology_note = "no --eus/--subslices: the platform table's";
    return f;
  }
  f.topology = even_topology(slices, ss, e);
  f.topology_source = TopologySource::kOptions;
  f.topology_note = "--eus/--subslices";
  return f;
}

Platform apply_facts(Platform platform, const DeviceFacts& facts) {
  platform = apply_topology(platform, facts.topology);
  if (facts.timestamp_hz > 0) platform.timestamp_hz = facts.timestamp_hz;
  return platform;
}

DeviceVariables device_variables(const Platform& platform, const DeviceFacts& facts) {
  DeviceVariables v = device_variables(apply_facts(platform, facts), facts.topology);
  if (facts.l3_banks) v.set_known("L3BankTotalCount", *facts.l3_banks);
  if (facts.compute_engines) v.set_known("ComputeEngineTotalCount", *facts.compute_engines);
  if (facts.l3_nodes) v.set_known("L3NodeTotalCount", *facts.l3_nodes);
  if (facts.copy_engines) v.set_known("CopyEngineTotalCount", *facts.copy_engines);
  if (facts.sqidis) v.set_known("SqidiTotalCount", *facts.sqidis);
  return v;
}

std::string describe_topology(const Topology& t) {
  return fmt::format("{} EUs, {} subslices in {} slice{} (slice mask 0x{:X}, subslice mask 0x{:X})",
                     t.eus, t.subslices, t.slices, t.slices == 1 ? "" : "s", t.slice_mask,
                     t.subslice_mask);
}

}  // namespace oaprof::oa
