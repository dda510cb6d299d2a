#include "gpu/i915/perf_stream.h"

#include <algorithm>

#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <i915_drm.h>

#include "gpu/i915/i915_perf.h"

namespace oaprof::gpu {

int add_oa_config(I915Perf& perf, const mmio::OaConfig& config) {
  auto regs = [](const std::vector<oa::RegisterWrite>& ws) {
    std::vector<std::uint32_t> out;
    for (const auto& w : ws) out.insert(out.end(), {w.address, w.value});
    return out;
  };
  const auto mux = regs(config.mux), boolean = regs(config.boolean), flex = regs(config.flex);
  drm_i915_perf_oa_config c{};
  std::memcpy(c.uuid, config.guid.data(), std::min(config.guid.size(), sizeof c.uuid));
  c.n_mux_regs = static_cast<std::uint32_t>(config.mux.size());
  c.n_boolean_regs = static_cast<std::uint32_t>(config.boolean.size());
  c.n_flex_regs = static_cast<std::uint32_t>(config.flex.size());
  c.mux_regs_ptr = reinterpret_cast<std::uintptr_t>(mux.data());
  c.boolean_regs_ptr = reinterpret_cast<std::uintptr_t>(boolean.data());
  c.flex_regs_ptr = reinterpret_cast<std::uintptr_t>(flex.data());
  return perf.add_config(c);
}

std::vector<std::uint64_t> perf_open_properties(std::uint64_t config_id, oa::ReportFormat format,
                                                int period_exponent, oa::Generation gen) {
  if (period_exponent < 0 || period_exponent > 31) {
    throw std::invalid_argument(fmt::format(
        "OA period exponent {} is outside 0–31; the period is (2 << exponent) timestamp ticks",
        period_exponent));
  }
  std::vector<std::uint64_t> props{
      DRM_I915_PERF_PROP_SAMPLE_OA,      1,
      DRM_I915_PERF_PROP_OA_METRICS_SET, config_id,
      DRM_I915_PERF_PROP_OA_FORMAT,      static_cast<std::uint64_t>(oa::to_uapi(format)),
      DRM_I915_PERF_PROP_OA_EXPONENT,    static_cast<std::uint64_t>(period_exponent)};
  if (oa::is_xehp_oa(gen)) {
    props.insert(props.end(),
                 {kPerfPropOaEngineClass, kEngineClassRender, kPerfPropOaEngineInstance, 0});
  }
  return props;
}

double perf_period_ns(int period_exponent, double oa_timestamp_hz) {
  return std::ldexp(2.0, period_exponent) * 1e9 / oa_timestamp_hz;
}

std::optional<std::uint64_t> find_metrics_config_id(const std::string& card_dir,
                                                    const std::string& guid) {
  std::ifstream f(card_dir + "/metrics/" + guid + "/id");
  std::uint64_t id = 0;
  if (!(f >> id)) return std::nullopt;
  return id;
}

void summarize_perf_records(std::span<const std::uint8_t> bytes, int report_bytes,
                            PerfRecordSummary& summary) {
  std::size_t at = 0;
  while (at < bytes.size()) {
    drm_i915_perf_record_header h{};
    if (bytes.size() - at < sizeof h) {
      throw std::runtime_error(
          fmt::format("i915 perf stream: {} bytes left at offset {}, less than a record header",
                      bytes.size() - at, at));
    }
    std::memcpy(&h, bytes.data() + at, sizeof h);
    if (h.size < sizeof h || h.size > bytes.size() - at) {
      throw std::runtime_error(
          fmt::format("i915 perf stream: record at offset {} claims {} bytes, {} are left", at,
                      h.size, bytes.size() - at));
    }
    switch (h.type) {
      case DRM_I915_PERF_RECORD_SAMPLE:
        if (h.size != sizeof h + static_cast<std::size_t>(report_bytes)) {
          throw std::runtime_error(
              fmt::format("i915 perf stream: sample of {} bytes, expected a {}-byte report",
                          h.size - sizeof h, report_bytes));
        }
        ++summary.samples;
        summary.last_report.assign(bytes.begin() + static_cast<std::ptrdiff_t>(at + sizeof h),
                                   bytes.begin() + static_cast<std::ptrdiff_t>(at + h.size));
        break;
      case DRM_I915_PERF_RECORD_OA_REPORT_LOST:
        ++summary.reports_lost;
        break;
      case DRM_I915_PERF_RECORD_OA_BUFFER_LOST:
        ++summary.buffer_lost;
        break;
      default:
        break;  // newer record types carry nothing oaprof uses
    }
    at += h.size;
  }
}

}  // namespace oaprof::gpu
