#include "session/trusted_metrics.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "oa/builtin_metric_set.h"
#include "oa/metric_paths.h"
#include "oa/topology.h"
#include "session/metric_source.h"

namespace oaprof::session {
namespace fs = std::filesystem;

namespace {
constexpr std::uintmax_t kMaxMetricFileBytes = 64u << 20;
}  // namespace

namespace {

const char* origin_name(MetricOrigin origin) {
  return origin == MetricOrigin::kClient ? "--metrics-xml" : "oaprofd's --metrics-dir";
}

[[noreturn]] void refuse(const fs::path& path, const fs::path& culprit, const std::string& what,
                         MetricOrigin origin) {
  throw std::invalid_argument(fmt::format(
      "oaprofd refuses the metric file {}: {} is {}; metric files program registers, so the "
      "daemon reads only files that root owns in directories only root can change. {}",
      path.string(), culprit.string(), what,
      origin == MetricOrigin::kClient
          ? "Install it with `sudo install -m 644 FILE /usr/local/share/oaprof/metrics/` or use a "
            "set from the daemon's directories"
          : "The administrator can make it and every directory above it root's and writable only "
            "by root (`sudo chown root: PATH; sudo chmod go-w PATH`), or take the directory out "
            "of oaprofd's --metrics-dir"));
}

// Checks what `fd` (an O_PATH descriptor of `p`, a component of `path`) is; `last` for the file.
void check_component(int fd, const fs::path& path, const fs::path& p, bool last, uid_t owner,
                     MetricOrigin origin) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    throw std::invalid_argument(fmt::format("{}: cannot check {}: {}", origin_name(origin),
                                            p.string(), std::strerror(errno)));
  }
  if (S_ISLNK(st.st_mode)) refuse(path, p, "a symbolic link", origin);
  if (last && !S_ISREG(st.st_mode)) {
    // The kernel said nothing wrong: name what the path is instead of an errno.
    throw std::invalid_argument(
        fmt::format("{} {}: not a regular file ({}); name an IGT metric file such as oa-kblgt2.xml",
                    origin_name(origin), path.string(),
                    S_ISDIR(st.st_mode) ? "a directory" : "a device, socket or pipe"));
  }
  if (!last && !S_ISDIR(st.st_mode)) refuse(path, p, "not a directory", origin);
  if (st.st_uid != owner) refuse(path, p, fmt::format("owned by uid {}", st.st_uid), origin);
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    refuse(path, p, "writable by group or others", origin);
  }
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// The regular file at the end of `at` (a directory's descriptor) named `name`, opened for
// reading, as long as it is still the file `checked` (an O_PATH descriptor) that was judged.
int reopen_for_reading(int at, const fs::path& name, int checked, const fs::path& path) {
  const int fd =
      ::openat(at, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  struct stat a {
  }, b{};
  if (fd < 0 || ::fstat(fd, &a) != 0 || ::fstat(checked, &b) != 0 || a.st_dev != b.st_dev ||
      a.st_ino != b.st_ino) {
    const int err = fd < 0 ? errno : ESTALE;
    if (fd >= 0) ::close(fd);
    throw std::runtime_error(
        fmt::format("cannot open metric file {}: {}", path.string(), std::strerror(err)));
  }
  return fd;
}

}  // namespace

int open_trusted_file(const fs::path& path, uid_t owner, MetricOrigin origin) {
  if (!path.is_absolute()) {
    throw std::invalid_argument(
        fmt::format("{} {}: oaprofd needs an absolute path", origin_name(origin), path.string()));
  }
  std::vector<fs::path> parts;
  for (const fs::path& part : path.relative_path()) {
    if (!part.empty()) parts.push_back(part);
  }
  Fd dir{::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)};
  check_component(dir.fd, path, "/", parts.empty(), owner, origin);
  fs::path p = path.root_path();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    p /= parts[i];
    const bool last = i + 1 == parts.size();
    Fd next{::openat(dir.fd, parts[i].c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC)};
    if (next.fd < 0) {
      throw std::invalid_argument(fmt::format(
          "{} {}: {}", origin_name(origin), path.string(),
          last ? std::strerror(errno) : fmt::format("{}: {}", p.string(), std::strerror(errno))));
    }
    check_component(next.fd, path, p, last, owner, origin);
    if (last) return reopen_for_reading(dir.fd, parts[i], next.fd, path);
    std::swap(dir.fd, next.fd);
  }
  throw std::invalid_argument(
      fmt::format("{} {}: not a regular file (a directory); name an IGT "
                  "metric file such as oa-kblgt2.xml",
                  origin_name(origin), path.string()));
}

void require_trusted_file(const fs::path& path, uid_t owner, MetricOrigin origin) {
  ::close(open_trusted_file(path, owner, origin));
}

fs::path client_metric_path(const std::string& requested, const std::vector<fs::path>& dirs) {
  const fs::path path(requested);
  if (!path.is_absolute()) {
    throw std::invalid_argument(
        fmt::format("--metrics-xml {}: oaprofd needs an absolute path", requested));
  }
  for (const fs::path& part : path) {
    if (part == "." || part == "..") {
      throw std::invalid_argument(fmt::format(
          "oaprofd refuses the metric file {}: it has a '{}' component; name the file by its "
          "plain path in one of oaprofd's metric directories",
          requested, part.string()));
    }
  }
  if (path.extension() != ".xml") {
    throw std::invalid_argument(fmt::format(
        "oaprofd refuses the metric file {}: not an .xml file; oaprofd reads only IGT metric "
        "files (oa-<platform>.xml) from its metric directories",
        requested));
  }
  std::string listed;
  for (const fs::path& d : dirs) {
    std::error_code ec;
    const fs::path resolved = fs::canonical(d, ec);
    for (const fs::path& base : {d.lexically_normal(), resolved}) {
      if (base.empty()) continue;
      const fs::path rel = path.lexically_relative(base);
      if (!rel.empty() && *rel.begin() != ".." && rel != ".") {
        if (ec) break;  // the directory is not there: nothing in it to read
        return resolved / rel;
      }
    }
    listed += (listed.empty() ? "" : ", ") + d.string();
  }
  throw std::invalid_argument(fmt::format(
      "oaprofd refuses the metric file {}: it is not in one of oaprofd's metric directories ({}); "
      "metric files program registers, so the daemon reads only files its administrator "
      "installed there. Install it with `sudo install -m 644 FILE DIR/` into one of them, or use "
      "a set from the files already there (`oaprof metrics list`)",
      requested, listed.empty() ? "none" : listed));
}

oa::MetricFile read_metric_fd(int fd, const std::string& name) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    throw std::runtime_error(
        fmt::format("cannot read metric file {}: {}", name, std::strerror(errno)));
  }
  if (static_cast<std::uintmax_t>(st.st_size) > kMaxMetricFileBytes) {
    throw std::runtime_error(fmt::format(
        "metric file {} is {} bytes; IGT files are under 1 MiB and oaprof reads at most {}", name,
        st.st_size, kMaxMetricFileBytes));
  }
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw std::runtime_error(
          fmt::format("cannot read metric file {}: {}", name, std::strerror(errno)));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxMetricFileBytes) {  // it grew while read
      throw std::runtime_error(fmt::format(
          "metric file {} is over {} bytes; IGT files are under 1 MiB", name, kMaxMetricFileBytes));
    }
  }
  return oa::import_metrics_xml(text, name);
}

oa::MetricFile read_metric_file(const fs::path& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC)};
  if (f.fd < 0) {
    throw std::runtime_error(
        fmt::format("cannot read metric file {}: {}", path.string(), std::strerror(errno)));
  }
  return read_metric_fd(f.fd, path.string());
}

namespace {

// The platform's file in the first of oaprofd's directories that has it, resolved: the configured
// path may run through symbolic links (a versioned prefix), and the file read is the resolved one,
// which open_trusted_file then checks is root's all the way up.
std::optional<fs::path> find_in_daemon_dirs(const std::vector<fs::path>& dirs,
                                            const std::string& name, std::string& looked) {
  for (const fs::path& d : dirs) {
    std::error_code ec;
    if (fs::exists(d / name, ec)) {
      const fs::path resolved = fs::canonical(d / name, ec);
      if (ec) {
        throw std::invalid_argument(fmt::format("oaprofd's --metrics-dir: cannot resolve {}: {}",
                                                (d / name).string(), ec.message()));
      }
      return resolved;
    }
    looked += (looked.empty() ? "" : ", ") + d.string();
  }
  return std::nullopt;
}

std::string no_daemon_file(const oa::Platform& platform, const std::string& name,
                           const std::string& looked) {
  // Xe2 parts have no built-in set to fall back on.
  const std::string instead =
      oa::has_builtin_metric_set(platform)
          ? fmt::format(", or use --metric-set {}", oa::kBuiltinMetricSetSymbol)
          : std::string(" (this part has no built-in set)");
  return fmt::format(
      "oaprofd has no metric file for {} ({}) in {}; the administrator can add IGT's file to one "
      "of oaprofd's --metrics-dir directories{}",
      platform.codename, name, looked.empty() ? "no directory" : looked, instead);
}

// A file that passed open_trusted_file; an import error names it, its content goes to the log.
oa::MetricFile read_trusted(const fs::path& file, MetricOrigin origin, uid_t owner) {
  Fd f{open_trusted_file(file, owner, origin)};
  try {
    return read_metric_fd(f.fd, file.string());
  } catch (const std::invalid_argument& e) {
    throw MetricImportError(
        fmt::format("oaprofd cannot import the metric file {}: it is not a valid IGT metric "
                    "file (oaprofd's log says where); the administrator can replace it with IGT's",
                    file.string()),
        e.what());
  }
}

}  // namespace

MetricChoice choose_metric_set(const oa::Platform& platform, std::string_view symbol,
                               const std::string& explicit_xml, const std::vector<fs::path>& dirs,
                               uid_t owner) {
  MetricFileAccess access;
  access.named = [&dirs](const std::string& named) { return client_metric_path(named, dirs); };
  access.find = [&dirs](const std::string& name, std::string& looked) {
    return find_in_daemon_dirs(dirs, name, looked);
  };
  access.read = [owner](const fs::path& file, bool named) {
    return read_trusted(file, named ? MetricOrigin::kClient : MetricOrigin::kDaemonDirectory,
                        owner);
  };
  access.not_found = no_daemon_file;
  return resolve_metric_set(platform, symbol, explicit_xml, access);
}

mmio::OaConfig oa_config_for(const oa::MetricSet& set, const oa::Platform& platform,
                             const oa::DeviceFacts& facts) {
  using Kind = oa::RegisterConfig::Kind;
  const oa::DeviceVariables vars = oa::device_variables(platform, facts);
  return mmio::OaConfig{set.guid(), set.writes(Kind::kNoa, vars), set.writes(Kind::kBoolean, vars),
                        set.writes(Kind::kFlex, vars)};
}

}  // namespace oaprof::session
