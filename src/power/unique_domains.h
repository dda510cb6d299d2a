// The domains of a backend's counters, each once in first-seen order: several packages (or
// several events) feed one domain. Private to src/power.
#pragma once

#include <algorithm>
#include <vector>

#include "power/energy_source.h"

namespace oaprof::power::detail {

template <typename Items>
std::vector<Domain> unique_domains(const Items& items) {
  std::vector<Domain> out;
  for (const auto& item : items) {
    if (std::find(out.begin(), out.end(), item.domain) == out.end()) out.push_back(item.domain);
  }
  return out;
}

}  // namespace oaprof::power::detail
