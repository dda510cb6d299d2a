// Private to src/run: the work the selftest's counters checks compare counters with, put on the
// GPU by kernel_runner (the tool oaprof ships beside itself) and measured through the path a
// profile takes: each run is the plan `sudo oaprof --access A --metric-set S -- kernel_runner
// ARGS` would make (bracketed attribution, the program started as the invoking user, the unit
// taken for the run), run by run/profile_run.h with its rows kept in memory for the checks. On
// the simulator it is the same path: the layer's work hints make the simulated GPU (the
// selftest's own SimConfig, faults included) count each catalogue kernel's known work.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/known_work.h"
#include "gpu/device.h"
#include "report/pass_merge.h"

namespace oaprof::run::selftest {

// One profile run of kernel_runner.
struct KernelRun {
  std::string name;                    // how the checks find it: "compute", "load_store_64MiB"
  std::vector<std::string> arguments;  // kernel_runner's, after its path
  // The buffers asked for with --size: a work hint names only the kernel and its work-items, so
  // the simulated GPU is told the rest (ProfilePlan::work_params).
  bench::WorkParams params = {};
  // What it gave, once run.
  report::Pass rows = {};  // each launch measured, as the profile's rows
  int status = -1;         // the profile run's exit status; -1: not run
  // The last line kernel_runner (or the layer in it) wrote, or why oaprof could not run it.
  std::string last_line = {};
};

// Where the runs measure, and the runs: planned while the selftest has the device open, run
// once it has closed it (each run takes the unit itself, as a profile does: never two holders).
struct KnownWork {
  std::optional<std::filesystem::path> kernel_runner;
  std::string why_none;       // none runs: no kernel_runner (where it looked), or root without sudo
  gpu::DeviceOptions device;  // the selftest's own (the simulator's SimConfig, faults included)
  std::string access;         // the read-out, the selftest's first
  std::string metric_set;
  std::string metrics_xml;
  std::vector<KernelRun> runs;

  const KernelRun* find(std::string_view name) const;
};

// "kernel_runner ARGS", as measurements name a run.
std::string command_text(const KernelRun& run);

// Runs each of known.runs in turn, `progress` told its command first. The caller holds no device.
void run_known_work(KnownWork& known, const std::function<void(std::string_view)>& progress);

}  // namespace oaprof::run::selftest
