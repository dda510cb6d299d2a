// The PAPI event-name grammar, compiled whether or not PAPI is, so it is tested in both builds.
#include <string>

#include "power/papi_source.h"
#include "power/powercap.h"
#include "power/sysfs_file.h"

namespace oaprof::power {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

std::optional<PapiEnergyEvent> papi_energy_event(std::string_view event_name,
                                                 const std::filesystem::path& powercap_dir) {
  constexpr std::string_view kRapl = "rapl:::";
  constexpr std::string_view kPowercap = "powercap:::ENERGY_UJ:ZONE";
  if (starts_with(event_name, kRapl)) {
    const std::string_view rest = event_name.substr(kRapl.size());
    constexpr struct {
      std::string_view prefix;
      Domain domain;
    } kRaplEvents[] = {
        {"PACKAGE_ENERGY:", Domain::kPackage}, {"PP0_ENERGY:", Domain::kCores},
        {"PP1_ENERGY:", Domain::kUncore},      {"DRAM_ENERGY:", Domain::kDram},
        {"PSYS_ENERGY:", Domain::kPsys},
    };
    for (const auto& e : kRaplEvents) {
      // The rapl component counts in nanojoules.
      if (starts_with(rest, e.prefix)) return PapiEnergyEvent{e.domain, 1e-3};
    }
    return std::nullopt;
  }
  if (starts_with(event_name, kPowercap)) {
    // ZONE<n> or ZONE<n>_SUBZONE<m>: the sysfs zone intel-rapl:<n> or intel-rapl:<n>:<m>.
    const std::string rest(event_name.substr(kPowercap.size()));
    const auto sub = rest.find("_SUBZONE");
    const auto zone = detail::parse_u64(rest.substr(0, sub));
    std::string dir = "intel-rapl:";
    if (!zone) return std::nullopt;
    dir += std::to_string(*zone);
    if (sub != std::string::npos) {
      const auto subzone = detail::parse_u64(rest.substr(sub + 8));
      if (!subzone) return std::nullopt;
      dir += ":" + std::to_string(*subzone);
    }
    const auto name = detail::read_line(powercap_dir / dir / "name");
    if (!name) return std::nullopt;
    const auto domain = powercap_zone_domain(*name);
    if (!domain) return std::nullopt;
    return PapiEnergyEvent{*domain, 1.0};
  }
  return std::nullopt;
}

}  // namespace oaprof::power
