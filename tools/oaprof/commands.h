// The oaprof command line: the default action profiles a program (`oaprof [options] -- cmd`);
// other actions are subcommands (`oaprof power`, `oaprof decode`, …). Each subcommand lives in a
// file tools/oaprof/<name>_command.cc of its own and registers itself with
// OAPROF_REGISTER_SUBCOMMAND, so adding one touches no shared file.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/errors.h"
#include "session/root_paths.h"

namespace oaprof::tools {

// Runs after parsing when its command was chosen; returns the exit status.
using Action = std::function<int()>;

// Adds a subcommand (and its options) to the app and returns it with the action it runs.
using SubcommandFactory = std::function<std::pair<CLI::App*, Action>(CLI::App& app)>;

// Registered subcommands, in registration order.
std::vector<SubcommandFactory>& subcommand_factories();

inline bool register_subcommand(SubcommandFactory factory) {
  subcommand_factories().push_back(std::move(factory));
  return true;
}

#define OAPROF_REGISTER_SUBCOMMAND(ident, factory)               \
  [[maybe_unused]] static const bool oaprof_registered_##ident = \
      ::oaprof::tools::register_subcommand(factory)

// For subcommands that need no root (they read and write only the user's files): under sudo,
// become the invoking user for good before touching any file. Returns 0, or the exit status after
// saying why on stderr: base::kExitUsage for a bad SUDO_UID/SUDO_GID, base::kExitSetup when the
// drop did not take.
int become_sudo_user(const char* command);

// For subcommands that need root and take options pointing at files: under sudo each must keep its
// default (session/root_paths.h). Returns 0, or base::kExitUsage after saying why on stderr.
int require_root_paths(const char* command, std::span<const session::RootPathOption> paths);

// The default action: profile a program. Adds its options to `app` itself (profile_command.cc).
Action add_profile_options(CLI::App& app);

}  // namespace oaprof::tools
