#include "attach/replay_config.h"

#include <charconv>
#include <cstring>

namespace oaprof::attach {
namespace {

bool parse_u64(const char* s, std::uint64_t& value) {
  const char* end = s + std::strlen(s);
  const auto [ptr, ec] = std::from_chars(s, end, value);
  return ec == std::errc() && ptr == end && ptr != s;
}

}  // namespace

ReplayConfig parse_replay_config(const char* replay, std::string& warning) {
  ReplayConfig config;
  const std::string r = replay ? replay : "";
  if (r.empty() || r == "0" || r == "1" || r == "off") return config;
  if (r == "auto") {
    config.mode = ReplayConfig::Mode::kAuto;
    return config;
  }
  std::uint64_t n = 0;
  if (!parse_u64(r.c_str(), n) || n > kMaxReplayPasses) {
    warning = "OAPROF_REPLAY='" + r + "' is neither 'auto' nor a pass count of 0 to " +
              std::to_string(kMaxReplayPasses) + "; kernels run once (no replay)";
    return config;
  }
  config.mode = ReplayConfig::Mode::kFixed;
  config.passes = static_cast<std::uint32_t>(n);
  return config;
}

}  // namespace oaprof::attach
