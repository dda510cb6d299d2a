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

// (id, value) pairs for DRM_IOCTL_I915_PERF_OPEN: SAMPLE_OA, OA_METRICS_SET, OA_FORMAT (uapi
// numbering) and OA_EXPONENT. Throws std::invalid_argument for an exponent outside 0–31.
std::vector<std::uint64_t> perf_open_properties(std::uint64_t config_id, oa::ReportFormat format,
                                                int period_exponent);

// Sampling period of an exponent: (2 << exponent) timestamp ticks.
double perf_period_ns(int period_exponent, double timestamp_hz);

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
