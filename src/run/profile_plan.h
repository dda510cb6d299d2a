// A profile run's options, parsed and checked once, before anything is opened: the device, the
// read-out, format and metric set, energy, launch filters, outputs and mode. Everything after
// make_profile_plan trusts the plan; a bad option, a bad SUDO_UID or a root path under sudo fails
// here, before a device is opened, a lock taken or a file created.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attach/launch_filter.h"
#include "attach/layer_config.h"
#include "bench/known_work.h"
#include "gpu/device.h"
#include "model/energy_model.h"
#include "oa/builtin_metric_set.h"
#include "power/energy_source.h"
#include "session/privilege_drop.h"

namespace oaprof::run {

// The options as the command line gives them (text, unchecked).
struct ProfileOptions {
  std::string device_spec = "auto";
  std::string pci;  // --pci BDF: the same as --device BDF
  std::string daemon = "auto";
  std::string access = "mmio";
  std::string format_text = "auto";
  std::string metric_set = std::string(oa::kBuiltinMetricSetSymbol);  // one, or A,B,C
  std::string metrics;  // --metrics NAME,NAME: the counters wanted; oaprof chooses the sets
  std::string replay_mode = "kernel";  // --replay-mode: kernel | application
  std::string metrics_xml;
  std::string forcewake = "auto";
  std::string debugfs_root = "/sys/kernel/debug";
  std::string render_node = "auto";
  std::string drm_card = "auto";
  int oa_exponent = -1;      // --oa-exponent; -1: the driver's default (16 on i915, 10 on xe)
  int sim_eus = 0;           // --sim-eus: the simulated part's EUs, some fused off
  bool sim_no_i915 = false;  // --sim-no-i915: the simulated device has no i915 to ask
  std::string sim_platform = "kblgt2";  // --sim-platform: which part --device sim simulates
  std::string csv_path;
  std::string json_path;
  std::string trace_path;  // --trace: a Perfetto trace
  std::string min_window = "50ms";
  std::string mode = "kernel";
  std::string inject = "auto";
  std::string replay = "off";
  std::string attribution = "bracketed";  // --attribution: bracketed | sampled
  std::string sample_period = "1ms";      // --sample-period, with sampled attribution
  std::string kernel_name;
  std::uint64_t launch_skip = 0;
  std::optional<std::uint64_t> launch_count;
  bool system_wide = false;
  std::string duration;
  std::string interval;
  std::string energy = "auto";
  std::string igpu_power = "auto";
  std::string idle_baseline = "250ms";
  std::string energy_model;  // --energy-model FILE: model.json of `oaprof model fit`
  std::string sysfs_root = "/sys";
  bool quiet = false;
  bool share_kernel_names = false;  // --share-kernel-names
  std::vector<std::string> command;
};

// Who this run is among many (a Slurm or MPI job): the host, oaprof's pid and the rank the
// launcher gave it, for output names (%h, %p, %r) and the rows' host and rank.
struct RunIdentity {
  std::string host;  // the short host name
  long pid = 0;
  std::optional<std::string> rank;  // a plain decimal, from rank_variables()
};

// The environment variables a rank is read from, first found first: Open MPI's
// OMPI_COMM_WORLD_RANK, MPICH/Hydra's PMI_RANK, then Slurm's SLURM_PROCID (checked after the MPI
// ones: an mpirun inside a Slurm allocation leaves one SLURM_PROCID for all its ranks).
std::span<const std::string_view> rank_variables();

// This process's identity. Throws std::invalid_argument for a rank variable that is not a plain
// decimal.
RunIdentity run_identity(const std::map<std::string, std::string>& env);

// An output name with %h (host), %p (pid), %r (rank) and %% expanded. Throws
// std::invalid_argument for another %-sequence, and for %r without a rank.
std::string expand_output_name(const std::string& pattern, const RunIdentity& who);

enum class RunMode { kKernel, kApp, kSystemWide };

// "kernel", "app", "system-wide": as RunInfo and the rows name the mode.
std::string run_mode_name(RunMode mode);

// Where the rows go. "-" and /dev/stdout name oaprof's standard output (names_stdout); at most one
// output is there. The summary table always goes to stderr: stdout is the program's.
struct OutputPlan {
  // oaprof-<program>.csv or oaprof-system.csv by default, with -<host>-<rank> before .csv when a
  // rank is set, so that the ranks of a job never write one file. Patterns expanded. Empty only
  // in a plan whose rows are kept in memory alone (run_profile_captured: the selftest's).
  std::string csv;
  std::string json;
  std::string trace;
};

bool names_stdout(const std::string& path);

struct ProfilePlan {
  // The device as a local run opens it (spec, simulator, forcewake, sysfs, DRM nodes); the same
  // spec, access, format and set go to oaprofd through it.
  gpu::DeviceOptions device;
  bool through_daemon = false;
  std::string access;
  std::string format_text;  // checked where the generation is known (the simulator), else at open
  std::string metric_set;   // the set of a single run, or of the first pass
  std::string metrics_xml;
  // Two and more sets: by kernel replay (each measured launch runs once per set, the unit
  // reprogrammed between passes), or by application replay (--replay-mode application: the
  // program runs once per set, in order); either way the passes' rows are joined per launch
  // (report/pass_merge.h). Empty: one set.
  std::vector<std::string> pass_sets;
  bool application_replay = false;
  // --metrics: counter names the run's sets must cover, chosen once the platform's metric file
  // is known (choose_metric_sets); empty: the sets are --metric-set's.
  std::vector<std::string> metric_names;

  RunMode mode = RunMode::kKernel;
  std::vector<std::string> command;  // empty only for kSystemWide
  std::chrono::milliseconds min_window{};
  std::chrono::milliseconds duration{};               // kSystemWide
  std::optional<std::chrono::milliseconds> interval;  // kSystemWide: a row per interval
  std::string replay = "off";                         // kKernel: OAPROF_REPLAY as given
  attach::LaunchFilter filter;
  std::string inject = "auto";  // kKernel: auto | layer | preload
  // kKernel on a simulated device: the work of a catalogue kernel beyond what the layer's work
  // hint names (the kernel and its work-items), which the simulated GPU counts: kernel_runner's
  // defaults, unless the plan's maker knows the buffers the program asks for (the selftest's
  // known-work runs pass --size).
  bench::WorkParams work_params;
  // Where the program's standard output and error go (a descriptor of oaprof's); -1: oaprof's
  // own. The selftest keeps kernel_runner's table off its own and reads its last line.
  int program_output_fd = -1;
  // kKernel: sampled attribution (--attribution sampled) reads the counters every
  // `sample_period` and gives each launch their growth over its OpenCL window, never draining
  // the program; nullopt: bracketed snapshots around each launch.
  std::optional<std::chrono::microseconds> sample_period;

  std::string energy;  // a backend name or auto
  // nullopt: auto, decided by the energy source (power::default_igpu_formula).
  std::optional<power::IgpuFormula> igpu_formula;
  std::optional<std::uint64_t> idle_baseline_ns;
  // --energy-model: read as the invoking user and checked (run/energy_model_file.h) before
  // anything is opened; every row then gets its modelled energy. Null: none.
  std::shared_ptr<const model::EnergyModel> energy_model;
  std::string energy_model_path;  // as given, for messages

  OutputPlan outputs;
  bool quiet = false;
  // Through oaprofd: the kernel names of the summary sent as the session ends may be shown on the
  // exporter's page, which every local user can read (docs/exporter.md); otherwise that page
  // counts this run's launches only under kernel="(private)".
  bool share_kernel_names = false;
  RunIdentity who;  // the rows' host and rank

  // Under sudo, the user the program and the output files run as; nullopt otherwise.
  std::optional<session::Credentials> creds;
  std::filesystem::path state_dir;  // where the session lock and register journal live
};

// Throws std::invalid_argument unless `sets` can be counted as the plan says: one set, or two and
// more, each then a set symbol (letters, digits, _), since it names its pass's files. Two and
// more by kernel replay (the default --replay-mode) need --mode kernel, and --replay off or N
// (passes per set).
void require_pass_sets(const ProfilePlan& plan, const std::vector<std::string>& sets);

// Kernel replay across sets: two and more pass sets without --replay-mode application.
bool kernel_replay_across_sets(const ProfilePlan& plan);
// Passes each set gets in a kernel replay: --replay N, else 1.
std::uint32_t passes_per_set(const ProfilePlan& plan);
// OAPROF_REPLAY for the program: --replay as given, or the passes of every set of a kernel
// replay across sets.
std::string replay_variable(const ProfilePlan& plan);
// The run's attribution, as the layer is told it, and as the rows' metadata and
// OAPROF_ATTRIBUTION name it: "bracketed" or "sampled".
attach::Attribution layer_attribution(const ProfilePlan& plan);
const char* attribution_name(const ProfilePlan& plan);

// Parses and checks every option. `env` is the process environment (SUDO_UID, SUDO_GID,
// OAPROF_STATE_DIR), `euid` the effective uid. Throws std::invalid_argument saying which option
// is wrong and what to give instead; nothing is opened or created.
ProfilePlan make_profile_plan(const ProfileOptions& options,
                              const std::map<std::string, std::string>& env, uid_t euid,
                              const RunIdentity& who = {});

}  // namespace oaprof::run
