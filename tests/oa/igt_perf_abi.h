// The ABI of IGT 1.27.1's libi915_perf.so.1.5 (Debian 12's intel-gpu-tools), declared here so
// that the parity test (igt_parity_test.cc) can dlopen the library and read its metric sets
// without IGT's headers. Written from reading lib/i915/perf.h and lib/igt_list.h at the
// igt-gpu-tools-1.27.1 release commit, intel-lgci-fdo-gitlab-mirror/drm.igt-gpu-tools
// 2b29e8ac07fbcfadc48b9d60e4d736a6e3b289ab ("Update NEWS, bump version to 1.27.1"); the field
// order and types must match that file exactly. The test checks the layout at run time (set
// names and GUIDs readable and equal to the XML's, device fields equal to what was passed in).
// Test-only: nothing in src/ may include this.
#pragma once

#include <cstdint>

namespace oaprof::oa::igt127 {

// lib/igt_list.h: a circular doubly linked list, `prev` first.
struct ListHead {
  ListHead* prev;
  ListHead* next;
};

// perf.h INTEL_DEVICE_MAX_SLICES (6), _SUBSLICES (8), _EUS_PER_SUBSLICE (16).
inline constexpr int kMaxSlices = 6;
inline constexpr int kMaxSubslices = 8;
inline constexpr int kMaxEusPerSubslice = 16;

// struct intel_perf_devinfo.
struct DevInfo {
  char devname[20];
  char prettyname[100];
  bool query_mode;
  bool has_dynamic_configs;
  std::uint32_t devid;
  std::uint32_t graphics_ver;
  std::uint32_t revision;
  std::int32_t oa_timestamp_shift;  // negative: shift right
  std::uint64_t oa_timestamp_mask;
  std::uint64_t timestamp_frequency;
  std::uint64_t gt_min_freq;
  std::uint64_t gt_max_freq;
  std::uint64_t n_eus;
  std::uint64_t n_eu_slices;
  std::uint64_t n_eu_sub_slices;
  std::uint64_t n_eu_sub_slices_half_slices;
  std::uint64_t subslice_mask;
  std::uint64_t slice_mask;
  std::uint64_t eu_threads_count;
  std::uint16_t max_slices;
  std::uint16_t max_subslices_per_slice;
  std::uint16_t subslice_slice_stride;
  std::uint16_t max_eu_per_subslice;
  std::uint16_t eu_slice_stride;
  std::uint16_t eu_subslice_stride;
  std::uint8_t slice_masks[(kMaxSlices + 7) / 8];
  std::uint8_t subslice_masks[kMaxSlices * ((kMaxSubslices + 7) / 8)];
  std::uint8_t eu_masks[kMaxSlices * kMaxSubslices * ((kMaxEusPerSubslice + 7) / 8)];
};

// intel_perf_logical_counter_storage_t.
enum class Storage : int { kUint64, kUint32, kDouble, kFloat, kBool32 };

struct Perf;
struct MetricSet;

using ReadUint64 = std::uint64_t (*)(const Perf*, const MetricSet*, std::uint64_t* deltas);
using ReadDouble = double (*)(const Perf*, const MetricSet*, std::uint64_t* deltas);

// struct intel_perf_logical_counter.
struct LogicalCounter {
  const MetricSet* metric_set;
  const char* name;
  const char* symbol_name;
  const char* desc;
  Storage storage;
  int type;  // intel_perf_logical_counter_type_t
  int unit;  // intel_perf_logical_counter_unit_t
  union {
    ReadUint64 max_uint64;
    ReadDouble max_float;
  };
  union {
    ReadUint64 read_uint64;
    ReadDouble read_float;
  };
  ListHead link;
};

// struct intel_perf_register_prog.
struct RegisterProg {
  std::uint32_t reg;
  std::uint32_t val;
};

// struct intel_perf_metric_set.
struct MetricSet {
  const char* name;
  const char* symbol_name;
  const char* hw_config_guid;
  LogicalCounter* counters;
  int n_counters;
  std::uint64_t perf_oa_metrics_set;
  int perf_oa_format;  // enum drm_i915_oa_format
  int perf_raw_size;
  int gpu_time_offset;
  int gpu_clock_offset;
  int a_offset;
  int b_offset;
  int c_offset;
  int perfcnt_offset;
  RegisterProg* b_counter_regs;
  std::uint32_t n_b_counter_regs;
  RegisterProg* mux_regs;
  std::uint32_t n_mux_regs;
  RegisterProg* flex_regs;
  std::uint32_t n_flex_regs;
  ListHead link;
};

// struct intel_perf.
struct Perf {
  const char* name;
  void* root_group;  // struct intel_perf_logical_counter_group *
  ListHead metric_sets;
  DevInfo devinfo;
};

// struct intel_perf_accumulator: INTEL_PERF_MAX_RAW_OA_COUNTERS (64) deltas.
struct Accumulator {
  std::uint64_t deltas[64];
};

// The library's entry points the test uses (perf.h prototypes). drm_i915_query_topology_info
// and drm_i915_perf_record_header are the kernel uapi structs (libdrm's i915_drm.h).
using ForDevinfo = Perf* (*)(std::uint32_t device_id, std::uint32_t revision,
                             std::uint64_t timestamp_frequency, std::uint64_t gt_min_freq,
                             std::uint64_t gt_max_freq, const void* topology);
using Free = void (*)(Perf*);
using AccumulateReports = void (*)(Accumulator* acc, const Perf* perf, const MetricSet* set,
                                   const void* record0, const void* record1);
using ReadReportReason = const char* (*)(const Perf* perf, const void* record);

}  // namespace oaprof::oa::igt127
