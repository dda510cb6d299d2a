// oaprof: profiles every OpenCL kernel launch of a program with the GPU's OA counters.
//   sudo oaprof [options] -- program [args…]
//   oaprof SUBCOMMAND …   (see oaprof --help)
#include <unistd.h>

#include <iostream>
#include <stdexcept>
#include <vector>

#include "base/cli.h"
#include "session/privilege_drop.h"
#include "tools/oaprof/commands.h"

namespace oaprof::tools {

std::vector<SubcommandFactory>& subcommand_factories() {
  static std::vector<SubcommandFactory> factories;
  return factories;
}

int become_sudo_user(const char* command) {
  return base::run_command(std::string("oaprof ") + command, [] {
    session::drop_to_sudo_user();
    return 0;
  });
}

int require_root_paths(const char* command, std::span<const session::RootPathOption> paths) {
  return base::run_command(std::string("oaprof ") + command, [paths] {
    session::require_root_paths_under_sudo(
        paths, session::credentials_from_sudo(session::process_environment(), ::geteuid()));
    return 0;
  });
}

}  // namespace oaprof::tools

int main(int argc, char** argv) {
  using namespace oaprof::tools;
  CLI::App app{
      "oaprof: per-kernel hardware counters of Intel integrated GPUs for OpenCL programs.\n"
      "Runs PROGRAM with an OpenCL layer that snapshots the GPU's OA counters around\n"
      "every kernel launch, and reports per-launch counter deltas (docs/cli.md).",
      "oaprof"};
  oaprof::base::cli::add_help_all(app, argc, argv);
  app.set_version_flag("--version", "oaprof " OAPROF_VERSION);
  const Action profile = add_profile_options(app);
  std::vector<std::pair<CLI::App*, Action>> subcommands;
  for (const auto& factory : subcommand_factories()) subcommands.push_back(factory(app));
  // Set after the subcommands exist: CLI11 hands a parent's footer to subcommands created later,
  // and these exit codes and the example are the profiler's, not the subcommands'.
  app.footer(
      "Exit status:\n"
      "  the program's own status (128+N if it was killed by signal N), else\n"
      "  2    bad options (or, under sudo, a SUDO_UID/SUDO_GID that is not a plain id, or an\n"
      "       OAPROF_STATE_DIR)\n"
      "  3    the GPU or the session could not be set up\n"
      "  4    an output file cannot be written as the invoking user\n"
      "  5    the GPU session broke during the run (the rows written are kept; oaprofd gone)\n"
      "  6    application replay: the runs launched different sequences (each pass's file is\n"
      "       kept, no joined file)\n"
      "  127  the program could not be started (or the drop to the invoking user did not take)\n"
      "Example:\n"
      "  oaprof --device sim --format 101 -o oaprof-mad_vect4.csv -- kernel_runner mad_vect4");

  if (const auto status = oaprof::base::cli::parse(app, argc, argv)) return *status;
  // Each command says what went wrong itself; this catches what escapes one, with the status its
  // type means (base/errors.h), instead of std::terminate.
  for (const auto& [sub, action] : subcommands) {
    if (sub->parsed()) return oaprof::base::run_command("oaprof " + sub->get_name(), action);
  }
  return oaprof::base::run_command("oaprof", profile);
}
