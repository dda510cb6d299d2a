#include "power/hwmon.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "power/timed_reading.h"
#include "power/unique_domains.h"

namespace oaprof::power {
namespace fs = std::filesystem;
namespace {

// hwmon numbers its channels from 1; xe has two energy channels, this bound leaves room.
constexpr int kMaxEnergyChannels = 8;
// The drivers whose hwmon oaprof reads (their `name`): i915_gtN directories are not among them.
constexpr std::string_view kGpuDrivers[] = {"i915", "xe"};
constexpr const char* kPermissionFix =
    "i915 and xe make energy*_input readable by every user (0444): check the file's mode and any "
    "security module";

// A descriptor closed with its scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_;
};

// Opens `name` beneath `dir_fd` without following a link there (sysfs has none in these places).
Fd open_beneath(int dir_fd, const std::string& name, int flags) {
  return Fd(::openat(dir_fd, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
}

// The first line of `name` beneath `dir_fd`, or nullopt when it is absent, unreadable or a link.
std::optional<std::string> read_line_beneath(int dir_fd, const std::string& name) {
  const Fd fd = open_beneath(dir_fd, name, O_RDONLY);
  if (!fd) return std::nullopt;
  char buf[128];
  const ssize_t n = ::pread(fd.get(), buf, sizeof buf, 0);
  if (n <= 0) return std::nullopt;
  std::string text(buf, static_cast<std::size_t>(n));
  return text.substr(0, text.find('\n'));
}

// N of "hwmonN", or nullopt for any other name.
std::optional<int> hwmon_number(std::string_view name) {
  if (!name.starts_with("hwmon") || name.size() == 5) return std::nullopt;
  int n = 0;
  const auto [end, ec] = std::from_chars(name.data() + 5, name.data() + name.size(), n);
  if (ec != std::errc() || end != name.data() + name.size()) return std::nullopt;
  return n;
}

// The hwmonN entries beneath `hwmon_fd`, in the order of N.
std::vector<std::pair<int, std::string>> hwmon_entries(int hwmon_fd) {
  std::vector<std::pair<int, std::string>> found;
  DIR* dir = ::fdopendir(::dup(hwmon_fd));  // the DIR owns the duplicate
  if (dir == nullptr) return found;
  while (const dirent* e = ::readdir(dir)) {
    if (const auto n = hwmon_number(e->d_name)) found.emplace_back(*n, e->d_name);
  }
  ::closedir(dir);
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

std::optional<Domain> hwmon_channel_domain(int channel, const std::optional<std::string>& label) {
  if (!label) return channel == 1 ? std::optional<Domain>(Domain::kGpuPackage) : std::nullopt;
  if (*label == "card") return Domain::kGpuCard;
  if (*label == "pkg") return Domain::kGpuPackage;
  return std::nullopt;
}

HwmonSource::HwmonSource(fs::path device_dir, std::function<std::uint64_t()> clock_ns)
    : clock_ns_(std::move(clock_ns)) {
  // The device directory is itself a link in sysfs (bus/pci/devices/<BDF>): followed; nothing
  // beneath it is.
  const Fd device(::open(device_dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  const Fd hwmon = device ? open_beneath(device.get(), "hwmon", O_RDONLY | O_DIRECTORY) : Fd();
  std::vector<std::string> skipped;  // hwmon directories of other drivers, for the message
  if (hwmon) {
    for (const auto& [number, entry] : hwmon_entries(hwmon.get())) {
      Fd dir = open_beneath(hwmon.get(), entry, O_RDONLY | O_DIRECTORY);
      if (!dir) {
        skipped.push_back(fmt::format("{} (not a directory: {})", entry, std::strerror(errno)));
        continue;
      }
      const auto driver = read_line_beneath(dir.get(), "name").value_or("");
      if (std::find(std::begin(kGpuDrivers), std::end(kGpuDrivers), driver) ==
          std::end(kGpuDrivers)) {
        skipped.push_back(fmt::format("{} ({})", entry, driver.empty() ? "no name" : driver));
        continue;
      }
      open_channels(dir.get(), device_dir / "hwmon" / entry);
      if (channels_.empty()) {
        throw std::runtime_error(fmt::format(
            "{} ({}) has no energy channel oaprof knows (energy1_input, or one labelled card or "
            "pkg): this kernel's {} does not expose the GPU's energy (a newer kernel does for "
            "DG2 and Battlemage)",
            (device_dir / "hwmon" / entry).string(), driver, driver));
      }
      driver_ = driver;
      dir_name_ = entry;
      return;
    }
  }
  throw std::runtime_error(fmt::format(
      "{} has no i915 or xe hwmon{}: those drivers register their energy sensors only for "
      "discrete GPUs (an integrated GPU's power comes from the CPU's RAPL planes)",
      device_dir.string(),
      skipped.empty() ? "" : fmt::format(" (found {})", fmt::join(skipped, ", "))));
}

void HwmonSource::open_channels(int dir_fd, const fs::path& dir) {
  for (int n = 1; n <= kMaxEnergyChannels; ++n) {
    const std::string input = fmt::format("energy{}_input", n);
    Fd fd = open_beneath(dir_fd, input, O_RDONLY);
    if (!fd) {
      if (errno == ENOENT) continue;
      // A link (ELOOP) or an unreadable file: said, not skipped, so the reason reaches the user.
      throw std::runtime_error(detail::open_error_message(dir / input, errno, kPermissionFix));
    }
    const auto domain =
        hwmon_channel_domain(n, read_line_beneath(dir_fd, fmt::format("energy{}_label", n)));
    if (!domain) continue;
    Channel c{detail::OpenNumberFile(fd.release(), dir / input, kPermissionFix,
                                     detail::NumberText::kSignedLong),
              *domain};
    c.last_raw = c.energy_file.read();
    channels_.push_back(std::move(c));
  }
}

std::vector<Domain> HwmonSource::domains() const { return detail::unique_domains(channels_); }

std::string HwmonSource::describe() const {
  std::vector<std::string> parts;
  for (const Channel& c : channels_) {
    parts.push_back(fmt::format("{} ({})", c.energy_file.path().filename().string(),
                                c.domain == Domain::kGpuCard ? "the card" : "the GPU package"));
  }
  return fmt::format("{} {}: {}", driver_, dir_name_, fmt::join(parts, ", "));
}

EnergyReading HwmonSource::read() {
  return timed_reading(clock_ns_, [this] {
    EnergyReading r;
    for (Channel& c : channels_) {
      const std::uint64_t raw = c.energy_file.read();
      c.total += hwmon_energy_delta(c.last_raw, raw);
      c.last_raw = raw;
      r.energy_uj[c.domain] += c.total;
    }
    return r;
  });
}

}  // namespace oaprof::power
