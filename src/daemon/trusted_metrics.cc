#include "daemon/trusted_metrics.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "oa/builtin_metric_set.h"
#include "oa/metric_paths.h"
#include "oa/topology.h"

namespace oaprof::daemon {
namespace fs = std::filesystem;

namespace {
constexpr std::uintmax_t kMaxMetricFileBytes = 64u << 20;
}  // namespace

void require_trusted_file(const fs::path& path, uid_t owner, MetricOrigin origin) {
  const bool client = origin == MetricOrigin::kClient;
  const char* what = client ? "--metrics-xml" : "oaprofd's --metrics-dir";
  if (!path.is_absolute()) {
    throw std::invalid_argument(
        fmt::format("{} {}: oaprofd needs an absolute path", what, path.string()));
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw std::invalid_argument(
        fmt::format("{} {}: {}", what, path.string(), std::strerror(errno)));
  }
  // stat succeeded, so errno says nothing about this: name what the path is instead.
  if (!S_ISREG(st.st_mode)) {
    throw std::invalid_argument(fmt::format(
        "{} {}: not a regular file ({}); name an IGT metric file such as oa-kblgt2.xml", what,
        path.string(), S_ISDIR(st.st_mode) ? "a directory" : "a device, socket or pipe"));
  }
  // lstat on every component, so that a symbolic link cannot lead out of the checked chain.
  fs::path p = path;
  for (;;) {
    if (::lstat(p.c_str(), &st) != 0) {
      throw std::invalid_argument(
          fmt::format("{}: cannot check {}: {}", what, p.string(), std::strerror(errno)));
    }
    if (S_ISLNK(st.st_mode) || st.st_uid != owner || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
      const std::string culprit =
          S_ISLNK(st.st_mode) ? std::string("a symbolic link")
          : st.st_uid != owner ? fmt::format("owned by uid {}", st.st_uid)
                               : std::string("writable by group or others");
      throw std::invalid_argument(fmt::format(
          "oaprofd refuses the metric file {}: {} is {}; metric files program registers, so the "
          "daemon reads only files that root owns in directories only root can change. {}",
          path.string(), p.string(), culprit,
          client ? "Install it with `sudo install -m 644 FILE /usr/local/share/oaprof/metrics/` "
                   "or use a set from the daemon's directories"
                 : "The administrator can make it and every directory above it root's and "
                   "writable only by root (`sudo chown root: PATH; sudo chmod go-w PATH`), or "
                   "take the directory out of oaprofd's --metrics-dir"));
    }
    if (p == p.root_path()) break;
    p = p.parent_path();
  }
}

oa::MetricFile read_metric_file(const fs::path& path) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) {
    throw std::runtime_error(
        fmt::format("cannot read metric file {}: {}", path.string(), ec.message()));
  }
  if (size > kMaxMetricFileBytes) {
    throw std::runtime_error(fmt::format(
        "metric file {} is {} bytes; IGT files are under 1 MiB and oaprof reads at most {}",
        path.string(), size, kMaxMetricFileBytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot open metric file {}", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return oa::import_metrics_xml(text.str(), path.string());
}

MetricChoice choose_metric_set(const oa::Platform& platform, std::string_view symbol,
                               const std::string& explicit_xml, const std::vector<fs::path>& dirs,
                               uid_t owner) {
  if (symbol == oa::kBuiltinMetricSetSymbol && explicit_xml.empty()) {
    return {oa::builtin_metric_set(platform), {}};
  }
  fs::path file;
  if (!explicit_xml.empty()) {
    require_trusted_file(explicit_xml, owner, MetricOrigin::kClient);
    file = explicit_xml;
  } else {
    if (platform.metrics_file.empty()) {
      throw std::invalid_argument(fmt::format(
          "no metric set '{}' for {} {}: {}; use --metric-set {} or name a file with "
          "--metrics-xml",
          symbol, platform.codename,
          oa::gt_label(platform), oa::no_igt_metrics_reason(platform),
          oa::kBuiltinMetricSetSymbol));
    }
    const std::string name = oa::metric_file_name(platform.metrics_file);
    std::string looked;
    for (const fs::path& d : dirs) {
      std::error_code ec;
      if (fs::exists(d / name, ec)) {
        // The configured path may run through symbolic links (a versioned prefix); the file
        // read is the resolved one, and that is what must be root's all the way up, so that no
        // one else can swap what is read after the check.
        const fs::path resolved = fs::canonical(d / name, ec);
        if (ec) {
          throw std::invalid_argument(fmt::format("oaprofd's --metrics-dir: cannot resolve {}: {}",
                                                  (d / name).string(), ec.message()));
        }
        require_trusted_file(resolved, owner, MetricOrigin::kDaemonDirectory);
        file = resolved;
        break;
      }
      looked += (looked.empty() ? "" : ", ") + d.string();
    }
    if (file.empty()) {
      throw std::invalid_argument(fmt::format(
          "oaprofd has no metric file for {} ({}) in {}; the administrator can add IGT's file "
          "to one of oaprofd's --metrics-dir directories, or use --metric-set {}",
          platform.codename, name,
          looked.empty() ? "no directory" : looked, oa::kBuiltinMetricSetSymbol));
    }
  }
  oa::MetricFile parsed = read_metric_file(file);
  for (oa::MetricSet& set : parsed.sets) {
    if (set.symbol() == symbol) return {std::move(set), file};
  }
  std::string names;
  for (const oa::MetricSet& set : parsed.sets) names += (names.empty() ? "" : ", ") + set.symbol();
  throw std::invalid_argument(
      fmt::format("metric set '{}' is not in {}; it has: {}", symbol, file.string(), names));
}

mmio::OaConfig oa_config_for(const oa::MetricSet& set, const oa::Platform& platform) {
  using Kind = oa::RegisterConfig::Kind;
  oa::DeviceVariables vars = oa::device_variables(platform);
  vars.timestamp_frequency_hz = static_cast<std::uint64_t>(platform.timestamp_hz);
  return mmio::OaConfig{set.guid(), set.writes(Kind::kNoa, vars), set.writes(Kind::kBoolean, vars),
                        set.writes(Kind::kFlex, vars)};
}

}  // namespace oaprof::daemon
