// Finding and loading metric sets for the user's side of oaprof: the built-in set, IGT files in
// the search path, or the file the user named (opened as the user).
#include "session/metric_source.h"

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "oa/builtin_metric_set.h"
#include "session/trusted_metrics.h"
#include "session/user_file.h"

namespace oaprof::session {

namespace fs = std::filesystem;

namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

}  // namespace

oa::MetricSearchEnv metric_search_env() {
  oa::MetricSearchEnv env;
  env.metrics_path = env_or_empty("OAPROF_METRICS_PATH");
  env.xdg_data_home = env_or_empty("XDG_DATA_HOME");
  env.home = env_or_empty("HOME");
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  // The build tree mirrors the install tree, so <exe>/../share/oaprof/metrics works in both.
  if (!ec) env.prefix = exe.parent_path().parent_path().string();
  return env;
}

// One reader for metric files, shared with oaprofd (same size limit, same messages).
oa::MetricFile load_metric_file(const fs::path& path, const std::optional<Credentials>& as) {
  const int fd = open_user_file(path.string(), UserFileAccess::kRead, as);
  try {
    oa::MetricFile file = read_metric_fd(fd, path.string());
    ::close(fd);
    return file;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

namespace {

// `name` in the first search directory (metric_search_env) that has it; `looked` gets the
// directories tried before.
std::optional<fs::path> search_metric_dirs(const std::string& name, std::string& looked) {
  for (const fs::path& dir : oa::metric_search_dirs(metric_search_env())) {
    std::error_code ec;
    if (fs::is_regular_file(dir / name, ec)) return dir / name;
    looked += (looked.empty() ? "" : ", ") + dir.string();
  }
  return std::nullopt;
}

}  // namespace

std::optional<fs::path> find_metric_file(const oa::Platform& platform,
                                         const std::string& explicit_xml) {
  if (!explicit_xml.empty()) return fs::path(explicit_xml);
  if (platform.metrics_file.empty()) return std::nullopt;
  std::string looked;
  return search_metric_dirs(oa::metric_file_name(platform.metrics_file), looked);
}

MetricChoice resolve_metric_set(const oa::Platform& platform, std::string_view symbol,
                                const std::string& explicit_xml, const MetricFileAccess& access) {
  if (symbol == oa::kBuiltinMetricSetSymbol && explicit_xml.empty()) {
    return {oa::builtin_metric_set(platform), {}};
  }
  fs::path file;
  if (!explicit_xml.empty()) {
    file = access.named(explicit_xml);
  } else {
    if (platform.metrics_file.empty()) {
      throw std::invalid_argument(
          fmt::format("no metric set '{}' for {} {}: {}; use --metric-set {} or give a file with "
                      "--metrics-xml",
                      symbol, platform.codename, oa::gt_label(platform),
                      oa::no_igt_metrics_reason(platform), oa::kBuiltinMetricSetSymbol));
    }
    const std::string name = oa::metric_file_name(platform.metrics_file);
    std::string looked;
    const auto found = access.find(name, looked);
    if (!found) throw std::invalid_argument(access.not_found(platform, name, looked));
    file = *found;
  }
  oa::MetricFile parsed = access.read(file, !explicit_xml.empty());
  for (oa::MetricSet& set : parsed.sets) {
    if (set.symbol() == symbol) return {std::move(set), file};
  }
  std::string names;
  for (const oa::MetricSet& set : parsed.sets) names += (names.empty() ? "" : ", ") + set.symbol();
  throw std::invalid_argument(
      fmt::format("metric set '{}' is not in {}; it has: {}", symbol, file.string(), names));
}

oa::MetricSet load_metric_set(const oa::Platform& platform, std::string_view symbol,
                              const std::string& explicit_xml,
                              const std::optional<Credentials>& as) {
  MetricFileAccess access;
  access.named = [](const std::string& named) { return fs::path(named); };
  access.find = search_metric_dirs;
  access.read = [&as](const fs::path& path, bool) { return load_metric_file(path, as); };
  access.not_found = [](const oa::Platform& part, const std::string& name,
                        const std::string& looked) {
    return fmt::format(
        "no metric file for {} ({}) in {}; give one with --metrics-xml, import IGT's file with "
        "`oaprof metrics import`, or use --metric-set {}",
        part.codename, name, looked.empty() ? "no directory" : looked, oa::kBuiltinMetricSetSymbol);
  };
  return resolve_metric_set(platform, symbol, explicit_xml, access).set;
}

}  // namespace oaprof::session
