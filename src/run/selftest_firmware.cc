#include "run/selftest_firmware.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>
#include <utility>
#include <vector>

namespace oaprof::run::selftest {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kMaxText = 16 * 1024;  // the dumps are a few hundred bytes
constexpr std::size_t kMaxField = 256;
constexpr std::size_t kMaxLines = 256;

// Printable ASCII without the line's leading and trailing blanks; "" when anything else is in it
// or it is too long.
std::string clean_field(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  if (s.size() > kMaxField) return {};
  for (const char ch : s) {
    if (ch < 0x20 || ch > 0x7e) return {};
  }
  return std::string(s);
}

// The first version after "found": 2 to 4 dot-separated numbers of at most 9 digits each.
std::string found_version(std::string_view line) {
  const std::size_t at = line.find("found");
  if (at == std::string_view::npos) return {};
  std::size_t i = line.find_first_of("0123456789", at);
  if (i == std::string_view::npos) return {};
  std::string out;
  int parts = 0;
  while (parts < 4) {
    std::size_t digits = 0;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])) && digits < 10) {
      out += line[i++];
      ++digits;
    }
    if (digits == 0 || digits > 9) return {};
    ++parts;
    if (i >= line.size() || line[i] != '.' || parts == 4) break;
    out += line[i++];
  }
  return parts >= 2 ? out : std::string();
}

void read_line(std::string_view line, UcInfo& info) {
  constexpr std::string_view kFirmware = " firmware:";
  const std::size_t fw = line.find(kFirmware);
  if (info.path.empty() && fw != std::string_view::npos && line.front() != '\t') {
    info.path = clean_field(line.substr(fw + kFirmware.size()));
    return;
  }
  constexpr std::string_view kStatus = "status:";
  const std::size_t st = line.find(kStatus);
  if (info.status.empty() && st != std::string_view::npos) {
    info.status = clean_field(line.substr(st + kStatus.size()));
    return;
  }
  if (info.version.empty()) info.version = found_version(line);
}

}  // namespace

UcInfo parse_uc_info(std::string_view text) {
  text = text.substr(0, kMaxText);
  UcInfo info;
  for (std::size_t n = 0; n < kMaxLines && !text.empty(); ++n) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    if (!line.empty()) read_line(line, info);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return info;
}

namespace {

// The file's first kMaxText bytes, or the errno that stopped it.
int read_prefix(const fs::path& file, std::string& text) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return errno != 0 ? errno : ENOENT;
  text.resize(kMaxText);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return 0;
}

}  // namespace

FirmwareVersion read_firmware(const fs::path& dri_dir, oa::KernelDriver driver,
                              std::string_view file) {
  // i915 named its GT directory "gt" before multi-GT kernels, "gt0" since; xe always "gt0".
  std::vector<fs::path> candidates = {dri_dir / "gt0" / "uc" / file};
  if (driver == oa::KernelDriver::kI915) candidates.push_back(dri_dir / "gt" / "uc" / file);
  FirmwareVersion out;
  int err = ENOENT;
  for (const fs::path& p : candidates) {
    std::string text;
    errno = 0;
    err = read_prefix(p, text);
    if (err != 0) continue;
    const UcInfo info = parse_uc_info(text);
    out.path = info.path;
    out.status = info.status;
    if (!info.version.empty()) {
      out.version = info.version;
    } else {
      out.reason = fmt::format("{} names no version oaprof can read", p.string());
    }
    return out;
  }
  out.reason =
      fmt::format("cannot read {}: {}{}", candidates.front().string(), std::strerror(err),
                  err == EACCES || err == EPERM ? " (debugfs is root's: run the selftest with sudo)"
                  : ::access(dri_dir.parent_path().c_str(), F_OK) != 0
                      ? " (no debugfs: mount -t debugfs none /sys/kernel/debug)"
                      : "");
  return out;
}

SimDebugfs::SimDebugfs(oa::KernelDriver driver) {
  const std::string pattern = (fs::temp_directory_path() / "oaprof-sim-debugfs-XXXXXX").string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "simulated debugfs: mkdtemp");
  }
  root_ = buf.data();
  const fs::path uc = dri_dir() / "gt0" / "uc";
  fs::create_directories(uc);
  const bool xe = driver == oa::KernelDriver::kXe;
  for (const auto& [name, file] : {std::pair{"GuC", "guc_info"}, std::pair{"HuC", "huc_info"}}) {
    std::ofstream out(uc / file);
    out << name << " firmware: sim/" << file << ".bin\n";
    out << (xe ? "\tstatus: running\n" : "\tstatus: RUNNING\n");
    out << (xe ? "\twanted release version 0.0.1\n\tfound release version 0.0.1\n"
               : "\tversion: wanted 0.0, found 0.0\n");
  }
}

SimDebugfs::~SimDebugfs() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

}  // namespace oaprof::run::selftest
