// oaprof: profiles every OpenCL kernel launch of a program with the GPU's OA counters.
//   sudo oaprof [options] -- program [args…]
//   oaprof SUBCOMMAND …   (see oaprof --help)
#include <iostream>
#include <vector>

#include "tools/oaprof/commands.h"

namespace oaprof::tools {

std::vector<SubcommandFactory>& subcommand_factories() {
  static std::vector<SubcommandFactory> factories;
  return factories;
}

}  // namespace oaprof::tools

int main(int argc, char** argv) {
  using namespace oaprof::tools;
  CLI::App app{"oaprof: per-kernel hardware counters of Intel integrated GPUs for OpenCL programs.\n"
               "Runs PROGRAM with an OpenCL layer that snapshots the GPU's OA counters around every "
               "kernel launch, and reports per-launch counter deltas.",
               "oaprof"};
  app.set_version_flag("--version", "oaprof " OAPROF_VERSION);
  const Action profile = add_profile_options(app);
  std::vector<std::pair<CLI::App*, Action>> subcommands;
  for (const auto& factory : subcommand_factories()) subcommands.push_back(factory(app));
  // Set after the subcommands exist: CLI11 hands a parent's footer to subcommands created later,
  // and these exit codes and the example are the profiler's, not the subcommands'.
  app.footer(
      "Exit status: the program's own status (128+N if killed by signal N); 2 bad options, 3 the "
      "GPU or session could not be set up, 4 the output file cannot be written, 5 the GPU "
      "session broke during the run (the rows written are kept; oaprofd gone), 127 the program "
      "could not be started.\n"
      "Example: oaprof --device sim --format 101 -o oaprof-mad_vect4.csv -- kernel_runner mad_vect4");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  for (const auto& [sub, action] : subcommands) {
    if (sub->parsed()) return action();
  }
  return profile();
}
