// One duration syntax for every option of every tool: a non-negative number with a unit, as in
// 250ms, 2s, 1.5s, 500us or 100ns; a bare number is milliseconds (the older options' unit).
#pragma once

#include <chrono>
#include <string_view>

namespace oaprof::base {

// Throws UsageError naming the syntax for anything else (no unit it knows, negative, too large
// for 64-bit nanoseconds).
std::chrono::nanoseconds parse_duration(std::string_view text);

// The same, with the option named in the message ("--interval: ...").
std::chrono::nanoseconds parse_duration(std::string_view option, std::string_view text);

}  // namespace oaprof::base
