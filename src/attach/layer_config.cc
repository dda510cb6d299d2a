#include "attach/layer_config.h"

#include <charconv>
#include <cstdlib>
#include <exception>

#include "attach/launch_filter.h"
#include "ipc/shm_channel.h"

namespace oaprof::attach {
namespace {

// The names programs, scripts and docs rely on: never rename one.
constexpr const char* kMinTimeVar = "OAPROF_MIN_TIME_MS";
constexpr const char* kReplayVar = "OAPROF_REPLAY";
constexpr const char* kAttributionVar = "OAPROF_ATTRIBUTION";
constexpr const char* kSocketVar = "OAPROF_SOCKET";
constexpr const char* kKernelNameVar = "OAPROF_KERNEL_NAME";
constexpr const char* kLaunchSkipVar = "OAPROF_LAUNCH_SKIP";
constexpr const char* kLaunchCountVar = "OAPROF_LAUNCH_COUNT";
constexpr const char* kWorkHintsVar = "OAPROF_WORK_HINTS";
constexpr const char* kChannelVar = ipc::channel::kChannelEnv;
constexpr const char* kSpinVar = ipc::channel::kSpinEnv;
constexpr const char* kQuietVar = "OAPROF_LAYER_QUIET";
constexpr const char* kZeHostWaitVar = "OAPROF_ZE_HOST_WAIT_MS";

// The longest window auto replay covers: longer would take an hour per launch.
constexpr std::chrono::milliseconds kMaxReplayWindow{3'600'000};

// A whole decimal number and nothing else: no sign, no space, no overflow.
std::optional<std::uint64_t> parse_u64(const std::string& text) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

std::string quoted(const char* var, const std::string& value) {
  return std::string(var) + "='" + value + "'";
}

// OAPROF_REPLAY, then OAPROF_MIN_TIME_MS, which decides whether auto replay can run.
void read_replay(const LayerConfig::Getter& get, LayerConfig& c) {
  const std::optional<std::string> replay = get(kReplayVar);
  std::string warning;
  c.replay = parse_replay_config(replay ? replay->c_str() : nullptr, warning);
  if (!warning.empty()) c.errors.push_back(warning);

  const std::optional<std::string> text = get(kMinTimeVar);
  if (!text || text->empty()) return;  // "" is unset, as it always was
  const std::optional<std::uint64_t> ms = parse_u64(*text);
  const bool valid = ms && *ms <= static_cast<std::uint64_t>(kMaxMinWindow.count());
  if (valid) c.min_window = std::chrono::milliseconds(*ms);
  const bool auto_replay = c.replay.mode == ReplayConfig::Mode::kAuto;
  if (auto_replay && (!valid || c.min_window.count() == 0 || c.min_window > kMaxReplayWindow)) {
    c.errors.push_back(quoted(kMinTimeVar, *text) +
                       " is not a window of 1 to 3600000 ms; kernels run once (no replay)");
    c.replay = ReplayConfig{};
  } else if (!valid) {
    c.errors.push_back(quoted(kMinTimeVar, *text) + " is not a whole number of milliseconds; " +
                       "the default " + std::to_string(kDefaultMinWindow.count()) + " ms is used");
  }
}

void read_attribution(const LayerConfig::Getter& get, LayerConfig& c) {
  const std::optional<std::string> v = get(kAttributionVar);
  if (!v || v->empty() || *v == "bracketed") return;
  if (*v == "sampled") {
    c.attribution = Attribution::kSampled;
    return;
  }
  c.errors.push_back(quoted(kAttributionVar, *v) +
                     " is neither 'bracketed' nor 'sampled'; launches are bracketed");
}

// A launch selection that cannot be honoured turns measuring off: rows of the wrong launches
// would be worse than none.
void selection_failed(LayerConfig& c, const std::string& why) {
  c.errors.push_back(why + "; running unprofiled");
  c.measure = false;
}

std::optional<std::uint64_t> read_count(const LayerConfig::Getter& get, const char* var,
                                        LayerConfig& c) {
  const std::optional<std::string> v = get(var);
  if (!v) return std::nullopt;
  const std::optional<std::uint64_t> n = parse_u64(*v);
  if (!n) selection_failed(c, quoted(var, *v) + " is not a whole number");
  return n;
}

void read_selection(const LayerConfig::Getter& get, LayerConfig& c) {
  if (std::optional<std::string> socket = get(kSocketVar); socket && !socket->empty()) {
    c.socket = std::move(*socket);
  }
  if (std::optional<std::string> name = get(kKernelNameVar)) {
    try {
      (void)LaunchFilter(*name, 0, std::nullopt);  // checks a "regex:" filter
      c.kernel_name = std::move(*name);
    } catch (const std::exception& e) {
      selection_failed(c, e.what());
    }
  }
  c.launch_skip = read_count(get, kLaunchSkipVar, c).value_or(0);
  c.launch_count = read_count(get, kLaunchCountVar, c);
  if (const std::optional<std::string> v = get(kWorkHintsVar); v && *v == "1") {
    c.work_hints = true;
  } else if (v && !v->empty() && *v != "0") {
    c.errors.push_back(quoted(kWorkHintsVar, *v) + " is neither 1 nor 0; snapshots name no kernel");
  }
}

void read_ze_host_wait(const LayerConfig::Getter& get, LayerConfig& c) {
  const std::optional<std::string> v = get(kZeHostWaitVar);
  if (!v || v->empty()) return;
  const std::optional<std::uint64_t> ms = parse_u64(*v);
  if (ms && *ms > 0 && *ms <= static_cast<std::uint64_t>(kMaxZeHostWait.count())) {
    c.ze_host_wait = std::chrono::milliseconds(*ms);
    return;
  }
  c.errors.push_back(quoted(kZeHostWaitVar, *v) + " is not 1 to " +
                     std::to_string(kMaxZeHostWait.count()) + " ms; the default " +
                     std::to_string(kDefaultZeHostWait.count()) + " ms is used");
}

void read_user_knobs(const LayerConfig::Getter& get, LayerConfig& c) {
  if (const std::optional<std::string> v = get(kChannelVar); v && *v == "off") {
    c.channel = false;
  } else if (v && !v->empty() && *v != "on") {
    c.errors.push_back(quoted(kChannelVar, *v) +
                       " is neither 'on' nor 'off'; the shared-memory channel is used");
  }
  if (const std::optional<std::string> v = get(kSpinVar); v && !v->empty()) {
    const std::optional<std::uint64_t> us = parse_u64(*v);
    if (us && *us <= static_cast<std::uint64_t>(ipc::channel::kMaxSpin.count())) {
      c.spin = std::chrono::microseconds(*us);
    } else {
      c.errors.push_back(quoted(kSpinVar, *v) + " is not 0 to " +
                         std::to_string(ipc::channel::kMaxSpin.count()) +
                         " µs; the default spin is used");
    }
  }
  // Presence alone, as it always was: OAPROF_LAYER_QUIET=0 is quiet too.
  c.quiet = get(kQuietVar).has_value();
  read_ze_host_wait(get, c);
}

std::string replay_text(const ReplayConfig& replay) {
  switch (replay.mode) {
    case ReplayConfig::Mode::kAuto:
      return "auto";
    case ReplayConfig::Mode::kFixed:
      return std::to_string(replay.passes);
    case ReplayConfig::Mode::kOff:
      break;
  }
  return "off";
}

}  // namespace

const char* attribution_name(Attribution attribution) {
  return attribution == Attribution::kSampled ? "sampled" : "bracketed";
}

std::optional<std::string> process_env(std::string_view name) {
  const char* v = std::getenv(std::string(name).c_str());
  return v != nullptr ? std::optional<std::string>(v) : std::nullopt;
}

std::vector<std::pair<std::string, std::string>> LayerConfig::to_env() const {
  // Always written, so that a value inherited from the user's environment cannot, say, replay
  // behind oaprof's --replay, or send work hints on a real device (to an oaprof whose decoder
  // predates them they are malformed).
  std::vector<std::pair<std::string, std::string>> env{
      {kMinTimeVar, std::to_string(min_window.count())},
      {kReplayVar, replay_text(replay)},
      {kAttributionVar, attribution_name(attribution)},
      {kWorkHintsVar, work_hints ? "1" : "0"}};
  if (socket) env.emplace_back(kSocketVar, *socket);
  if (!kernel_name.empty()) env.emplace_back(kKernelNameVar, kernel_name);
  if (launch_skip > 0) env.emplace_back(kLaunchSkipVar, std::to_string(launch_skip));
  if (launch_count) env.emplace_back(kLaunchCountVar, std::to_string(*launch_count));
  if (!channel) env.emplace_back(kChannelVar, "off");
  if (spin) env.emplace_back(kSpinVar, std::to_string(spin->count()));
  if (quiet) env.emplace_back(kQuietVar, "1");
  if (ze_host_wait) env.emplace_back(kZeHostWaitVar, std::to_string(ze_host_wait->count()));
  return env;
}

LayerConfig LayerConfig::from_env(const Getter& get) {
  LayerConfig c;
  try {
    read_replay(get, c);
    read_attribution(get, c);
    read_selection(get, c);
    read_user_knobs(get, c);
  } catch (...) {  // out of memory, or a getter that threw: pass every call through
    c = LayerConfig{};
    c.measure = false;
    try {
      c.errors.emplace_back("the layer's configuration could not be read; running unprofiled");
    } catch (...) {
      // Nothing left to say it with; measure is off all the same.
    }
  }
  return c;
}

}  // namespace oaprof::attach
