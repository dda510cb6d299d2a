#include "power/sysfs_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace oaprof::power::detail {
namespace fs = std::filesystem;

std::optional<std::string> read_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

std::optional<std::uint64_t> parse_u64(const std::string& text) {
  std::size_t begin = text.find_first_not_of(" \t");
  std::size_t end = text.find_last_not_of(" \t\r\n");
  if (begin == std::string::npos) return std::nullopt;
  const std::string s = text.substr(begin, end - begin + 1);
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const std::string digits = hex ? s.substr(2) : s;
  if (digits.empty()) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : digits) {
    unsigned d = 0;
    if (c >= '0' && c <= '9') {
      d = static_cast<unsigned>(c - '0');
    } else if (hex && c >= 'a' && c <= 'f') {
      d = static_cast<unsigned>(c - 'a' + 10);
    } else if (hex && c >= 'A' && c <= 'F') {
      d = static_cast<unsigned>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
    const std::uint64_t base = hex ? 16 : 10;
    if (v > (UINT64_MAX - d) / base) return std::nullopt;
    v = v * base + d;
  }
  return v;
}

std::optional<std::uint64_t> parse_number(const std::string& text, NumberText kind) {
  if (kind == NumberText::kUnsigned) return parse_u64(text);
  const std::size_t begin = text.find_first_not_of(" \t");
  const bool negative = begin != std::string::npos && text[begin] == '-';
  const std::string digits = negative ? text.substr(begin + 1) : text;
  // Decimal only: the hwmon core never writes 0x.
  if (digits.find_first_of("xX") != std::string::npos) return std::nullopt;
  const auto magnitude = parse_u64(digits);
  constexpr std::uint64_t kLongMax = INT64_MAX;
  if (!magnitude || *magnitude > (negative ? kLongMax + 1 : kLongMax)) return std::nullopt;
  return negative ? 0 - *magnitude : *magnitude;
}

std::string open_error_message(const fs::path& file, int err, const std::string& permission_fix) {
  const bool denied = err == EACCES || err == EPERM;
  return fmt::format("cannot read {}: {}{}", file.string(),
                     err ? std::strerror(err) : "cannot open",
                     denied ? " (" + permission_fix + ")" : "");
}

namespace {

std::uint64_t parse_number_or_throw(const fs::path& file, const std::string& text,
                                    NumberText kind = NumberText::kUnsigned) {
  const std::string line = text.substr(0, text.find('\n'));
  const auto v = parse_number(line, kind);
  if (!v) {
    throw std::runtime_error(fmt::format(
        "{} does not hold {} (it holds '{}'): is this the sysfs tree you meant?", file.string(),
        kind == NumberText::kUnsigned ? "an unsigned number" : "a 64-bit integer", line));
  }
  return *v;
}

// One read of the number in open file `fd` from its start (sysfs regenerates it on each read).
std::uint64_t read_number(int fd, const fs::path& file, const std::string& permission_fix,
                          NumberText kind = NumberText::kUnsigned) {
  char buf[64];
  ssize_t n;
  do {
    n = ::pread(fd, buf, sizeof buf - 1, 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) throw std::runtime_error(open_error_message(file, errno, permission_fix));
  return parse_number_or_throw(file, std::string(buf, static_cast<std::size_t>(n)), kind);
}

int open_or_throw(const fs::path& file, const std::string& permission_fix) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(open_error_message(file, errno, permission_fix));
  return fd;
}

}  // namespace

std::uint64_t read_u64(const fs::path& file, const std::string& permission_fix) {
  const int fd = open_or_throw(file, permission_fix);
  try {
    const std::uint64_t v = read_number(fd, file, permission_fix);
    ::close(fd);
    return v;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

OpenNumberFile::OpenNumberFile(fs::path file, std::string permission_fix)
    : file_(std::move(file)), permission_fix_(std::move(permission_fix)) {
  fd_ = open_or_throw(file_, permission_fix_);
  try {
    (void)read();
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

OpenNumberFile::OpenNumberFile(int fd, fs::path file, std::string permission_fix, NumberText text)
    : file_(std::move(file)), permission_fix_(std::move(permission_fix)), fd_(fd), text_(text) {
  try {
    (void)read();
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

OpenNumberFile::~OpenNumberFile() {
  if (fd_ >= 0) ::close(fd_);
}

OpenNumberFile::OpenNumberFile(OpenNumberFile&& other) noexcept
    : file_(std::move(other.file_)),
      permission_fix_(std::move(other.permission_fix_)),
      fd_(std::exchange(other.fd_, -1)),
      text_(other.text_) {}

OpenNumberFile& OpenNumberFile::operator=(OpenNumberFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    file_ = std::move(other.file_);
    permission_fix_ = std::move(other.permission_fix_);
    fd_ = std::exchange(other.fd_, -1);
    text_ = other.text_;
  }
  return *this;
}

std::uint64_t OpenNumberFile::read() const {
  return read_number(fd_, file_, permission_fix_, text_);
}

void write_atomically(const fs::path& file, const std::string& text) {
  const fs::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out) {
      throw std::runtime_error(
          fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno)));
    }
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) {
    throw std::runtime_error(
        fmt::format("cannot rename {} to {}: {}", tmp.string(), file.string(), ec.message()));
  }
}

}  // namespace oaprof::power::detail
