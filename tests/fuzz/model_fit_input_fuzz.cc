// Fuzzes what `oaprof model fit --from RUN.json` reads from the user's file: any JSON document must
// give a model identity and samples or be refused with std::invalid_argument (the command's
// message and exit 2), never crash or convert a cell into a count it is not; and samples that
// were accepted must go through the fit, which may refuse them (FitError) but not fail otherwise.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

#include "model/fit.h"
#include "run/energy_calibration.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace oaprof;
  const nlohmann::json run = nlohmann::json::parse(
      std::string_view(reinterpret_cast<const char*>(data), size), nullptr, false);
  if (run.is_discarded()) return 0;  // not JSON: read_run refuses it before these
  try {
    const model::ModelIdentity identity = run::identity_of_run(run);
    const std::vector<model::Sample> samples = run::samples_from_run(run);
    // A handful of bootstrap replicates: the fit's arithmetic, not its statistics, is fuzzed.
    if (!samples.empty() && samples.size() <= 64) {
      (void)model::fit_energy_model(samples, identity, {2, 0.95, 1});
    }
  } catch (const model::FitError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
