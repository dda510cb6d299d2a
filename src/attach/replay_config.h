// How the interceptor replays a measured kernel, read from the environment oaprof gives the
// program: OAPROF_REPLAY (absent, "", "0", "1" or "off": no replay; "auto": repeat until
// OAPROF_MIN_TIME_MS is covered; N ≥ 2: exactly N passes) and OAPROF_MIN_TIME_MS (--min-window).
// Parsing never throws: the layer must not throw into the program, so a bad value becomes a
// warning and no replay.
#pragma once

#include <cstdint>
#include <string>

namespace oaprof::attach {

// The most passes one launch gets, in either mode: a kernel of a few µs would otherwise need tens
// of thousands of passes to cover a long window.
inline constexpr std::uint32_t kMaxReplayPasses = 10000;
// Used by auto mode when OAPROF_MIN_TIME_MS is absent (oaprof's own --min-window default).
inline constexpr std::uint64_t kDefaultMinTimeNs = 50'000'000;

struct ReplayConfig {
  enum class Mode { kOff, kFixed, kAuto };
  Mode mode = Mode::kOff;
  std::uint32_t passes = 1;                     // kFixed: passes per launch
  std::uint64_t min_time_ns = kDefaultMinTimeNs;  // kAuto: the window the passes must cover

  bool enabled() const { return mode != Mode::kOff; }
};

// `replay` and `min_time_ms` are the variables' values (null when unset). On a bad value
// `warning` says what was wrong and the result is kOff (a bad OAPROF_MIN_TIME_MS only matters in
// auto mode, and then also turns replay off).
ReplayConfig parse_replay_config(const char* replay, const char* min_time_ms, std::string& warning);

}  // namespace oaprof::attach
