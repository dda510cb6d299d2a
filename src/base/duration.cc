#include "base/duration.h"

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "base/errors.h"

namespace oaprof::base {

std::chrono::nanoseconds parse_duration(std::string_view text) {
  const std::string s(text);
  auto bad = [&] {
    return UsageError(fmt::format(
        "'{}' is not a duration: write a non-negative number with a unit, like 250ms, 1s, 1.5s "
        "or 500us (a bare number is milliseconds)",
        s));
  };
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(s, &pos);
  } catch (const std::exception&) {
    throw bad();
  }
  const std::string unit = s.substr(pos);
  double to_ns = 0;
  if (unit.empty() || unit == "ms") {
    to_ns = 1e6;
  } else if (unit == "s") {
    to_ns = 1e9;
  } else if (unit == "us") {
    to_ns = 1e3;
  } else if (unit == "ns") {
    to_ns = 1;
  } else {
    throw bad();
  }
  // The upper bound keeps the product inside 64 bits (about 292 years).
  if (!(v >= 0) || v * to_ns > 9.2e18) throw bad();
  return std::chrono::nanoseconds(static_cast<std::int64_t>(v * to_ns));
}

std::chrono::nanoseconds parse_duration(std::string_view option, std::string_view text) {
  try {
    return parse_duration(text);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", option, e.what()));
  }
}

}  // namespace oaprof::base
