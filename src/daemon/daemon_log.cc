#include "daemon/daemon_log.h"

#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

namespace oaprof::daemon {

std::string format_log_line(int level, const std::string& text, bool journal) {
  std::string one = text;
  for (char& c : one) {
    if (c == '\n') c = ' ';
  }
  if (journal) return fmt::format("<{}>{}\n", level, one);
  const char* word = level <= 3 ? "error" : level == 4 ? "warning" : "info";
  return fmt::format("oaprofd: {}: {}\n", word, one);
}

void log_line(int level, const std::string& text) {
  static const bool journal = std::getenv("JOURNAL_STREAM") != nullptr;
  const std::string line = format_log_line(level, text, journal);
  (void)::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace oaprof::daemon
