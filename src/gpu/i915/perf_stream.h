// The i915 perf interface (reference/hardware.md §6): the pieces of the `perf` read-out that can
// be checked without a GPU — the PERF_OPEN properties, finding a metric set's config id in sysfs,
// the ADD_CONFIG payload and walking the records a stream returns.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "mmio/oa_programmer.h"
#include "oa/report_format.h"

namespace oaprof::gpu {

// i915 uapi numbers newer than the libdrm headers oaprof builds against may be. Source:
// linux include/uapi/drm/i915_drm.h @ Kingxukai/linux 9b44fff655e2c6f4cc53cb499dd2c038e99cb013
// (a mainline mirror): enum drm_i915_perf_property_id counts CTX_HANDLE = 1 to POLL_OA_PERIOD = 8,
// then OA_ENGINE_CLASS 9 and OA_ENGINE_INSTANCE 10 ("available in perf revision 6"); enum
// drm_i915_oa_format ends with OAR 11, A24u40_A14u32_B8_C8 12, the OAM formats 13 and 14;
// I915_ENGINE_CLASS_RENDER is 0. i915_perf.c read_properties_unlocked (same mirror, commit
// 0291023e7330da28f2f7453c87c2ab7082d8360f) defaults class:instance to render 0 and refuses one
// without the other.
inline constexpr std::uint64_t kPerfPropOaEngineClass = 9;
inline constexpr std::uint64_t kPerfPropOaEngineInstance = 10;
inline constexpr std::uint64_t kPerfPropMax = 11;
inline constexpr std::uint64_t kI915OaFormatMax = 15;
inline constexpr std::uint64_t kEngineClassRender = 0;

// (id, value) pairs for DRM_IOCTL_I915_PERF_OPEN: SAMPLE_OA, OA_METRICS_SET, OA_FORMAT (uapi
// numbering) and OA_EXPONENT, and on Xe-LPG OA_ENGINE_CLASS/INSTANCE naming the render engine's
// OA unit (OAG), as Mesa and IGT do there. Gen12 leaves them out: i915 takes render 0 without
// them, and a kernel older than perf revision 6 (Gen12 runs on those) refuses them with EINVAL;
// the kernels that stream OA on Meteor Lake came with them (the same patch series). Throws
// std::invalid_argument for an exponent outside 0–31.
std::vector<std::uint64_t> perf_open_properties(std::uint64_t config_id, oa::ReportFormat format,
                                                int period_exponent,
                                                oa::Generation gen = oa::Generation::kGen9);

// Sampling period of an exponent: (2 << exponent) ticks of the OA timestamp, whose rate is
// I915_PARAM_OA_TIMESTAMP_FREQUENCY (query_oa_timestamp_hz), as i915's oa_exponent_to_ns()
// divides by it; not the CS rate, which differs on Xe-LPG unless the CTC shift is 3.
double perf_period_ns(int period_exponent, double oa_timestamp_hz);

// The id i915 gave a metric set already loaded: <card_dir>/metrics/<guid>/id, e.g.
// /sys/class/drm/card0/metrics/<guid>/id. nullopt when absent.
std::optional<std::uint64_t> find_metrics_config_id(const std::string& card_dir,
                                                    const std::string& guid);

// What read() of a perf stream returned: counts of each record type, and the last sample's
// report. Throws std::runtime_error on a record whose size is impossible.
struct PerfRecordSummary {
  int samples = 0;
  int reports_lost = 0;
  int buffer_lost = 0;
  std::vector<std::uint8_t> last_report;
};
void summarize_perf_records(std::span<const std::uint8_t> bytes, int report_bytes,
                            PerfRecordSummary& summary);

}  // namespace oaprof::gpu
