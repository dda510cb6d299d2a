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
};

}  // namespace

std::span<const CounterSourceEntry> counter_sources() { return kSources; }

std::unique_ptr<CounterSource> make_counter_source(std::string_view name, Device& device) {
  std::string valid;
  for (const auto& entry : kSources) {
    if (entry.name == name) return entry.make(device);
    valid += fmt::format("{}{}", valid.empty() ? "" : ", ", entry.name);
  }
  throw std::invalid_argument(fmt::format("unknown access mode '{}'; valid: {}", name, valid));
}

}  // namespace oaprof::gpu
