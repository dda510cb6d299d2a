// The PAPI backend of a build without PAPI (OAPROF_WITH_PAPI off or libpapi-dev absent).
#include <stdexcept>

#include "power/papi_source.h"

namespace oaprof::power {

bool papi_compiled_in() { return false; }

std::unique_ptr<EnergySource> make_papi_source(const std::filesystem::path&) {
  throw std::runtime_error(
      "not available: this oaprof was built without PAPI (install libpapi-dev and configure with "
      "-DOAPROF_WITH_PAPI=ON); use --energy powercap, perf or msr");
}

}  // namespace oaprof::power
