#include "run/energy_model_file.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "session/user_file.h"

namespace oaprof::run {
namespace {

constexpr const char* kRefit = "write it with `oaprof model fit` (docs/energy.md)";

bool finite_nonnegative(double v) { return std::isfinite(v) && v >= 0; }

// A coefficient a non-negative fit can give: finite, not negative, inside its interval.
void check_coefficient(const model::Coefficient& c, const std::string& path) {
  const bool ok = finite_nonnegative(c.value) && finite_nonnegative(c.low) &&
                  std::isfinite(c.high) && c.low <= c.value && c.value <= c.high &&
                  finite_nonnegative(c.rate_min) && std::isfinite(c.rate_max) &&
                  c.rate_min <= c.rate_max;
  if (!ok) {
    throw base::UsageError(fmt::format(
        "--energy-model {}: coefficient {} is {} with interval [{}, {}] and calibration rates "
        "[{}, {}]: a fit gives non-negative values inside their intervals; {}",
        path, c.name, c.value, c.low, c.high, c.rate_min, c.rate_max, kRefit));
  }
}

void check_model(const model::EnergyModel& m, const std::string& path) {
  check_coefficient(m.static_power, path);
  for (const model::Coefficient& c : m.events) check_coefficient(c, path);
  if (!finite_nonnegative(m.freq_min_mhz) || !std::isfinite(m.freq_max_mhz) ||
      m.freq_min_mhz > m.freq_max_mhz) {
    throw base::UsageError(
        fmt::format("--energy-model {}: frequency range {}-{} MHz is not a "
                    "range; {}",
                    path, m.freq_min_mhz, m.freq_max_mhz, kRefit));
  }
  if (!finite_nonnegative(m.loo_rms_relative)) {
    throw base::UsageError(
        fmt::format("--energy-model {}: leave_one_kernel_out.rms_relative is {}, not an error; {}",
                    path, m.loo_rms_relative, kRefit));
  }
}

}  // namespace

std::shared_ptr<const model::EnergyModel> read_energy_model(
    const std::string& path, const std::optional<session::Credentials>& as) {
  std::string text;
  try {
    text = session::read_user_file(path, kMaxEnergyModelBytes, as);
  } catch (const session::UserFileError& e) {
    throw base::UsageError(fmt::format("--energy-model: {}; {}", e.what(), kRefit));
  }
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    throw base::UsageError(fmt::format("--energy-model {}: not JSON; {}", path, kRefit));
  }
  try {
    auto m = std::make_shared<model::EnergyModel>(model::model_from_json(doc));
    check_model(*m, path);
    return m;
  } catch (const base::UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw base::UsageError(fmt::format("--energy-model {}: {}; {}", path, e.what(), kRefit));
  }
}

void require_model_fits(const model::EnergyModel& model, const oa::Platform& platform,
                        const std::string& path) {
  if (model.generation == platform.gen) return;
  throw base::UsageError(fmt::format(
      "--energy-model {}: the model is of {} ({}), the device is {} ({}): its events read "
      "another generation's counters; calibrate one on this device (`oaprof model fit`)",
      path, model.platform, oa::generation_name(model.generation),
      std::string(platform.codename) + " " + oa::gt_label(platform),
      oa::generation_name(platform.gen)));
}

}  // namespace oaprof::run
