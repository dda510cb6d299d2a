// RAPL through PAPI's rapl or powercap component, for sites that standardise on PAPI. PAPI is
// optional at build time (OAPROF_WITH_PAPI): without it, make_papi_source() still exists and
// reports why it is not available, so callers never need #ifdef. Debian's PAPI has neither
// component; there this backend says so instead of failing obscurely.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>

#include "power/energy_source.h"

namespace oaprof::power {

// Whether this build links PAPI.
bool papi_compiled_in();

// Opens every energy event of PAPI's rapl component (or, failing that, its powercap component).
// `powercap_dir` (normally /sys/class/powercap) names the powercap component's zones. Throws
// std::runtime_error starting "not available: " with the reason when PAPI is compiled out, has
// neither component, or has them disabled (PAPI's own reason is quoted).
std::unique_ptr<EnergySource> make_papi_source(const std::filesystem::path& powercap_dir);

// How one PAPI event maps onto a domain: "rapl:::PACKAGE_ENERGY:PACKAGE0" (nJ) or
// "powercap:::ENERGY_UJ:ZONE0_SUBZONE1" (µJ, the zone's domain read from its sysfs `name`).
// nullopt for events that are not energy in a known plane (limits, raw *_CNT counts, …).
struct PapiEnergyEvent {
  Domain domain;
  double uj_per_unit = 1;
};
std::optional<PapiEnergyEvent> papi_energy_event(std::string_view event_name,
                                                 const std::filesystem::path& powercap_dir);

}  // namespace oaprof::power
