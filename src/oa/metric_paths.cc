#include "oa/metric_paths.h"

#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::oa {

std::vector<std::filesystem::path> metric_search_dirs(const MetricSearchEnv& env) {
  std::vector<std::filesystem::path> dirs;
  std::string_view rest = env.metrics_path;
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    if (!dir.empty()) dirs.emplace_back(dir);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  // The user's copies come before the installed ones so that `oaprof metrics import` of a newer
  // file takes effect without root.
  if (!env.xdg_data_home.empty() || !env.home.empty()) dirs.push_back(user_metrics_dir(env));
  if (!env.prefix.empty()) {
    dirs.push_back(std::filesystem::path(env.prefix) / "share" / "oaprof" / "metrics");
  }
  return dirs;
}

std::filesystem::path user_metrics_dir(const MetricSearchEnv& env) {
  if (!env.xdg_data_home.empty()) {
    return std::filesystem::path(env.xdg_data_home) / "oaprof" / "metrics";
  }
  if (!env.home.empty()) {
    return std::filesystem::path(env.home) / ".local" / "share" / "oaprof" / "metrics";
  }
  throw std::invalid_argument(
      "neither XDG_DATA_HOME nor HOME is set, so there is no user directory for metric files; "
      "set one of them or use --metrics-xml FILE");
}

std::string metric_file_name(std::string_view platform_metrics_file) {
  return fmt::format("oa-{}.xml", platform_metrics_file);
}

}  // namespace oaprof::oa
