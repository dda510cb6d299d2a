// Where oaprofd takes metric sets from. A metric set is register programming, so a file a user
// could edit would let that user write registers through the daemon, and a file a user could
// name anywhere would let that user read it through the daemon's error messages: oaprofd reads
// only regular *.xml files under its own metric directories, that root owns, in directories only
// root can change, walked without following a link; an import error names the file, never its
// content; clients name a set, never registers.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "mmio/oa_programmer.h"
#include "oa/device_facts.h"
#include "oa/metric_set.h"
#include "oa/metric_xml.h"
#include "oa/platform.h"
#include "session/metric_source.h"

namespace oaprof::session {

// Where a metric file came from, for the advice in a refusal: a client named it (--metrics-xml)
// or the daemon found it in one of its own --metrics-dir directories.
enum class MetricOrigin { kClient, kDaemonDirectory };

// Opens `path` (absolute) for reading after checking, one component at a time from the root and
// without following a symbolic link anywhere, that every directory on the way and the file itself
// belong to `owner` (root) and are not writable by group or others (a sticky /tmp is writable by
// others, so nothing under it is trusted), and that the file is a regular file. Returns the
// descriptor of exactly the file checked (close-on-exec; the caller closes it). Throws
// std::invalid_argument naming the culprit.
int open_trusted_file(const std::filesystem::path& path, uid_t owner = 0,
                      MetricOrigin origin = MetricOrigin::kClient);
// open_trusted_file without keeping the descriptor.
void require_trusted_file(const std::filesystem::path& path, uid_t owner = 0,
                          MetricOrigin origin = MetricOrigin::kClient);

// A file a client names with --metrics-xml, as oaprofd will walk it: an absolute *.xml path
// without "." or ".." components, inside one of `dirs` (as configured, or with their links
// resolved), rewritten onto that directory's resolved path. Throws std::invalid_argument saying
// why and where metric files go instead.
std::filesystem::path client_metric_path(const std::string& requested,
                                         const std::vector<std::filesystem::path>& dirs);

// Reads and imports one metric file from an open descriptor (at most 64 MiB); `name` names it in
// messages. Throws std::invalid_argument for bad content (the importer's message, which may quote
// the file) and std::runtime_error when it cannot be read.
oa::MetricFile read_metric_fd(int fd, const std::string& name);
// The same, opened by path as whoever calls it.
oa::MetricFile read_metric_file(const std::filesystem::path& path);

// An import that failed in oaprofd: what() names the file and says it is not a valid metric file;
// detail() has the importer's message, which may quote the file, for the daemon's log only.
class MetricImportError : public std::invalid_argument {
 public:
  MetricImportError(const std::string& what, std::string detail)
      : std::invalid_argument(what), detail_(std::move(detail)) {}
  const std::string& detail() const { return detail_; }

 private:
  std::string detail_;
};

// resolve_metric_set (session/metric_source.h) as oaprofd reads metric files. The set `symbol`
// for `platform`: Builtin is oaprof's own; otherwise from `explicit_xml` (which
// must pass client_metric_path) or the platform's oa-<name>.xml in the first of `dirs` that has
// it. Either file is read through open_trusted_file (one from `dirs` after its symbolic links are
// resolved: a directory the administrator named is no excuse for a file someone else could have
// put there). Throws std::invalid_argument saying what was looked for, where, and what exists or
// is wrong, and MetricImportError for a file that does not import.
MetricChoice choose_metric_set(const oa::Platform& platform, std::string_view symbol,
                               const std::string& explicit_xml,
                               const std::vector<std::filesystem::path>& dirs, uid_t owner = 0);

// The register programming of a set on this device (its NOA, boolean and flex writes, chosen by
// availability equations that read the device's own topology).
mmio::OaConfig oa_config_for(const oa::MetricSet& set, const oa::Platform& platform,
                             const oa::DeviceFacts& facts);

}  // namespace oaprof::session
