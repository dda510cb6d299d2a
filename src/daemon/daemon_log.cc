#include "daemon/daemon_log.h"

#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "base/ignore_result.h"

namespace oaprof::daemon {

namespace {

// One line, whatever a client or a program put in the text: a newline becomes a space, and every
// other control byte (below 0x20, and 0x7f) is written as \xNN, so that a CR, an ESC sequence or
// a NUL cannot forge, overwrite or cut a line of the log.
std::string one_line(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += ' ';
    } else if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string format_log_line(int level, const std::string& text, bool journal) {
  const std::string one = one_line(text);
  if (journal) return fmt::format("<{}>{}\n", level, one);
  const char* word = level <= 3 ? "error" : level == 4 ? "warning" : "info";
  return fmt::format("oaprofd: {}: {}\n", word, one);
}

void log_line(int level, const std::string& text) {
  static const bool journal = std::getenv("JOURNAL_STREAM") != nullptr;
  const std::string line = format_log_line(level, text, journal);
  base::ignore_result(::write(STDERR_FILENO, line.data(), line.size()));
}

}  // namespace oaprof::daemon
