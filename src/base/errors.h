// What went wrong, typed by who can fix it, and the one table from those types to the exit status
// of every tool (oaprof and its subcommands, oaprofd, kernel_runner). Code below the tools throws
// these; run_command() at the top of each command turns them into a message and a status, so no
// tool translates exceptions by hand.
#pragma once

#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace oaprof::base {

// Exit status of a tool's own failures. When oaprof ran a program, it exits with the program's
// status instead (128 + N when it was killed by signal N), except that a program that succeeded
// while the session broke (kExitSession) does not hide that.
// `oaprof doctor` or `oaprof selftest` ran, and one of its checks failed.
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitSetup = 3;
inline constexpr int kExitOutput = 4;
// The GPU session broke during the run (oaprofd went away, a snapshot or the restore failed):
// the rows written are complete, launches after the break were not measured.
inline constexpr int kExitSession = 5;
// Application replay: the runs launched different sequences, so no joined file was written (each
// pass's own file is kept).
inline constexpr int kExitPassesDiffer = 6;
inline constexpr int kExitCannotRun = 127;

// The user asked for something that cannot be: a bad option, value or file content they named.
// A std::invalid_argument, so that code that catches "bad input" keeps catching it.
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The GPU, the session, the energy source or OpenCL could not be set up.
class SetupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An output file cannot be written (as the invoking user).
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The status an escaped exception means. A plain std::invalid_argument is still a usage error
// (the habit of older code); anything else is a set-up failure.
inline int exit_status_for(const std::exception& e) {
  if (dynamic_cast<const OutputError*>(&e) != nullptr) return kExitOutput;
  if (dynamic_cast<const SetupError*>(&e) != nullptr) return kExitSetup;
  if (dynamic_cast<const std::invalid_argument*>(&e) != nullptr) return kExitUsage;
  return kExitSetup;
}

// Runs one command's body: its own status, or after an escaped exception "<tool>: <what>" on
// stderr and exit_status_for's status.
template <typename Body>
int run_command(std::string_view tool, Body&& body) {
  try {
    return std::forward<Body>(body)();
  } catch (const std::exception& e) {
    std::cerr << tool << ": " << e.what() << "\n";
    return exit_status_for(e);
  }
}

}  // namespace oaprof::base
