// The command-line vocabulary every tool shares (docs/cli.md): test-only options hidden from
// --help and shown by --help-all, deprecated spellings that still work, durations in
// base::parse_duration's syntax. Header-only: only the tools include it, and they link CLI11.
#pragma once

#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/duration.h"
#include "base/errors.h"

namespace oaprof::base::cli {

inline constexpr const char* kTestingGroup = "Testing and simulator";

// Whether this command line asked for --help-all. Decided once, before any option is added,
// because CLI11 fixes an option's group (and so whether --help shows it) when it is added.
inline bool& help_all_requested() {
  static bool requested = false;
  return requested;
}

// Call first in main: remembers --help-all and adds it (CLI11 hands it on to subcommands made
// later). Users see a short --help; the simulator and fake-root options are for tests.
inline void add_help_all(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--") break;
    if (std::string_view(argv[i]) == "--help-all") help_all_requested() = true;
  }
  app.set_help_all_flag("--help-all", "also show the testing and simulator options");
}

// A test-only or simulator option: in CLI11's hidden group "" unless --help-all was asked for.
inline CLI::Option* testing(CLI::Option* option) {
  return option->group(help_all_requested() ? kTestingGroup : "");
}

struct Deprecation {
  const CLI::Option* option;
  std::string message;
};

inline std::vector<Deprecation>& deprecations() {
  static std::vector<Deprecation> list;
  return list;
}

// The spelling a user typed for OPTION: its first long name, else its first short one.
inline std::string spelling(const CLI::Option& option) {
  if (!option.get_lnames().empty()) return "--" + option.get_lnames().front();
  if (!option.get_snames().empty()) return "-" + option.get_snames().front();
  return option.get_name();
}

// An old spelling kept for one release (docs/cli.md says when it goes): hidden from --help, it
// works as before and warn_deprecated() says what replaces it.
inline CLI::Option* deprecated(CLI::Option* option, std::string_view tool,
                               std::string_view replacement) {
  option->group("");
  option->description("deprecated: use " + std::string(replacement));
  deprecations().push_back({option, std::string(tool) + ": " + spelling(*option) +
                                        " is deprecated; use " + std::string(replacement)});
  return option;
}

// After parsing: one warning on stderr for each deprecated spelling the command line used.
inline void warn_deprecated(std::ostream& err = std::cerr) {
  for (const auto& d : deprecations()) {
    if (d.option->count() > 0) err << d.message << "\n";
  }
}

// Parses the command line: nullopt to go on, else the status to exit with (0 after --help or
// --version, kExitUsage after a mistake, which CLI11 has printed). Warns of deprecated spellings.
inline std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;  // CLI11's own codes differ per mistake
  }
  warn_deprecated();
  return std::nullopt;
}

// An output file's name: `-` is standard output, and any other value that starts with `-` is an
// option the user forgot the file before (CLI11 hands `--json -- ./app` the `--` as a value).
inline const CLI::Validator& output_file() {
  static const CLI::Validator validator(
      [](const std::string& path) -> std::string {
        if (path.size() > 1 && path.front() == '-') {
          return "'" + path + "' is not a file name (an option? give the file first; - is stdout)";
        }
        return {};
      },
      "FILE");
  return validator;
}

// Rewrites a duration in base::parse_duration's syntax ("250ms", "2s", "500us"; a bare number is
// milliseconds, so old command lines keep their meaning) as milliseconds, for options that hold
// milliseconds. Whole milliseconds are written without a fraction, so integer options take them.
inline const CLI::Validator& as_milliseconds() {
  static const CLI::Validator validator(
      [](std::string& text) -> std::string {
        try {
          const auto ns = parse_duration(text).count();
          text = ns % 1'000'000 == 0 ? std::to_string(ns / 1'000'000)
                                     : std::to_string(static_cast<double>(ns) / 1e6);
          return {};
        } catch (const std::exception& e) {
          return e.what();
        }
      },
      "DURATION");
  return validator;
}

}  // namespace oaprof::base::cli
