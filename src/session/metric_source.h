// Finding, reading and importing metric files on the user's side of oaprof (the profile run,
// `oaprof metrics`, `oaprof decode`): the file I/O around src/oa's pure importer and search-path
// logic.
#pragma once

#include <filesystem>
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

// The set `symbol` of the platform: "Builtin" is oaprof's own; anything else comes from the
// platform's metric file, read as load_metric_file reads it. Throws std::invalid_argument saying
// where it looked and what exists.
oa::MetricSet load_metric_set(const oa::Platform& platform, std::string_view symbol,
                              const std::string& explicit_xml,
                              const std::optional<Credentials>& as = std::nullopt);

}  // namespace oaprof::session
