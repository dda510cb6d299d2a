#include "oa/topology.h"

#include <bit>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace oaprof::oa {
namespace {

constexpr std::size_t kHeaderBytes = 16;

bool bit_set(std::span<const std::uint8_t> data, std::size_t offset, int bit) {
  return (data[offset + static_cast<std::size_t>(bit / 8)] >> (bit % 8)) & 1u;
}

}  // namespace

Topology parse_topology(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < kHeaderBytes) {
    throw std::invalid_argument(fmt::format(
        "topology query: {} bytes is shorter than the 16-byte drm_i915_query_topology_info header",
        bytes.size()));
  }
  std::uint16_t h[8];
  std::memcpy(h, bytes.data(), sizeof h);
  Topology t;
  t.max_slices = h[1];
  t.max_subslices = h[2];
  t.max_eus_per_subslice = h[3];
  const std::size_t subslice_offset = h[4], subslice_stride = h[5];
  const std::size_t eu_offset = h[6], eu_stride = h[7];
  const auto data = bytes.subspan(kHeaderBytes);
  if (t.max_slices > 64 || t.max_slices * t.max_subslices > 64) {
    throw std::invalid_argument(fmt::format(
        "topology query: {} slices of {} subslices exceed the 64 bits oaprof keeps per mask",
        t.max_slices, t.max_subslices));
  }
  const std::size_t slice_bytes = (static_cast<std::size_t>(t.max_slices) + 7) / 8;
  const std::size_t ss_bytes = (static_cast<std::size_t>(t.max_subslices) + 7) / 8;
  const std::size_t eu_bytes = (static_cast<std::size_t>(t.max_eus_per_subslice) + 7) / 8;
  auto need = [&](std::size_t end, const char* what) {
    if (end > data.size()) {
      throw std::invalid_argument(fmt::format(
          "topology query: the {} ends at byte {} of a {}-byte mask area", what, end, data.size()));
    }
  };
  if ((t.max_subslices > 0 && subslice_stride < ss_bytes) ||
      (t.max_eus_per_subslice > 0 && eu_stride < eu_bytes)) {
    throw std::invalid_argument(fmt::format(
        "topology query: strides (subslice {}, EU {}) are smaller than their masks ({}, {} bytes)",
        subslice_stride, eu_stride, ss_bytes, eu_bytes));
  }
  need(slice_bytes, "slice mask");
  for (int s = 0; s < t.max_slices; ++s) {
    if (!bit_set(data, 0, s)) continue;
    t.slice_mask |= std::uint64_t{1} << s;
    ++t.slices;
    const std::size_t ss_at = subslice_offset + static_cast<std::size_t>(s) * subslice_stride;
    need(ss_at + ss_bytes, "subslice mask");
    for (int ss = 0; ss < t.max_subslices; ++ss) {
      if (!bit_set(data, ss_at, ss)) continue;
      t.subslice_mask |= std::uint64_t{1} << (s * t.max_subslices + ss);
      ++t.subslices;
      const std::size_t eu_at =
          eu_offset + (static_cast<std::size_t>(s) * t.max_subslices + ss) * eu_stride;
      need(eu_at + eu_bytes, "EU mask");
      for (int eu = 0; eu < t.max_eus_per_subslice; ++eu) t.eus += bit_set(data, eu_at, eu);
    }
  }
  return t;
}

std::vector<std::uint8_t> encode_topology(int max_slices, int max_subslices,
                                          int max_eus_per_subslice,
                                          std::span<const std::uint32_t> eu_masks) {
  const auto subslice_count =
      static_cast<std::size_t>(max_slices) * static_cast<std::size_t>(max_subslices);
  if (max_slices < 1 || max_slices > 8 || max_subslices < 1 || max_eus_per_subslice < 1 ||
      max_eus_per_subslice > 32 || eu_masks.size() != subslice_count) {
    throw std::invalid_argument(
        fmt::format("encode_topology: {} EU masks for {} slices of {} subslices of up to {} EUs",
                    eu_masks.size(), max_slices, max_subslices, max_eus_per_subslice));
  }
  const auto ss_stride = static_cast<std::uint16_t>((max_subslices + 7) / 8);
  const auto eu_stride = static_cast<std::uint16_t>((max_eus_per_subslice + 7) / 8);
  const std::size_t slice_length = 1;  // i915: sizeof(sseu->slice_mask), a u8
  const std::size_t ss_length = static_cast<std::size_t>(max_slices) * ss_stride;
  const std::uint16_t header[8] = {0,
                                   static_cast<std::uint16_t>(max_slices),
                                   static_cast<std::uint16_t>(max_subslices),
                                   static_cast<std::uint16_t>(max_eus_per_subslice),
                                   static_cast<std::uint16_t>(slice_length),
                                   ss_stride,
                                   static_cast<std::uint16_t>(slice_length + ss_length),
                                   eu_stride};
  std::vector<std::uint8_t> out(kHeaderBytes + slice_length + ss_length +
                                eu_masks.size() * eu_stride);
  std::memcpy(out.data(), header, sizeof header);
  std::uint8_t* data = out.data() + kHeaderBytes;
  for (int s = 0; s < max_slices; ++s) {
    for (int ss = 0; ss < max_subslices; ++ss) {
      const std::size_t i = static_cast<std::size_t>(s * max_subslices + ss);
      const std::uint32_t eus =
          eu_masks[i] &
          (max_eus_per_subslice == 32 ? 0xFFFFFFFFu : (1u << max_eus_per_subslice) - 1);
      if (eus == 0) continue;
      data[0] |= static_cast<std::uint8_t>(1u << s);
      const std::size_t ss_at = slice_length + static_cast<std::size_t>(s) * ss_stride;
      data[ss_at + static_cast<std::size_t>(ss / 8)] |= static_cast<std::uint8_t>(1u << (ss % 8));
      std::uint8_t* eu_at = data + slice_length + ss_length + i * eu_stride;
      for (std::size_t b = 0; b < eu_stride; ++b) {
        eu_at[b] = static_cast<std::uint8_t>(eus >> (8 * b));
      }
    }
  }
  return out;
}

Platform apply_topology(Platform platform, const Topology& topology) {
  platform.slices = topology.slices;
  platform.subslices = topology.subslices;
  platform.eus = topology.eus;
  return platform;
}

namespace {

// $SubsliceMask and $DualSubsliceMask hold a group of bits per slice: 3 before Gen11, 8 from
// Gen11 (mesa src/intel/perf/intel_perf.c compute_topology_builtins @ bminor/mesa-mesa
// 03fc7d6a6d76; igt lib/i915/perf.c intel_perf_for_devinfo @ 2b29e8ac07fb, bits_per_subslice).
// i915's topology numbers subslice ss of slice s as s * max_subslices + ss, with
// max_subslices 4 on Gen9 big cores (linux gt/intel_sseu.c gen9_sseu_info_init @
// torvalds/linux 01fabda8e3d6), so the two differ on multi-slice Gen9 parts.
int subslice_bits_per_slice(Generation gen) {
  return gen == Generation::kGen7_5 || gen == Generation::kGen8 || gen == Generation::kGen9 ? 3 : 8;
}

// The enabled (slice, subslice) pairs: from the query when there is one, else the platform's
// subslices spread evenly over its slices.
std::vector<std::pair<int, int>> enabled_subslices(const Platform& platform,
                                                   const std::optional<Topology>& topology) {
  std::vector<std::pair<int, int>> out;
  if (topology) {
    const int per_slice = topology->max_subslices > 0 ? topology->max_subslices : 1;
    for (int bit = 0; bit < 64; ++bit) {
      if ((topology->subslice_mask >> bit) & 1u) out.emplace_back(bit / per_slice, bit % per_slice);
    }
    return out;
  }
  const int slices = platform.slices > 0 ? platform.slices : 1;
  const int per_slice = platform.subslices / slices;
  for (int s = 0; s < slices; ++s) {
    for (int ss = 0; ss < per_slice; ++ss) out.emplace_back(s, ss);
  }
  return out;
}

}  // namespace

DeviceVariables device_variables(const Platform& platform,
                                 const std::optional<Topology>& topology) {
  DeviceVariables v;
  auto subslices = enabled_subslices(platform, topology);
  // Xe-LPG: i915 reports one slice of Xe-cores; Mesa rebuilds slices of 4 Xe-cores
  // (intel_device_info.c update_from_single_slice_topology, verx10 >= 125 @ bminor/mesa-mesa
  // 011b31c26d61), which is what $SliceMask, $GtSlice<N> and $GtSlice<N>XeCore<M> mean.
  // Xe2 under xe: so does Intel's metrics-discovery, whose slices are the groups of 4 Xe-cores
  // of xe's DSS mask with any core enabled (md_driver_ifc_linux_xe.cpp GetSliceMask, lines
  // 1297-1317, MD_SUBSLICE_PER_SLICE_XE2 = 4 @ intel/metrics-discovery 80cc115575f1); IGT's xe
  // library keeps one slice (lib/xe/xe_oa.c @ b3d809d537fe line 467), docs/metrics.md.
  // $GtXeCore<N> tests the flat Xe-core number N itself.
  // Xe-HPG is verx10 125 too (DG2_CONFIG, intel_device_info.c @ 036ec0bb89c9), so DG2's
  // one-slice query is rebuilt the same way.
  if (is_xehp_oa(platform.gen) || platform.gen == Generation::kXe2) {
    for (auto& [s, ss] : subslices) {
      const int core = s * (topology ? topology->max_subslices : platform.subslices) + ss;
      if (core < 64) v.xe_core_mask |= std::uint64_t{1} << core;
      s = core / 4;
      ss = core % 4;
    }
  }
  const int bits = subslice_bits_per_slice(platform.gen);
  for (const auto& [s, ss] : subslices) {
    if (s >= 64 || s * bits + ss >= 64) continue;
    v.slice_mask |= std::uint64_t{1} << s;
    v.subslice_mask |= std::uint64_t{1} << (s * bits + ss);
  }
  v.eu_subslices_total = subslices.size();
  v.eu_slices_total = static_cast<std::uint64_t>(std::popcount(v.slice_mask));
  v.eu_cores_total = static_cast<std::uint64_t>(topology ? topology->eus : platform.eus);
  // Gen12 and Xe-LPG group subslices in pairs ("dual subslices", Xe-cores on Xe-LPG); i915's
  // topology reports those pairs.
  if (counts_xe_cores(platform.gen)) {
    v.dual_subslice_mask = v.subslice_mask;
    v.eu_dual_subslices_total = v.eu_subslices_total;
  }
  v.eu_threads_count = static_cast<std::uint64_t>(platform.threads_per_eu);
  v.timestamp_frequency_hz = static_cast<std::uint64_t>(platform.timestamp_hz);
  v.gpu_min_freq_hz = static_cast<std::uint64_t>(platform.min_freq_mhz * 1e6);
  v.gpu_max_freq_hz = static_cast<std::uint64_t>(platform.max_freq_mhz * 1e6);
  return v;
}

}  // namespace oaprof::oa
