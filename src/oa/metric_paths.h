// Where IGT metric files are looked for, computed from the environment the caller passes in (so
// the logic is pure and tested without touching the real home directory): --metrics-xml FILE, then
// each directory of $OAPROF_METRICS_PATH, the user's $XDG_DATA_HOME/oaprof/metrics (where
// `oaprof metrics import` copies files), then <prefix>/share/oaprof/metrics.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace oaprof::oa {

struct MetricSearchEnv {
  std::string metrics_path;   // $OAPROF_METRICS_PATH: directories separated by ':'
  std::string xdg_data_home;  // $XDG_DATA_HOME
  std::string home;           // $HOME
  std::string prefix;         // installation prefix (the directory above bin/)
};

// Directories in search order; empty entries are skipped.
std::vector<std::filesystem::path> metric_search_dirs(const MetricSearchEnv& env);

// $XDG_DATA_HOME/oaprof/metrics, else $HOME/.local/share/oaprof/metrics. Throws
// std::invalid_argument when neither variable is set.
std::filesystem::path user_metrics_dir(const MetricSearchEnv& env);

// "oa-kblgt2.xml" for "kblgt2".
std::string metric_file_name(std::string_view platform_metrics_file);

}  // namespace oaprof::oa
