#include "power/sysfs_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>

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

std::string open_error_message(const fs::path& file, int err, const std::string& permission_fix) {
  const bool denied = err == EACCES || err == EPERM;
  return fmt::format("cannot read {}: {}{}", file.string(),
                     err ? std::strerror(err) : "cannot open",
                     denied ? " (" + permission_fix + ")" : "");
}

std::uint64_t read_u64(const fs::path& file, const std::string& permission_fix) {
  errno = 0;
  std::ifstream in(file);
  if (!in) throw std::runtime_error(open_error_message(file, errno, permission_fix));
  std::string line;
  std::getline(in, line);
  const auto v = parse_u64(line);
  if (!v) {
    throw std::runtime_error(fmt::format(
        "{} does not hold an unsigned number (it holds '{}'): is this the sysfs tree you meant?",
        file.string(), line));
  }
  return *v;
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
