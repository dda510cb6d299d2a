#include "gpu/counter_source.h"

#include <array>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace oaprof::gpu {
namespace {

constexpr std::array kSources{
    CounterSourceEntry{"mmio", "read the OA counter registers over the BAR (or the simulator)",
                       &make_mmio_source},
    CounterSourceEntry{"rpc", "MI_REPORT_PERF_COUNT batches through i915 (or the simulator's "
                       "batch interpreter)", &make_rpc_source},
    CounterSourceEntry{"perf", "an i915 perf stream holds the metric set; snapshots by "
                       "MI_REPORT_PERF_COUNT (simulated i915 on --device sim); maps no BAR, so it "
                       "works under kernel lockdown", &make_perf_source, false},
    CounterSourceEntry{"sim", "the mmio read-out on the simulated GPU (--device sim)",
                       &make_sim_source},
};

}  // namespace

std::span<const CounterSourceEntry> counter_sources() { return kSources; }

std::string perf_stream_loss_warning(const PerfStreamCounts& counts) {
  if (counts.reports_lost == 0 && counts.buffer_lost == 0) return {};
  return fmt::format(
      "the i915 perf stream lost reports {} times (OA_REPORT_LOST) and its whole OA buffer {} "
      "times (OA_BUFFER_LOST); the rows whose window saw it are flagged reports_lost or "
      "oa_buffer_lost. Snapshots at kernel boundaries are MI_REPORT_PERF_COUNT and still count, "
      "but the OA unit was stalled or restarted there: raise --oa-exponent for fewer periodic "
      "reports", counts.reports_lost, counts.buffer_lost);
}

bool access_maps_registers(std::string_view name) {
  for (const auto& entry : kSources) {
    if (entry.name == name) return entry.maps_registers;
  }
  return true;
}

std::unique_ptr<CounterSource> make_counter_source(std::string_view name, Device& device) {
  std::string valid;
  for (const auto& entry : kSources) {
    if (entry.name == name) return entry.make(device);
    valid += fmt::format("{}{}", valid.empty() ? "" : ", ", entry.name);
  }
  throw std::invalid_argument(fmt::format("unknown access mode '{}'; valid: {}", name, valid));
}

}  // namespace oaprof::gpu
