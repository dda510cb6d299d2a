// oaprofd's log: one line per event on stderr. Under systemd (JOURNAL_STREAM set) each line
// starts with the syslog level in angle brackets ("<6>"), which journald reads as the priority;
// in a terminal the level is a word.
#pragma once

#include <string>

namespace oaprof::daemon {

enum class LogLevel { kError = 3, kWarning = 4, kInfo = 6 };

// The line as it goes to stderr, with its newline. A newline in `text` becomes a space and every
// other control byte \xNN: text from clients cannot forge or overwrite lines.
std::string format_log_line(int level, const std::string& text, bool journal);
// Writes one line to stderr in a single write, so lines from several threads never interleave.
void log_line(int level, const std::string& text);

}  // namespace oaprof::daemon
