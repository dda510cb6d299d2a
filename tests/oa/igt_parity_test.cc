// Parity with IGT's own library: metric values oaprof decodes from reports must equal what
// IGT 1.27.1's libi915_perf (Debian 12's intel-gpu-tools) computes from the same reports, on
// every platform both know and for every metric set and counter. The library is dlopened (its
// ABI is declared in igt_perf_abi.h); the test is skipped, with the reason, where it is absent.
//
// For each platform: one PCI id of oaprof's table that IGT 1.27.1 knows, an i915 topology built
// from oaprof's counts, and the same timestamp frequency, minimum and maximum frequency and
// revision passed to both. IGT builds its device variables and metric sets; oaprof takes the
// same XML set (by symbol and hw_config_guid) from ../shared/metrics. Pseudo-random report pairs
// in the set's format (32- and 40-bit wraps included) go through IGT's
// intel_perf_accumulate_reports and each counter's read function, and through the path `oaprof
// decode` takes (the set's oa_format, read_report_stream, decode_rows: decode, deltas and
// equations). Integers and floats must be equal, floats bit for bit (see below).
//
// Where they differ on purpose the difference is listed here, never skipped in silence:
// - kChangedAfter127: counters whose equation IGT changed after 1.27.1 (our XML is newer).
// - IGT 1.27.1 on Meteor Lake: eu_threads_count stays 7 and oa_timestamp_shift 0 (lib/i915/perf.c
//   @ 2b29e8ac07fb lines 339 and 343; the is_meteorlake branch at line 434 sets neither), which
//   IGT fixed in 20ff42269100 ("Update MTL OA timestamp and EU thread config", Wa_14015846243).
//   oaprof uses 8 threads and the shift. The test applies that fix to the library's device info
//   before comparing, and counts the counters whose value the fix changes.
// - The timestamp frequency on Meteor Lake: both sides get one frequency, the rate of the shifted
//   delta (oaprof's $GpuTimestampFrequency, half of I915_PARAM_OA_TIMESTAMP_FREQUENCY there). IGT's
//   library, run on the hardware, is given param 57 itself (lib/i915/perf.c @ b3d809d537fe lines
//   661-663) and divides the shifted delta by it (lines 873-876 with the shift of 456-457), so
//   its GpuTime is half, and its frequencies twice, what IGT's own test takes as the truth: the
//   raw delta at param 57 (tests/intel/perf.c oa_timestamp_delta and timebase_scale, lines
//   719-733; periodic reports 2 << exponent raw ticks apart, line 2099). oaprof follows the test
//   (docs/hardware-access.md, "Meteor Lake / Arrow Lake OA timestamps"); a counter that divides
//   by $GpuTimestampFrequency differs from the library by that factor of 2 only.
// - IGT never fills devinfo.slice_masks nor subslice_slice_stride (lib/i915/perf.c @ 2b29e8ac07fb
//   lines 286-303 copy only subslice_masks and eu_masks), which $GtSlice<N> and
//   $GtSlice<N>XeCore<M> read (lib/i915/perf.h lines 295-306): every $GtSlice<N> is false there,
//   and $GtSlice1XeCore<M> reads slice 0's Xe-core M. It also takes $XeCoreMask for the slice
//   mask (lib/i915/perf-configs/codegen.py line 150), and keeps i915's single slice on Xe-LPG.
//   oaprof follows Mesa (slices of 4 Xe-cores; $XeCoreMask is the subslice mask), so on MTL the
//   counters whose availability reads these are present on one side only: counted, and each must
//   read a $GtSlice test or $XeCoreMask. DG2 (Xe-HPG) is the same: IGT keeps i915's one slice
//   of 32 possible Xe-cores, oaprof rebuilds slices of 4 as Mesa does for verx10 125.
// - DG2's files (../shared/metrics/igt-dg2) are IGT's own cut copies with RenderBasic and TestOa
//   only; IGT 1.27.1 registers every set of the full file for acmgt1/2/3. Every set the XML
//   holds is compared; the library's others, which no file here describes, are counted and
//   printed, never compared. IGT 1.27.1 already gives DG2 8 threads and the shifted 31-bit
//   timestamp (lib/i915/perf.c @ 2b29e8ac07fb lines 417-424, the is_dg2 branch), as oaprof does.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <i915_drm.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "oa/metric_program.h"
#include "oa/metric_xml.h"
#include "oa/platform.h"
#include "oa/report.h"
#include "oa/report_format.h"
#include "oa/report_stream.h"
#include "oa/topology.h"
#include "tests/oa/igt_files.h"
#include "tests/oa/igt_perf_abi.h"
#include "tests/oa/topology_buffer.h"

namespace oaprof::oa {
namespace {

namespace igt = igt127;

constexpr const char* kLibrary = "libi915_perf.so.1.5";

// Floats must be bit-equal: oaprof evaluates each operator as the C that IGT's generator emits
// (lib/i915/perf-configs/codegen.py emit_*: one statement per operator on uint64_t or double
// temporaries), so both round at the same steps; the library is built for baseline x86-64, with
// no fused multiply-add to round differently. Any difference is a real one (a wrong counter,
// width, variable or operator), and the test reports it in units in the last place.

// Counters whose equation in ../shared/metrics (IGT ecb9eb7f6a22, 2025) differs from IGT
// 1.27.1's: IGT c55a6c969 and 99ab17101 ("lib/i915/perf: Update MTL GT2/GT3 metrics",
// 2023-03-23) reassigned B and C counters in sets Ext1, Ext7 and Ext508-Ext514 and changed the
// divisor of LOAD_STORE_CACHE_OUTPUT_READY_XECORE* (Ext17) from 4 to 2. Found by comparing the
// two versions' XML counter by counter (equation, max_equation, availability, data_type); no
// other counter of any platform differs and no GUID changed (the sets they added are
// kAddedAfter127). One more changed text only: mtlgt3 Ext1 GPU_MEMORY_READ_SQIDI1 went from
// "C 1 READ C 0 READ UADD" to "C 0 READ C 1 READ UADD", the same value, so it is compared like
// any other counter.
struct Changed {
  const char* platform;
  const char* set;
  const char* counter;
};
constexpr Changed kChangedAfter127[] = {
    {"mtlgt2", "Ext17", "LOAD_STORE_CACHE_OUTPUT_READY_XECORE0"},
    {"mtlgt2", "Ext17", "LOAD_STORE_CACHE_OUTPUT_READY_XECORE1"},
    {"mtlgt2", "Ext17", "LOAD_STORE_CACHE_OUTPUT_READY_XECORE2"},
    {"mtlgt2", "Ext17", "LOAD_STORE_CACHE_OUTPUT_READY_XECORE3"},
    {"mtlgt2", "Ext7", "SAMPLER_BUSY_XECORE0"},
    {"mtlgt2", "Ext7", "SAMPLER_BUSY_XECORE1"},
    {"mtlgt2", "Ext7", "SAMPLER_BUSY_XECORE2"},
    {"mtlgt2", "Ext7", "SAMPLER_BUSY_XECORE3"},
    {"mtlgt2", "Ext7", "SAMPLER_L3_HIT_L3BANK0"},
    {"mtlgt2", "Ext7", "SAMPLER_L3_HIT_L3BANK1"},
    {"mtlgt2", "Ext7", "SAMPLER_L3_HIT_L3BANK2"},
    {"mtlgt2", "Ext7", "SAMPLER_L3_HIT_L3BANK3"},
    {"mtlgt2", "Ext7", "SAMPLER_L3_READ_L3BANK0"},
    {"mtlgt2", "Ext7", "SAMPLER_L3_READ_L3BANK1"},
    {"mtlgt2", "Ext7", "SAMPLER_L3_READ_L3BANK2"},
    {"mtlgt2", "Ext7", "SAMPLER_L3_READ_L3BANK3"},
    {"mtlgt3", "Ext1", "GPU_MEMORY_ACTIVE_SQIDI0"},
    {"mtlgt3", "Ext1", "GPU_MEMORY_ACTIVE_SQIDI1"},
    {"mtlgt3", "Ext1", "GPU_MEMORY_BYTE_READ_SQIDI0"},
    {"mtlgt3", "Ext1", "GPU_MEMORY_BYTE_READ_SQIDI1"},
    {"mtlgt3", "Ext1", "GPU_MEMORY_BYTE_WRITE_SQIDI0"},
    {"mtlgt3", "Ext1", "GPU_MEMORY_BYTE_WRITE_SQIDI1"},
    {"mtlgt3", "Ext1", "GPU_MEMORY_READ_SQIDI0"},
    {"mtlgt3", "Ext1", "GPU_MEMORY_REQUEST_QUEUE_FULL_SQIDI0"},
    {"mtlgt3", "Ext1", "GPU_MEMORY_REQUEST_QUEUE_FULL_SQIDI1"},
    {"mtlgt3", "Ext1", "GPU_MEMORY_WRITE_SQIDI0"},
    {"mtlgt3", "Ext1", "GPU_MEMORY_WRITE_SQIDI1"},
    {"mtlgt3", "Ext17", "LOAD_STORE_CACHE_OUTPUT_READY_XECORE0"},
    {"mtlgt3", "Ext17", "LOAD_STORE_CACHE_OUTPUT_READY_XECORE1"},
    {"mtlgt3", "Ext17", "LOAD_STORE_CACHE_OUTPUT_READY_XECORE2"},
    {"mtlgt3", "Ext17", "LOAD_STORE_CACHE_OUTPUT_READY_XECORE3"},
    {"mtlgt3", "Ext508", "SLM_BYTE_READ_BANK0_XECORE0"},
    {"mtlgt3", "Ext508", "SLM_BYTE_READ_BANK0_XECORE1"},
    {"mtlgt3", "Ext509", "SLM_BYTE_READ_BANK1_XECORE0"},
    {"mtlgt3", "Ext509", "SLM_BYTE_READ_BANK1_XECORE1"},
    {"mtlgt3", "Ext510", "SLM_BYTE_READ_BANK0_XECORE2"},
    {"mtlgt3", "Ext510", "SLM_BYTE_READ_BANK0_XECORE3"},
    {"mtlgt3", "Ext511", "SLM_BYTE_READ_BANK1_XECORE2"},
    {"mtlgt3", "Ext511", "SLM_BYTE_READ_BANK1_XECORE3"},
    {"mtlgt3", "Ext512", "SLM_BYTE_READ_BANK0_XECORE4"},
    {"mtlgt3", "Ext512", "SLM_BYTE_READ_BANK0_XECORE5"},
    {"mtlgt3", "Ext514", "SLM_BYTE_READ_BANK0_XECORE6"},
    {"mtlgt3", "Ext514", "SLM_BYTE_READ_BANK0_XECORE7"},
    {"mtlgt3", "Ext7", "SAMPLER_L3_HIT_L3BANK0"},
    {"mtlgt3", "Ext7", "SAMPLER_L3_HIT_L3BANK1"},
    {"mtlgt3", "Ext7", "SAMPLER_L3_HIT_L3BANK2"},
    {"mtlgt3", "Ext7", "SAMPLER_L3_HIT_L3BANK3"},
    {"mtlgt3", "Ext7", "SAMPLER_L3_HIT_L3BANK4"},
    {"mtlgt3", "Ext7", "SAMPLER_L3_HIT_L3BANK5"},
    {"mtlgt3", "Ext7", "SAMPLER_L3_HIT_L3BANK6"},
    {"mtlgt3", "Ext7", "SAMPLER_L3_HIT_L3BANK7"},
    {"mtlgt3", "Ext7", "SAMPLER_L3_READ_L3BANK0"},
    {"mtlgt3", "Ext7", "SAMPLER_L3_READ_L3BANK1"},
    {"mtlgt3", "Ext7", "SAMPLER_L3_READ_L3BANK2"},
    {"mtlgt3", "Ext7", "SAMPLER_L3_READ_L3BANK3"},
    {"mtlgt3", "Ext7", "SAMPLER_L3_READ_L3BANK4"},
    {"mtlgt3", "Ext7", "SAMPLER_L3_READ_L3BANK5"},
    {"mtlgt3", "Ext7", "SAMPLER_L3_READ_L3BANK6"},
    {"mtlgt3", "Ext7", "SAMPLER_L3_READ_L3BANK7"},
};

// Sets of ../shared/metrics that IGT 1.27.1 lacks: the same IGT commits added Meteor Lake's media
// (OAM) sets, whose reports are MPEC8u32_B8_C8 (oa_format="128B_MPEC8_NOA16"), a format 1.27.1's
// intel_perf_accumulate_reports cannot read (lib/i915/perf.c @ 2b29e8ac07fb lines 837-907 know
// A24u40, A32u40 and A45 only). Nothing in that library to compare them with.
constexpr Changed kAddedAfter127[] = {
    {"mtlgt2", "MediaSet1", ""}, {"mtlgt2", "MediaSet2", ""}, {"mtlgt2", "TestOam", ""},
    {"mtlgt3", "MediaSet1", ""}, {"mtlgt3", "MediaSet2", ""}, {"mtlgt3", "TestOam", ""},
};

bool added_after_127(std::string_view platform, std::string_view set) {
  for (const Changed& c : kAddedAfter127) {
    if (c.platform == platform && c.set == set) return true;
  }
  return false;
}

bool changed_after_127(std::string_view platform, std::string_view set, std::string_view counter) {
  for (const Changed& c : kChangedAfter127) {
    if (c.platform == platform && c.set == set && c.counter == counter) return true;
  }
  return false;
}

// The library and the four entry points the test calls.
class IgtLibrary {
 public:
  static const IgtLibrary& get() {
    static const IgtLibrary library;
    return library;
  }
  bool loaded() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }

  igt::ForDevinfo for_devinfo = nullptr;
  igt::Free free = nullptr;
  igt::AccumulateReports accumulate = nullptr;
  igt::ReadReportReason read_report_reason = nullptr;

 private:
  IgtLibrary() {
    handle_ = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      error_ = fmt::format(
          "{} cannot be loaded ({}); install Debian's intel-gpu-tools 1.27.1 "
          "(scripts/setup does)",
          kLibrary, dlerror());
      return;
    }
    for_devinfo = symbol<igt::ForDevinfo>("intel_perf_for_devinfo");
    free = symbol<igt::Free>("intel_perf_free");
    accumulate = symbol<igt::AccumulateReports>("intel_perf_accumulate_reports");
    read_report_reason = symbol<igt::ReadReportReason>("intel_perf_read_report_reason");
    if (!error_.empty()) {
      dlclose(handle_);
      handle_ = nullptr;
    }
  }
  template <class Fn>
  Fn symbol(const char* name) {
    void* p = dlsym(handle_, name);
    if (p == nullptr) error_ += fmt::format("{} lacks {}; ", kLibrary, name);
    return reinterpret_cast<Fn>(p);
  }
  void* handle_ = nullptr;
  std::string error_;
};

// splitmix64: deterministic on every machine (std distributions are not).
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }

 private:
  std::uint64_t state_;
};

std::uint64_t mask_of(int bits) {
  return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
}

// A start value and an end value of a `bits`-wide counter: the delta is zero, small or up to a
// quarter of the range (realistic for counters read often enough), and a quarter of the starts
// sit just below the wrap so that the end wraps.
std::pair<std::uint64_t, std::uint64_t> counter_pair(Random& rng, int bits) {
  const std::uint64_t mask = mask_of(bits);
  const std::uint64_t start = rng.below(4) == 0 ? mask - rng.below(1u << 16) : rng.next() & mask;
  std::uint64_t delta = 0;
  switch (rng.below(4)) {
    case 0:
      delta = 0;
      break;
    case 1:
      delta = rng.below(1u << 16);
      break;
    default:
      delta = rng.next() & (mask >> 2);
      break;
  }
  return {start, (start + delta) & mask};
}

// A pair of reports of `format`; pair 0 repeats one report, so every delta is zero (the
// division-by-zero paths of every equation).
std::pair<Report, Report> report_pair(ReportFormat format, Random& rng, int pair) {
  const FormatLayout& l = layout_of(format);
  Report r0, r1;
  r0.rpt_id = static_cast<std::uint32_t>(rng.next());
  r1.rpt_id = static_cast<std::uint32_t>(rng.next());
  r0.ctx_id = static_cast<std::uint32_t>(rng.next());
  r1.ctx_id = r0.ctx_id;
  std::tie(r0.timestamp, r1.timestamp) = counter_pair(rng, l.header_bits());
  std::tie(r0.gpu_ticks, r1.gpu_ticks) = counter_pair(rng, l.header_bits());
  for (const CounterRun& run : l.a_runs) {
    for (int i = 0; i < run.count; ++i) {
      const auto idx = static_cast<std::size_t>(run.first + i);
      std::tie(r0.a[idx], r1.a[idx]) = counter_pair(rng, run.bits);
    }
  }
  for (int i = 0; i < kNumB; ++i) {
    const auto [b0, b1] = counter_pair(rng, 32);
    r0.b[i] = static_cast<std::uint32_t>(b0);
    r1.b[i] = static_cast<std::uint32_t>(b1);
  }
  for (int i = 0; i < kNumC; ++i) {
    const auto [c0, c1] = counter_pair(rng, 32);
    r0.c[i] = static_cast<std::uint32_t>(c0);
    r1.c[i] = static_cast<std::uint32_t>(c1);
  }
  if (pair == 0) r1 = r0;
  return {r0, r1};
}

// A perf record (drm_i915_perf_record_header + report), as IGT's accumulate reads it.
std::vector<std::uint8_t> record_of(const RawReport& raw) {
  drm_i915_perf_record_header header{};
  header.type = DRM_I915_PERF_RECORD_SAMPLE;
  header.size = static_cast<std::uint16_t>(sizeof header + static_cast<std::size_t>(raw.size));
  std::vector<std::uint8_t> out(sizeof header + static_cast<std::size_t>(raw.size));
  std::memcpy(out.data(), &header, sizeof header);
  std::memcpy(out.data() + sizeof header, raw.bytes.data(), static_cast<std::size_t>(raw.size));
  return out;
}

// The topology i915 reports for the platform's counts: max_slices, max_subslices and
// max_eus_per_subslice as linux gt/intel_sseu.c (torvalds/linux 01fabda8e3d6) sets them
// (hsw_sseu_info_init: the enabled counts; bdw 3/3/8; chv 1/2/8; gen9 3/4/8, LP 1/3/8; gen11
// 1/8/8, EHL/JSL 1/4/8; gen12 1/6/16). Xe-LPG takes 1/8/16, a test input only. With
// `fuse_last`, the last subslice of the last slice is fused off (when more than one exists).
std::vector<std::uint8_t> topology_for(const Platform& p, bool fuse_last) {
  int max_slices = p.slices, max_subslices = p.subslices / p.slices;
  switch (p.gen) {
    case Generation::kGen7_5:
      break;
    case Generation::kGen8:
      max_slices = p.codename == "CHV" ? 1 : 3;
      max_subslices = p.codename == "CHV" ? 2 : 3;
      break;
    case Generation::kGen9:
      max_slices = p.threads_per_eu == 6 ? 1 : 3;
      max_subslices = p.threads_per_eu == 6 ? 3 : 4;
      break;
    case Generation::kGen11:
      max_slices = 1;
      max_subslices = p.metrics_file == "ehl" ? 4 : 8;
      break;
    case Generation::kGen12:
      max_slices = 1;
      max_subslices = 6;
      break;
    case Generation::kXeHpg:  // xehp_sseu_info_init (Kingxukai/linux 0291023e7330): 1/32/16
      max_slices = 1;
      max_subslices = 32;
      break;
    case Generation::kXeLpg:
      max_slices = 1;
      max_subslices = 8;
      break;
    case Generation::kXe2:
      break;  // IGT 1.27.1 knows no Xe2 part: never compared here
  }
  const int per_slice = p.subslices / p.slices;
  const int eus_per_subslice = p.eus / p.subslices;
  const int max_eus =
      p.gen == Generation::kGen7_5 ? eus_per_subslice : (is_gen12_family(p.gen) ? 16 : 8);
  std::vector<std::vector<std::uint32_t>> eus(static_cast<std::size_t>(max_slices));
  for (int s = 0; s < max_slices; ++s) {
    eus[s].assign(static_cast<std::size_t>(max_subslices), 0);
    if (s >= p.slices) continue;
    for (int ss = 0; ss < per_slice; ++ss) eus[s][ss] = (1u << eus_per_subslice) - 1;
  }
  if (fuse_last && p.subslices > 1) eus[p.slices - 1][per_slice - 1] = 0;
  return testing::topology_buffer(max_slices, max_subslices, max_eus, eus);
}

// IGT 1.27.1's name for the first reason bit set (intel_perf_read_report_reason): the order and
// spelling of lib/i915/perf.c @ 2b29e8ac07fb lines 958-1010.
std::string igt_reason_name(std::uint32_t reasons, Generation gen) {
  if (gen == Generation::kGen7_5) return "timer";
  static constexpr const char* kNames[] = {"timer",          "trigger1",      "trigger2",
                                           "context-switch", "go-transition", "clock-ratio-change",
                                           "mmio-trigger"};
  const int bits = gen == Generation::kGen8 ? 5 : (is_gen12_family(gen) ? 7 : 6);
  for (int i = 0; i < bits; ++i) {
    if (reasons & (1u << i)) return kNames[i];
  }
  return "unknown";
}

// What one platform's comparison covered (the figures docs/metrics.md quotes).
struct Figures {
  int sets = 0;                                // IGT sets compared
  int sets_added_after = 0;                    // XML sets IGT 1.27.1 lacks (kAddedAfter127)
  std::set<std::string> equal_counters;        // "set/counter" required equal, and equal
  std::set<std::string> listed_counters;       // kChangedAfter127 or computed from one
  std::set<std::string> listed_differing;      // of those, seen differing at least once
  std::set<std::string> availability_differs;  // on one side only ($GtSlice, $XeCoreMask)
  long comparisons = 0;              // counter values compared (× report pairs × 2 topologies)
  long fixed_by_mtl_patch = 0;       // IGT values the MTL fix (20ff42269100) changes
  int igt_sets_not_in_cut_file = 0;  // DG2: the library's sets IGT's cut XML leaves out
  long wraps = 0;                    // counter wraps oaprof corrected in the report pairs
};

class IgtParityTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const IgtLibrary& lib = IgtLibrary::get();
    if (!lib.loaded()) GTEST_SKIP() << lib.error();
    if (testing::igt_file_for(GetParam()).empty()) {
      GTEST_SKIP() << "no oa-" << GetParam() << ".xml in " << testing::igt_dir() << ", "
                   << testing::igt_mtl_dir() << " or " << testing::igt_dg2_dir();
    }
  }
};

// Whether the loaded library has 1.27.1's counter layout. Later IGT releases keep the soname
// (libi915_perf.so.1.5) but insert `group` and `availability` pointers before `storage` in
// struct intel_perf_logical_counter (IGT 31ec677ca, 1.28): there storage, type and unit would
// read as parts of pointers, far outside their enums.
bool counter_layout_is_127(const igt::Perf& perf) {
  const igt::ListHead* first = perf.metric_sets.next;
  if (first == &perf.metric_sets) return false;
  const auto* set = reinterpret_cast<const igt::MetricSet*>(reinterpret_cast<const char*>(first) -
                                                            offsetof(igt::MetricSet, link));
  for (int i = 0; i < set->n_counters; ++i) {
    const igt::LogicalCounter& c = set->counters[i];
    const int storage = static_cast<int>(c.storage);
    if (storage < 0 || storage > 4 || c.type < 0 || c.type > 5 || c.unit < 0 || c.unit > 19) {
      return false;
    }
  }
  return set->n_counters > 0;
}

constexpr std::uint32_t kRevision = 3;

igt::Perf* igt_perf(const Platform& p, std::uint16_t device,
                    const std::vector<std::uint8_t>& topo) {
  return IgtLibrary::get().for_devinfo(
      device, kRevision, static_cast<std::uint64_t>(p.timestamp_hz),
      static_cast<std::uint64_t>(p.min_freq_mhz * 1e6),
      static_cast<std::uint64_t>(p.max_freq_mhz * 1e6), topo.data());
}

// Meteor Lake as IGT fixed it after 1.27.1 (20ff42269100): 8 threads per EU, timestamps
// shifted right by one, 31 bits of them usable.
void apply_igt_mtl_fix(igt::Perf& perf) {
  perf.devinfo.eu_threads_count = 8;
  perf.devinfo.oa_timestamp_shift = -1;
  perf.devinfo.oa_timestamp_mask = 0x7fffffff;
}

DeviceVariables oaprof_variables(const Platform& p, const std::vector<std::uint8_t>& topo) {
  DeviceVariables v = device_variables(p, parse_topology(topo));
  v.sku_revision_id = kRevision;
  v.query_mode = 0;  // IGT's devinfo.query_mode stays false (calloc): periodic OA reports
  return v;
}

// The device variables IGT built against oaprof's (layout check and parity of inputs).
void expect_same_variables(const igt::DevInfo& d, const DeviceVariables& v, const Platform& p,
                           std::uint16_t device) {
  EXPECT_EQ(d.devid, device);
  EXPECT_EQ(d.revision, kRevision);
  EXPECT_EQ(d.timestamp_frequency, v.timestamp_frequency_hz);
  EXPECT_EQ(d.gt_min_freq, v.gpu_min_freq_hz);
  EXPECT_EQ(d.gt_max_freq, v.gpu_max_freq_hz);
  EXPECT_EQ(d.n_eus, v.eu_cores_total);
  EXPECT_EQ(d.n_eu_sub_slices, v.eu_subslices_total);
  EXPECT_FALSE(d.query_mode);
  if (is_xehp_oa(p.gen)) {
    // IGT keeps i915's one slice; oaprof groups Xe-cores by 4 as Mesa does (see the header).
    EXPECT_EQ(d.slice_mask, 1u);
    EXPECT_EQ(static_cast<std::uint64_t>(std::popcount(d.subslice_mask)), v.eu_subslices_total);
  } else {
    EXPECT_EQ(d.slice_mask, v.slice_mask);
    EXPECT_EQ(d.subslice_mask, v.subslice_mask);
    EXPECT_EQ(d.n_eu_slices, v.eu_slices_total);
  }
  if (p.gen == Generation::kXeLpg) {
    EXPECT_EQ(d.eu_threads_count, 7u) << "IGT 1.27.1 leaves MTL at 7 threads";
    EXPECT_EQ(v.eu_threads_count, 8u);
  } else {
    EXPECT_EQ(d.eu_threads_count, v.eu_threads_count);
  }
}

bool availability_reads_slices(const MetricCounter& c) {
  if (!c.availability) return false;
  const std::string& text = c.availability->text();
  return text.find("$GtSlice") != std::string::npos ||
         text.find("$XeCoreMask") != std::string::npos;
}

// Listed, or computed from a listed counter ($OTHER in the equation): its value follows the
// changed equation too.
bool follows_a_changed_counter(std::string_view platform, const MetricSet& set, int index,
                               int depth = 0) {
  const MetricCounter& c = set.counters()[static_cast<std::size_t>(index)];
  if (changed_after_127(platform, set.symbol(), c.symbol)) return true;
  if (depth > 16) return false;
  for (const int ref : c.equation.counter_references()) {
    if (follows_a_changed_counter(platform, set, ref, depth + 1)) return true;
  }
  return false;
}

double ulps_apart(double a, double b) {
  if (a == b) return 0;
  const double scale = std::max(std::fabs(a), std::fabs(b));
  return std::fabs(a - b) / (scale * 0x1p-52);
}

// Compares one IGT set with oaprof's over `pairs` report pairs; adds to `fig`.
void compare_set(const igt::Perf& perf, const igt::Perf* unfixed, const igt::MetricSet& igt_set,
                 const MetricSet& set, const Platform& p, const DeviceVariables& vars,
                 std::uint64_t seed, Figures& fig) {
  const std::string_view platform = p.metrics_file;
  const std::optional<ReportFormat> format = from_uapi(igt_set.perf_oa_format, p.gen);
  ASSERT_TRUE(format.has_value()) << "IGT format " << igt_set.perf_oa_format;
  // `oaprof decode` takes the format from the set's oa_format attribute: IGT's, on every set.
  EXPECT_EQ(format_from_igt_name(set.attribute("oa_format"), p.gen), format)
      << set.symbol() << " oa_format '" << set.attribute("oa_format") << "'";
  EXPECT_EQ(igt_set.perf_raw_size, layout_of(*format).size_bytes);
  EXPECT_EQ(igt_set.gpu_time_offset, 0);  // deltas[] holds the timestamp first
  EXPECT_EQ(igt_set.a_offset, p.gen == Generation::kGen7_5 ? 1 : 2);
  std::map<std::string, const igt::LogicalCounter*> igt_counters;
  for (int i = 0; i < igt_set.n_counters; ++i) {
    igt_counters[igt_set.counters[i].symbol_name] = &igt_set.counters[i];
  }
  // Which counters exist: IGT registers the available ones only.
  for (std::size_t i = 0; i < set.counters().size(); ++i) {
    const MetricCounter& c = set.counters()[i];
    const bool in_igt = igt_counters.count(c.symbol) != 0;
    if (in_igt == set.available(static_cast<int>(i), vars)) continue;
    fig.availability_differs.insert(fmt::format("{}/{}", set.symbol(), c.symbol));
    EXPECT_TRUE(is_xehp_oa(p.gen) && availability_reads_slices(c))
        << c.symbol << " is " << (in_igt ? "" : "not ") << "in IGT's set, availability "
        << (c.availability ? c.availability->text() : "none");
  }
  Random rng(seed);
  for (int pair = 0; pair < 6; ++pair) {
    const auto [r0, r1] = report_pair(*format, rng, pair);
    const RawReport raw0 = encode(*format, r0), raw1 = encode(*format, r1);
    const auto rec0 = record_of(raw0), rec1 = record_of(raw1);
    igt::Accumulator acc{}, acc_unfixed{};
    IgtLibrary::get().accumulate(&acc, &perf, &igt_set, rec0.data(), rec1.data());
    if (unfixed != nullptr) {
      IgtLibrary::get().accumulate(&acc_unfixed, unfixed, &igt_set, rec0.data(), rec1.data());
    }
    // The pair as `oaprof decode` reads a raw capture: read_report_stream, then decode_rows.
    const auto size = static_cast<std::size_t>(raw0.size);
    std::vector<std::uint8_t> capture(raw0.bytes.begin(), raw0.bytes.begin() + size);
    capture.insert(capture.end(), raw1.bytes.begin(), raw1.bytes.begin() + size);
    DecodeOptions options;
    options.gen = p.gen;
    options.timestamp_hz = p.timestamp_hz;
    options.metric_set = &set;
    options.vars = vars;
    const std::vector<DecodedRow> rows =
        decode_rows(read_report_stream(capture, *format, StreamKind::kRawReports), options);
    ASSERT_EQ(rows.size(), 1u);
    fig.wraps += rows[0].deltas.wraps_corrected;
    const std::vector<EquationValue>& values = rows[0].metrics;
    // What a run's rows evaluate, the set compiled for the device (oa/metric_program.h): the
    // same values, bit for bit, so IGT's too.
    std::vector<EquationValue> compiled;
    MetricProgram(set, vars).evaluate_into(rows[0].deltas, compiled);
    EXPECT_EQ(IgtLibrary::get().read_report_reason(&perf, rec1.data()),
              igt_reason_name(report_reasons(r1.rpt_id, p.gen), p.gen));
    for (const auto& [symbol, counter] : igt_counters) {
      const std::optional<int> index = set.counter_index(symbol);
      ASSERT_TRUE(index.has_value())
          << symbol << " is in IGT's " << igt_set.symbol_name << " but not in the XML's";
      const EquationValue mine = values[static_cast<std::size_t>(*index)];
      const EquationValue& row = compiled[static_cast<std::size_t>(*index)];
      EXPECT_TRUE(row.is_float == mine.is_float && row.u == mine.u &&
                  row.div_by_zero == mine.div_by_zero &&
                  std::bit_cast<std::uint64_t>(row.f) == std::bit_cast<std::uint64_t>(mine.f))
          << platform << " " << set.symbol() << " " << symbol << ": the compiled program gives "
          << (row.is_float ? row.f : static_cast<double>(row.u));
      const bool listed = follows_a_changed_counter(platform, set, *index);
      bool equal = false;
      std::string description;
      if (counter->storage == igt::Storage::kUint64) {
        const std::uint64_t v = counter->read_uint64(&perf, &igt_set, acc.deltas);
        equal = !mine.is_float && mine.u == v;
        description = fmt::format("IGT {} oaprof {}", v,
                                  mine.is_float ? mine.f : static_cast<double>(mine.u));
        if (unfixed != nullptr &&
            counter->read_uint64(unfixed, &igt_set, acc_unfixed.deltas) != v) {
          ++fig.fixed_by_mtl_patch;
        }
      } else {
        ASSERT_EQ(counter->storage, igt::Storage::kFloat) << symbol;
        const double v = counter->read_float(&perf, &igt_set, acc.deltas);
        const double ulps = ulps_apart(v, mine.f);
        equal = mine.is_float && v == mine.f;
        description =
            fmt::format("IGT {:.17g} oaprof {:.17g} ({:.3g} ulps)", v, mine.as_double(), ulps);
        if (unfixed != nullptr && counter->read_float(unfixed, &igt_set, acc_unfixed.deltas) != v) {
          ++fig.fixed_by_mtl_patch;
        }
      }
      ++fig.comparisons;
      const std::string key = fmt::format("{}/{}", set.symbol(), symbol);
      if (listed) {
        fig.listed_counters.insert(key);
        if (!equal) fig.listed_differing.insert(key);
        continue;
      }
      if (equal) fig.equal_counters.insert(key);
      EXPECT_TRUE(equal) << platform << " " << set.symbol() << " " << symbol << " pair " << pair
                         << ": " << description << "; equation "
                         << set.counters()[static_cast<std::size_t>(*index)].equation.text();
    }
  }
}

TEST_P(IgtParityTest, MetricValuesEqualIgtsOwnLibrary) {
  const std::string name = GetParam();
  const std::filesystem::path path = testing::igt_file_for(name);
  const MetricFile file = import_metrics_xml(testing::read_text(path), path.string());
  // The first id of the platform that IGT 1.27.1 knows.
  const PciId* device = nullptr;
  std::vector<std::uint8_t> full;
  igt::Perf* perf = nullptr;
  for (const PciId& id : known_pci_ids()) {
    if (id.platform->metrics_file != name) continue;
    full = topology_for(*id.platform, false);
    perf = igt_perf(*id.platform, id.device, full);
    if (perf != nullptr) {
      device = &id;
      break;
    }
  }
  ASSERT_NE(perf, nullptr) << "IGT 1.27.1 builds no perf for any PCI id of " << name;
  if (!counter_layout_is_127(*perf)) {
    IgtLibrary::get().free(perf);
    GTEST_SKIP() << kLibrary << " is not IGT 1.27.1's (its counter layout differs); this test "
                 << "reads 1.27.1's ABI (Debian 12's intel-gpu-tools)";
  }
  const Platform& p = *device->platform;
  // IGT's cut DG2 copies (see the header): only the sets they hold can be compared.
  const bool cut_file = path.parent_path() == testing::igt_dg2_dir();
  Figures fig;
  for (const bool fuse : {false, true}) {
    const std::vector<std::uint8_t> topo = topology_for(p, fuse);
    if (fuse) {
      IgtLibrary::get().free(perf);
      perf = igt_perf(p, device->device, topo);
      ASSERT_NE(perf, nullptr);
    }
    igt::Perf* unfixed = nullptr;
    if (p.gen == Generation::kXeLpg) {
      unfixed = igt_perf(p, device->device, topo);
      apply_igt_mtl_fix(*perf);
    }
    EXPECT_GT(std::strlen(perf->devinfo.devname), 0u) << "the device name should be readable";
    const DeviceVariables vars = oaprof_variables(p, topo);
    expect_same_variables(unfixed != nullptr ? unfixed->devinfo : perf->devinfo, vars, p,
                          device->device);
    int index = 0;
    std::set<std::string> igt_sets;
    for (const igt::ListHead* link = perf->metric_sets.next; link != &perf->metric_sets;
         link = link->next, ++index) {
      const auto* igt_set = reinterpret_cast<const igt::MetricSet*>(
          reinterpret_cast<const char*>(link) - offsetof(igt::MetricSet, link));
      SCOPED_TRACE(
          fmt::format("{} {} ({} topology)", name, igt_set->symbol_name, fuse ? "fused" : "full"));
      igt_sets.insert(igt_set->symbol_name);
      const MetricSet* set = file.find(igt_set->symbol_name);
      if (set == nullptr && cut_file) {
        if (!fuse) ++fig.igt_sets_not_in_cut_file;
        continue;
      }
      ASSERT_NE(set, nullptr) << "IGT set " << igt_set->symbol_name << " is not in " << path;
      EXPECT_EQ(set->guid(), igt_set->hw_config_guid);
      EXPECT_EQ(set->name(), igt_set->name);
      EXPECT_LE(igt_set->n_counters, static_cast<int>(set->counters().size()));
      if (!fuse) ++fig.sets;
      compare_set(
          *perf, unfixed, *igt_set, *set, p, vars,
          std::hash<std::string>{}(name)*31 + static_cast<std::uint64_t>(index) + (fuse ? 1000 : 0),
          fig);
    }
    for (const MetricSet& set : file.sets) {
      if (igt_sets.count(set.symbol()) != 0) continue;
      EXPECT_TRUE(added_after_127(name, set.symbol()))
          << set.symbol() << " is in " << path << " but not in IGT 1.27.1, and not listed";
      if (!fuse) ++fig.sets_added_after;
    }
    if (unfixed != nullptr) IgtLibrary::get().free(unfixed);
  }
  IgtLibrary::get().free(perf);
  // Every listed counter IGT computes must differ somewhere, or the entry is stale.
  for (const Changed& c : kChangedAfter127) {
    if (c.platform != name) continue;
    const std::string key = fmt::format("{}/{}", c.set, c.counter);
    if (fig.listed_counters.count(key) != 0) {
      EXPECT_TRUE(fig.listed_differing.count(key) != 0)
          << key << " is listed as changed after 1.27.1 but always agreed";
    }
  }
  std::cout << fmt::format(
      "[parity] {} (8086:{:04x}): {} sets ({} more in the XML, listed), {} counters equal, {} "
      "listed as changed after 1.27.1 ({} seen differing), {} comparisons; availability differs "
      "for {}; IGT values the MTL fix changes: {}; IGT sets the cut XML lacks: {}\n",
      name, device->device, fig.sets, fig.sets_added_after, fig.equal_counters.size(),
      fig.listed_counters.size(), fig.listed_differing.size(), fig.comparisons,
      fig.availability_differs.size(), fig.fixed_by_mtl_patch, fig.igt_sets_not_in_cut_file);
  EXPECT_GT(fig.wraps, 0) << "the report pairs should wrap counters";
  // Every set of the file was compared: none is hidden behind the cut file's leniency.
  EXPECT_EQ(fig.sets + fig.sets_added_after, static_cast<int>(file.sets.size()));
  RecordProperty("sets", fig.sets);
  RecordProperty("counters_equal", static_cast<int>(fig.equal_counters.size()));
  if (p.gen == Generation::kXeLpg) {
    EXPECT_GT(fig.fixed_by_mtl_patch, 0) << "IGT 1.27.1's MTL thread count and timestamp shift "
                                            "should change some values";
  }
}

std::vector<std::string> parity_platforms() {
  std::vector<std::string> out;
  // IGT 1.27.1's libi915_perf has no Xe2 part (xe2_metrics_test.cc covers LNL, BMG, PTL).
  for (const std::string_view n : platform_names()) {
    if (require_platform_by_name(n).gen != Generation::kXe2) out.emplace_back(n);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllPlatforms, IgtParityTest, ::testing::ValuesIn(parity_platforms()),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace oaprof::oa
