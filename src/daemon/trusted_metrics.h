// Where oaprofd takes metric sets from. A metric set is register programming, so a file a user
// could edit would let that user write registers through the daemon: oaprofd reads only files
// that root owns, in directories only root can change, and clients name a set, never registers.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "mmio/oa_programmer.h"
#include "oa/device_facts.h"
#include "oa/metric_set.h"
#include "oa/metric_xml.h"
#include "oa/platform.h"

namespace oaprof::daemon {

// Where a metric file came from, for the advice in a refusal: a client named it (--metrics-xml)
// or the daemon found it in one of its own --metrics-dir directories.
enum class MetricOrigin { kClient, kDaemonDirectory };

// Throws std::invalid_argument naming the culprit unless `path` is a regular file and it and
// every directory above it belong to `owner` (root) and are not writable by group or others
// (a sticky /tmp is writable by others, so nothing under it is trusted). Symbolic links in the
// chain are refused.
void require_trusted_file(const std::filesystem::path& path, uid_t owner = 0,
                          MetricOrigin origin = MetricOrigin::kClient);

// Reads and imports one metric file (at most 64 MiB). Throws std::invalid_argument for bad
// content and std::runtime_error when it cannot be read.
oa::MetricFile read_metric_file(const std::filesystem::path& path);

struct MetricChoice {
  oa::MetricSet set;
  std::filesystem::path file;  // empty for the built-in set
};

// The set `symbol` for `platform`: Builtin is oaprof's own; otherwise from `explicit_xml` or the
// platform's oa-<name>.xml in the first of `dirs` that has it. Either file must pass
// require_trusted_file (one from `dirs` after its symbolic links are resolved: a directory the
// administrator named is no excuse for a file someone else could have put there). Throws
// std::invalid_argument saying what was looked for, where, and what exists or is wrong.
MetricChoice choose_metric_set(const oa::Platform& platform, std::string_view symbol,
                               const std::string& explicit_xml,
                               const std::vector<std::filesystem::path>& dirs, uid_t owner = 0);

// The register programming of a set on this device (its NOA, boolean and flex writes, chosen by
// availability equations that read the device's own topology).
mmio::OaConfig oa_config_for(const oa::MetricSet& set, const oa::Platform& platform,
                             const oa::DeviceFacts& facts);

}  // namespace oaprof::daemon
