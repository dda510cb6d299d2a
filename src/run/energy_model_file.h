// --energy-model FILE: the model.json that `oaprof model fit` wrote, read as the invoking user and
// checked once at the edge, so that the rows (report/row.h) trust it. A file that is not a usable
// model is a usage error (exit 2) before the device is opened or the program started.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "model/energy_model.h"
#include "oa/platform.h"
#include "session/privilege_drop.h"

namespace oaprof::run {

// model.json is a few kilobytes; anything past this is not one.
inline constexpr std::size_t kMaxEnergyModelBytes = 4 << 20;

// Reads and checks the model at `path`, opened as `as` when given (the user who ran sudo:
// session/user_file.h). Throws base::UsageError naming the file, what is wrong with it and what
// to do: unreadable, too large, not JSON, not a model, or coefficients no fit gives (negative,
// an interval that does not hold its value, a frequency range upside down).
std::shared_ptr<const model::EnergyModel> read_energy_model(
    const std::string& path, const std::optional<session::Credentials>& as);

// Throws base::UsageError unless the model's counters are the device's: its generation's events
// read other counters than another generation's.
void require_model_fits(const model::EnergyModel& model, const oa::Platform& platform,
                        const std::string& path);

}  // namespace oaprof::run
