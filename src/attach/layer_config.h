// The one contract between oaprof and its in-process layer: every value oaprof tells the layer,
// typed. oaprof writes it to the program's environment in one place (run/profile_run.cc,
// program_spec, through to_env) and the layer reads it back in one place (from_env, called once
// by the interceptor); nothing else reads these variables.
//
// Not part of this contract, and so read where they are: OAPROF_DAEMON_SOCKET and
// OAPROF_STATE_DIR (oaprof's own, session/daemon_paths.h), OAPROF_METRICS_PATH (session's
// metric-set lookup), OAPROF_KERNEL_DIR (kernel_runner's kernels, bench/runner.cc), OAPROF_LAYER
// and OAPROF_PRELOAD (the libraries oaprof injects, run/profile_run.cc). OAPROF_CHANNEL and
// OAPROF_SPIN_US are read here for the layer's end, and also by oaprof and oaprofd for their own
// ends (session/server.cc, session/remote_source.cc, daemon/oaprofd.cc), which cannot include
// this floor.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attach/replay_config.h"

namespace oaprof::attach {

// How counters are given to launches (`oaprof --attribution`): snapshots around each launch, or
// the launch's timestamps placed on a timeline that oaprof samples.
enum class Attribution { kBracketed, kSampled };

// "bracketed" or "sampled": OAPROF_ATTRIBUTION's values and the rows' metadata.
const char* attribution_name(Attribution attribution);

// The default window a replay covers, and the longest a variable may name (its nanoseconds must
// fit the layer's 64-bit clock arithmetic).
inline constexpr std::chrono::milliseconds kDefaultMinWindow{50};
inline constexpr std::chrono::milliseconds kMaxMinWindow{9'000'000'000'000};
// How long the Level Zero layer waits for what a bracketed launch waits on, unless
// OAPROF_ZE_HOST_WAIT_MS says otherwise, and the longest that variable may name.
inline constexpr std::chrono::milliseconds kDefaultZeHostWait{2000};
inline constexpr std::chrono::milliseconds kMaxZeHostWait{600'000};

struct LayerConfig {
  // Name to value; nullopt when the variable is unset. The layer passes a getenv wrapper; tests
  // pass a map, so they need not touch the process environment.
  using Getter = std::function<std::optional<std::string>(std::string_view name)>;

  // Written by oaprof for every program it starts.
  std::chrono::milliseconds min_window = kDefaultMinWindow;  // OAPROF_MIN_TIME_MS: --min-window
  ReplayConfig replay;                                       // OAPROF_REPLAY: --replay
  Attribution attribution = Attribution::kBracketed;         // OAPROF_ATTRIBUTION

  // Written in kernel mode only: the run's socket and the launch selection.
  std::optional<std::string> socket;          // OAPROF_SOCKET; nullopt: not started by oaprof
  std::string kernel_name;                    // OAPROF_KERNEL_NAME: empty, a name or "regex:RE"
  std::uint64_t launch_skip = 0;              // OAPROF_LAUNCH_SKIP
  std::optional<std::uint64_t> launch_count;  // OAPROF_LAUNCH_COUNT; nullopt: no limit
  // OAPROF_WORK_HINTS=1, on a simulated device: each 'before' snapshot names its kernel and
  // work-items (ipc::wire::WorkHint), so the simulator counts a catalogue kernel's known work.
  // Never on a real one, nor for an oaprof that predates it (its decoder would refuse them):
  // oaprof writes OAPROF_WORK_HINTS=0 there, so a value the user's environment holds cannot
  // turn them on.
  bool work_hints = false;

  // Never written by oaprof: knobs the user sets, which reach the program through the
  // environment it inherits from oaprof.
  bool channel = true;                            // OAPROF_CHANNEL=off: the socket alone
  std::optional<std::chrono::microseconds> spin;  // OAPROF_SPIN_US; nullopt: ipc's default
  bool quiet = false;  // OAPROF_LAYER_QUIET (set, any value): no start note
  // OAPROF_ZE_HOST_WAIT_MS, for tests only (docs/level-zero.md): how long the Level Zero layer
  // waits for a bracketed launch's waits before it measures it over a wider window
  // (not_bracketed); nullopt: kDefaultZeHostWait. Tests shorten it so that a launch the host
  // holds does not cost them the default's seconds.
  std::optional<std::chrono::milliseconds> ze_host_wait;

  // What from_env found wrong, one message a bad variable, for the layer to log once. Each bad
  // value was replaced by its default. `measure` is false when a bad value makes measuring
  // wrong (a launch selection that cannot be honoured): the layer then passes every call through.
  std::vector<std::string> errors;
  bool measure = true;

  // The variables that give this configuration back through from_env. A value equal to its
  // default is left out where leaving it out keeps what the program inherited (the launch
  // selection, the user's knobs), so the user's own OAPROF_CHANNEL still reaches the layer.
  std::vector<std::pair<std::string, std::string>> to_env() const;

  // Reads and checks every variable. Never throws: the layer must not change the host program.
  static LayerConfig from_env(const Getter& get);

  bool operator==(const LayerConfig&) const = default;
};

// The Getter over this process's environment, for the layer (and kernel_runner, which sizes its
// repetitions by the run's window).
std::optional<std::string> process_env(std::string_view name);

}  // namespace oaprof::attach
