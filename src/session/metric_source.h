// Finding, reading and importing metric files on the user's side of oaprof (the profile run,
// `oaprof metrics`, `oaprof decode`): the file I/O around src/oa's pure importer and search-path
// logic.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "oa/metric_paths.h"
#include "oa/metric_set.h"
#include "oa/metric_xml.h"
#include "oa/platform.h"
#include "session/privilege_drop.h"

namespace oaprof::session {

// The search environment of this process: $OAPROF_METRICS_PATH, $XDG_DATA_HOME, $HOME, and the
// prefix above the directory of the oaprof executable.
oa::MetricSearchEnv metric_search_env();

// Reads and imports one file, opened as `as` when given (the user who ran sudo:
// session/user_file.h), else as this process. Throws std::invalid_argument (bad content) or
// std::runtime_error (unreadable, or larger than 64 MiB).
oa::MetricFile load_metric_file(const std::filesystem::path& path,
                                const std::optional<Credentials>& as = std::nullopt);

// `explicit_xml` when given, else the first oa-<platform>.xml of the search directories; nullopt
// when there is none.
std::optional<std::filesystem::path> find_metric_file(const oa::Platform& platform,
                                                      const std::string& explicit_xml);

// Where one side of oaprof finds and how it reads metric files; the user's side (below) and
// oaprofd (trusted_metrics.h) differ only here.
struct MetricFileAccess {
  // The file --metrics-xml names, as this side may read it (oaprofd: only inside its directories;
  // throws std::invalid_argument for one it refuses).
  std::function<std::filesystem::path(const std::string& named)> named;
  // The platform's oa-<name>.xml in the first directory that has it, else nullopt with `looked`
  // the directories tried, comma-separated.
  std::function<std::optional<std::filesystem::path>(const std::string& file_name,
                                                     std::string& looked)>
      find;
  // Reads and imports a file; `named` says whether the user named it.
  std::function<oa::MetricFile(const std::filesystem::path& path, bool named)> read;
  // The refusal when `find` found nothing, given the platform, the file name and `looked`.
  std::function<std::string(const oa::Platform&, const std::string& file_name,
                            const std::string& looked)>
      not_found;
};

struct MetricChoice {
  oa::MetricSet set;
  std::filesystem::path file;  // empty for the built-in set
};

// The one metric-set resolver: "Builtin" (without --metrics-xml) is oaprof's own set; anything
// else is the set `symbol` of the file --metrics-xml names, or of the platform's own file, as
// `access` finds and reads it. Throws std::invalid_argument saying where it looked and what
// exists.
MetricChoice resolve_metric_set(const oa::Platform& platform, std::string_view symbol,
                                const std::string& explicit_xml, const MetricFileAccess& access);

// resolve_metric_set on the user's side: the search path (metric_search_env), files read as
// load_metric_file reads them.
oa::MetricSet load_metric_set(const oa::Platform& platform, std::string_view symbol,
                              const std::string& explicit_xml,
                              const std::optional<Credentials>& as = std::nullopt);

}  // namespace oaprof::session
