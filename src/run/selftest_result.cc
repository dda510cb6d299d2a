#include "run/selftest_result.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mmio/pci_sysfs.h"
#include "mmio/sim_gpu.h"
#include "report/text_escape.h"
#include "session/daemon_paths.h"
#include "session/privilege_drop.h"
#include "session/state_dir.h"

namespace oaprof::run::selftest {
namespace fs = std::filesystem;
namespace {

// The result file's own layout version (not the --json report's).
constexpr int kResultVersion = 1;
// A result is a few KiB; anything far larger is not one of ours.
constexpr off_t kMaxResultBytes = 1 << 20;

struct CheckCover {
  std::string_view check;
  report::SelftestCovers covers;
};

// What a failed check puts in doubt (docs/selftest.md, "Results that profile runs use").
constexpr CheckCover kCovers[] = {
    // The table's EU count enters the derived metrics (EU shares, per-EU rates).
    {"topology", report::SelftestCovers::kMetrics},
    // Every row's gpu_time_ns and every rate divide by the timestamp frequency.
    {"timestamp-frequency", report::SelftestCovers::kEveryRow},
    {"clocks", report::SelftestCovers::kEveryRow},
    {"gpu-ticks", report::SelftestCovers::kGpuTicks},
    // The counters every row reports.
    {"readouts-agree", report::SelftestCovers::kEveryRow},
    {"noa-counting", report::SelftestCovers::kEveryRow},
    {"flex-routing", report::SelftestCovers::kEveryRow},
    {"known-work-flops", report::SelftestCovers::kEveryRow},
    {"known-work-eu-active", report::SelftestCovers::kEveryRow},
    {"known-work-bytes", report::SelftestCovers::kEveryRow},
    {"idle-and-render-quiet", report::SelftestCovers::kEveryRow},
    // What is left behind after a run, not what a row measured.
    {"restore", report::SelftestCovers::kNoRow},
    // Register reads of a GT that may be asleep.
    {"forcewake", report::SelftestCovers::kRegisterReadouts},
    {"energy", report::SelftestCovers::kEnergy},
    // The model the selftest judged no longer held: rows' modelled energy is in doubt.
    {"energy-model", report::SelftestCovers::kEnergyModel},
};

std::string first_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string utc_text(std::int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  if (::gmtime_r(&t, &tm) == nullptr) return "?";
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

[[noreturn]] void throw_errno(const std::string& what, const fs::path& path) {
  throw std::runtime_error(
      fmt::format("cannot {} {}: {}", what, path.string(), std::strerror(errno)));
}

void write_all(int fd, const std::string& text, const fs::path& path) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw_errno("write", path);
    done += static_cast<std::size_t>(n);
  }
}

// Writes `text` as `name` in the directory `dir_fd`: a new file beside it (O_EXCL, no link
// followed), renamed over it once complete.
void replace_in_dir(int dir_fd, const fs::path& dir, const std::string& name,
                    const std::string& text) {
  const std::string tmp = fmt::format(".{}.{}", name, ::getpid());
  const int fd =
      ::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw_errno("create", dir / tmp);
  try {
    // 0644 whatever the umask: group members reading through oaprofd's runs read it too.
    if (::fchmod(fd, 0644) != 0) throw_errno("set the mode of", dir / tmp);
    write_all(fd, text, dir / tmp);
    if (::fsync(fd) != 0) throw_errno("sync", dir / tmp);
    ::close(fd);
    if (::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0) {
      throw_errno("rename " + tmp + " to", dir / name);
    }
  } catch (...) {
    ::close(fd);  // a second close of a closed descriptor fails harmlessly with EBADF
    ::unlinkat(dir_fd, tmp.c_str(), 0);
    throw;
  }
}

// The kept file's text, or why it is not to be trusted: opened without following a link, a
// regular file of root's or ours that only its owner may change, and of a result's size.
std::optional<std::string> read_trusted(const fs::path& path, std::string& why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) why = fmt::format("cannot open it: {}", std::strerror(errno));
    return std::nullopt;
  }
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    why = "it is not a regular file";
  } else if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
    why = fmt::format("it belongs to uid {}, neither root nor {}", st.st_uid, ::geteuid());
  } else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    why = "it is writable by group or others";
  } else if (st.st_size > kMaxResultBytes) {
    why = fmt::format("it is {} bytes, far more than a result", st.st_size);
  } else {
    text.resize(static_cast<std::size_t>(st.st_size));
    const ssize_t n = ::read(fd, text.data(), text.size());
    if (n != st.st_size) why = "it could not be read whole";
  }
  ::close(fd);
  if (!why.empty()) return std::nullopt;
  return text;
}

// Why the kept result is not `identity`'s, or empty when it is.
std::string stale_because(const nlohmann::json& kept, const ResultIdentity& identity) {
  const auto field = [&](const char* name) { return kept.value(name, std::string()); };
  const std::pair<const char*, const std::string*> fields[] = {
      {"device", &identity.device},
      {"platform", &identity.platform},
      {"driver", &identity.driver},
      {"kernel", &identity.kernel},
      {"oaprof_version", &identity.oaprof_version},
  };
  for (const auto& [name, now] : fields) {
    if (field(name) != *now) {
      return fmt::format("it was made with {} '{}', this run has '{}'", name,
                         report::visible_text(field(name)), report::visible_text(*now));
    }
  }
  return {};
}

// The failures of a kept result that is `identity`'s, and the run-wide notes they call for.
void take_failures(const nlohmann::json& kept, const fs::path& path, KeptResult& result) {
  std::vector<std::string> all, no_row;
  for (const auto& check : kept.at("checks")) {
    if (check.value("verdict", std::string()) != "fail") continue;
    const std::string name = check.value("name", std::string());
    const report::SelftestCovers covers = check_covers(name);
    result.failed.push_back({name, covers});
    all.push_back(name);
    if (covers == report::SelftestCovers::kNoRow) no_row.push_back(name);
  }
  if (all.empty()) return;
  const std::string when = utc_text(kept.value("time_unix", std::int64_t{0}));
  result.notes.push_back(fmt::format(
      "the last selftest of this device ({}, {}) failed {}: the rows that report what a failed "
      "check covers are flagged selftest_failed:<check> (docs/selftest.md)",
      when, path.string(), fmt::join(all, ", ")));
  if (!no_row.empty()) {
    result.notes.push_back(fmt::format(
        "warning: {} failed there too: no row reports it, but registers oaprof writes may not read "
        "back their earlier values after this run",
        fmt::join(no_row, ", ")));
  }
}

}  // namespace

std::string platform_label(const oa::Platform& platform) {
  return fmt::format("{} {} ({})", platform.codename, oa::gt_label(platform),
                     oa::generation_name(platform.gen));
}

std::string device_key(bool simulated, const oa::Platform& platform,
                       const std::string& pci_address) {
  if (!simulated) return pci_address;
  return fmt::format("sim-{:04x}-{}", mmio::sim_pci_id(platform),
                     oa::kernel_driver_name(platform.driver));
}

std::string driver_description(bool simulated, const oa::Platform& platform,
                               const fs::path& sysfs_root, const std::string& pci_address) {
  if (simulated) return std::string(oa::kernel_driver_name(platform.driver)) + " (simulated)";
  const std::string driver =
      mmio::bound_driver(sysfs_root, mmio::parse_pci_address(pci_address)).value_or("");
  if (driver.empty()) return driver;
  const std::string version = first_line(sysfs_root / "module" / driver / "version");
  return version.empty() ? driver : driver + " " + version;
}

std::string kernel_release() {
  utsname u{};
  return ::uname(&u) == 0 ? std::string(u.release) : std::string();
}

fs::path result_path(const fs::path& state_dir, std::string_view device) {
  return state_dir / fmt::format("selftest-{}.json", device);
}

report::SelftestCovers check_covers(std::string_view name) {
  for (const CheckCover& c : kCovers) {
    if (c.check == name) return c.covers;
  }
  return report::SelftestCovers::kEveryRow;
}

nlohmann::json result_json(const SelftestReport& report, const ResultIdentity& identity,
                           std::int64_t unix_seconds) {
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckResult& r : report.checks) {
    checks.push_back(
        {{"name", r.name}, {"verdict", verdict_name(r.verdict)}, {"reason", r.reason}});
  }
  return {{"result_version", kResultVersion},
          {"oaprof_version", identity.oaprof_version},
          {"time_unix", unix_seconds},
          {"time", utc_text(unix_seconds)},
          {"device", identity.device},
          {"platform", identity.platform},
          {"driver", identity.driver},
          {"kernel", identity.kernel},
          {"sim_faults", report.faults},
          {"quick", report.quick},
          {"checks", checks}};
}

fs::path keep_result(const fs::path& state_dir, const SelftestReport& report,
                     const ResultIdentity& identity) {
  session::prepare_state_dir(state_dir);
  const int dir_fd = ::open(state_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) throw_errno("open the state directory", state_dir);
  const fs::path path = result_path(state_dir, identity.device);
  try {
    const std::string text =
        result_json(report, identity, static_cast<std::int64_t>(std::time(nullptr))).dump(2) + "\n";
    replace_in_dir(dir_fd, state_dir, path.filename().string(), text);
  } catch (...) {
    ::close(dir_fd);
    throw;
  }
  ::close(dir_fd);
  return path;
}

std::string keep_last_result(const SelftestReport& report, std::string_view oaprof_version) {
  const ResultIdentity identity{report.device_key, report.platform, report.driver, report.kernel,
                                std::string(oaprof_version)};
  try {
    const auto creds = session::credentials_from_sudo(session::process_environment(), ::geteuid());
    const fs::path state_dir = session::state_dir_from(session::process_environment(), creds);
    return fmt::format(
        "result kept in {}: profile runs on this device flag the rows a failed check covers",
        keep_result(state_dir, report, identity).string());
  } catch (const std::exception& e) {
    return fmt::format(
        "the result is not kept ({}); profile runs cannot flag rows by it: run as root (sudo), or "
        "set {} to a directory of yours",
        e.what(), session::kStateDirEnv);
  }
}

KeptResult read_kept_result(const fs::path& state_dir, const ResultIdentity& identity) {
  KeptResult result;
  const fs::path path = result_path(state_dir, identity.device);
  std::string why;
  const std::optional<std::string> text = read_trusted(path, why);
  const auto ignored = [&](const std::string& because) {
    result.notes.push_back(
        fmt::format("the selftest result {} is ignored: {}", path.string(), because));
  };
  if (!text) {
    if (!why.empty()) ignored(why);
    return result;
  }
  try {
    const nlohmann::json kept = nlohmann::json::parse(*text);
    if (kept.value("result_version", 0) != kResultVersion) {
      ignored("it is of another layout; run `sudo oaprof selftest` again");
    } else if (const std::string stale = stale_because(kept, identity); !stale.empty()) {
      ignored(stale + "; run `sudo oaprof selftest` again");
    } else {
      take_failures(kept, path, result);
    }
  } catch (const std::exception& e) {
    result.failed.clear();
    ignored(fmt::format("it is not a result oaprof wrote ({})", e.what()));
  }
  return result;
}

}  // namespace oaprof::run::selftest
