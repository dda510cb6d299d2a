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
