// The oaprof command line: the default action profiles a program (`oaprof [options] -- cmd`);
// other actions are subcommands (`oaprof power`, …), each in a file of its own that adds itself
// to the CLI11 app and runs when chosen.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace oaprof::tools {

// Exit status of oaprof's own failures. When a profiled program ran, oaprof exits with the
// program's status instead (128 + N when it was killed by signal N).
inline constexpr int kExitUsage = 2;
inline constexpr int kExitSetup = 3;
inline constexpr int kExitOutput = 4;
inline constexpr int kExitCannotRun = 127;

// What a subcommand registers: the action runs after parsing when its subcommand was chosen
// and returns the exit status.
using Action = std::function<int()>;

// The default action: profile a program. Adds its options to `app` itself.
Action add_profile_options(CLI::App& app);

}  // namespace oaprof::tools
