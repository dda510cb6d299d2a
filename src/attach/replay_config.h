// How the interceptor replays a measured kernel: OAPROF_REPLAY (absent, "", "0", "1" or "off": no
// replay; "auto": repeat until the run's window, OAPROF_MIN_TIME_MS, is covered; N ≥ 2: exactly N
// passes), parsed for both oaprof's --replay and the layer (through attach/layer_config.h).
// Parsing never throws: the layer must not throw into the program, so a bad value becomes a
// warning and no replay.
#pragma once

#include <cstdint>
#include <string>

namespace oaprof::attach {

// The most passes one launch gets, in either mode: a kernel of a few µs would otherwise need tens
// of thousands of passes to cover a long window.
inline constexpr std::uint32_t kMaxReplayPasses = 10000;

struct ReplayConfig {
  enum class Mode { kOff, kFixed, kAuto };
  Mode mode = Mode::kOff;
  std::uint32_t passes = 1;  // kFixed: passes per launch; kAuto covers LayerConfig::min_window

  bool enabled() const { return mode != Mode::kOff; }
  bool operator==(const ReplayConfig&) const = default;
};

// `replay` is the variable's value (null when unset). On a bad value `warning` says what was
// wrong and the result is kOff.
ReplayConfig parse_replay_config(const char* replay, std::string& warning);

}  // namespace oaprof::attach
