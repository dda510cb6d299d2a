#include "run/profile_plan.h"

#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "attach/replay_config.h"
#include "base/duration.h"
#include "base/errors.h"
#include "gpu/counter_source.h"
#include "mmio/forcewake.h"
#include "mmio/sim_gpu.h"
#include "oa/report_format.h"
#include "power/energy_registry.h"
#include "power/idle_baseline.h"
#include "session/root_paths.h"
#include "session/state_dir.h"

namespace oaprof::run {
namespace {

namespace fs = std::filesystem;

// Durations in the one syntax (base/duration.h), with the option named; the plan keeps
// milliseconds.
std::chrono::milliseconds parse_duration(const std::string& option, const std::string& text) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(base::parse_duration(option, text));
}

// --system-wide takes a duration and no program; a program run takes no duration.
void plan_mode(const ProfileOptions& o, ProfilePlan& plan) {
  plan.command = o.command;
  plan.min_window = parse_duration("--min-window", o.min_window);
  if (o.system_wide) {
    plan.mode = RunMode::kSystemWide;
    if (!o.command.empty()) {
      throw base::UsageError("--system-wide samples the whole GPU: give no program");
    }
    if (o.duration.empty()) {
      throw base::UsageError("--system-wide needs --duration, e.g. --duration 10s");
    }
    plan.duration = parse_duration("--duration", o.duration);
    if (!o.interval.empty()) plan.interval = parse_duration("--interval", o.interval);
    if (plan.interval && plan.interval->count() <= 0) {
      throw base::UsageError("--interval must be > 0");
    }
    return;
  }
  plan.mode = o.mode == "app" ? RunMode::kApp : RunMode::kKernel;
  if (o.mode != "app" && o.mode != "kernel") {
    throw base::UsageError("--mode: give kernel or app, not '" + o.mode + "'");
  }
  if (o.command.empty()) {
    throw base::UsageError(
        "name the program to profile after --, e.g. oaprof -- kernel_runner mad_vect4 (or use "
        "--system-wide --duration 10s)");
  }
  if (!o.duration.empty() || !o.interval.empty()) {
    throw base::UsageError("--duration and --interval go with --system-wide");
  }
}

void plan_launches(const ProfileOptions& o, ProfilePlan& plan) {
  if (o.replay != "off") {
    std::string warning;
    (void)attach::parse_replay_config(o.replay.c_str(), warning);
    if (!warning.empty()) throw base::UsageError("--replay: " + warning);
    if (plan.mode != RunMode::kKernel) {
      throw base::UsageError("--replay goes with --mode kernel");
    }
  }
  plan.replay = o.replay;
  if (o.inject != "auto" && o.inject != "layer" && o.inject != "preload") {
    throw base::UsageError("--inject: give auto, layer or preload, not '" + o.inject + "'");
  }
  plan.inject = o.inject;
  plan.filter = attach::LaunchFilter(o.kernel_name, o.launch_skip, o.launch_count);
}

// A comma-separated option's items, trimmed, each once, in order; none empty.
std::vector<std::string> split_list(std::string_view option, const std::string& text) {
  std::vector<std::string> items;
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = text.find(',', from);
    std::string item = text.substr(from, comma == std::string::npos ? comma : comma - from);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) {
      throw base::UsageError(fmt::format("{}: an empty name in '{}'", option, text));
    }
    if (std::find(items.begin(), items.end(), item) == items.end()) items.push_back(item);
    if (comma == std::string::npos) return items;
    from = comma + 1;
  }
}

}  // namespace

void require_pass_sets(const ProfilePlan& plan, const std::vector<std::string>& sets) {
  for (const std::string& set : sets) {
    // A pass's set names its files (out.<set>.csv): a set symbol, never a path.
    if (sets.size() > 1 &&
        (set.empty() || set.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwx"
                                              "yz0123456789_") != std::string::npos)) {
      throw base::UsageError(fmt::format(
          "--metric-set: '{}' is not a set's symbol name (letters, digits and _)", set));
    }
  }
  if (sets.size() < 2 || plan.application_replay) return;
  // Kernel replay across sets: the session reprograms the unit between a launch's passes.
  if (plan.mode != RunMode::kKernel) {
    throw base::UsageError(
        "several metric sets are counted per launch (kernel replay, the default) or per run "
        "(--replay-mode application), both with --mode kernel and a program");
  }
  if (plan.replay == "auto") {
    throw base::UsageError(
        "--replay auto repeats a launch until the window is covered, which cannot be split "
        "among metric sets: give --replay N (passes per set), or leave it off (one pass per set)");
  }
  if (passes_per_set(plan) * sets.size() > attach::kMaxReplayPasses) {
    throw base::UsageError(
        fmt::format("--replay: {} passes for each of {} sets is more than "
                    "the {} passes a launch may have",
                    passes_per_set(plan), sets.size(), attach::kMaxReplayPasses));
  }
}

std::uint32_t passes_per_set(const ProfilePlan& plan) {
  std::string warning;
  const attach::ReplayConfig c = attach::parse_replay_config(plan.replay.c_str(), warning);
  return c.mode == attach::ReplayConfig::Mode::kFixed ? c.passes : 1;
}

bool kernel_replay_across_sets(const ProfilePlan& plan) {
  return plan.pass_sets.size() > 1 && !plan.application_replay;
}

std::string replay_variable(const ProfilePlan& plan) {
  if (!kernel_replay_across_sets(plan)) return plan.replay;
  return std::to_string(static_cast<std::size_t>(passes_per_set(plan)) * plan.pass_sets.size());
}

attach::Attribution layer_attribution(const ProfilePlan& plan) {
  return plan.sample_period ? attach::Attribution::kSampled : attach::Attribution::kBracketed;
}

const char* attribution_name(const ProfilePlan& plan) {
  return attach::attribution_name(layer_attribution(plan));
}

namespace {

// --metric-set A,B,C or --metrics N,N: a single run's set, or the passes of an application
// replay. One OA configuration counts at a time, so two sets are two passes.
void plan_metric_sets(const ProfileOptions& o, ProfilePlan& plan) {
  if (o.replay_mode != "kernel" && o.replay_mode != "application") {
    throw base::UsageError("--replay-mode: give kernel or application, not '" + o.replay_mode +
                           "'");
  }
  plan.application_replay = o.replay_mode == "application";
  if (plan.application_replay && plan.mode != RunMode::kKernel) {
    throw base::UsageError("--replay-mode application goes with --mode kernel and a program");
  }
  const std::vector<std::string> sets = split_list("--metric-set", o.metric_set);
  if (!o.metrics.empty()) {
    if (o.metric_set != oa::kBuiltinMetricSetSymbol) {
      throw base::UsageError("--metrics chooses the sets itself: give it or --metric-set");
    }
    plan.metric_names = split_list("--metrics", o.metrics);
  }
  require_pass_sets(plan, sets);
  plan.metric_set = sets.front();
  if (sets.size() > 1) plan.pass_sets = sets;
}

// --attribution sampled: a launch is never drained nor repeated, so nothing that repeats it goes
// with it; the period is bounded both ways (a read costs microseconds to tens of them, and an
// interval must stay far under a 32-bit counter's wrap).
void plan_attribution(const ProfileOptions& o, ProfilePlan& plan) {
  if (o.attribution != "bracketed" && o.attribution != "sampled") {
    throw base::UsageError("--attribution: give bracketed or sampled, not '" + o.attribution + "'");
  }
  if (o.attribution == "bracketed") return;
  if (plan.mode != RunMode::kKernel) {
    throw base::UsageError("--attribution sampled goes with --mode kernel and a program");
  }
  if (plan.replay != "off" || kernel_replay_across_sets(plan)) {
    throw base::UsageError(
        "--attribution sampled never repeats a launch: it goes without --replay, and several "
        "metric sets need --replay-mode application with it");
  }
  const auto ns =
      static_cast<std::uint64_t>(base::parse_duration("--sample-period", o.sample_period).count());
  constexpr std::uint64_t kShortest = 100'000, kLongest = 100'000'000;
  if (ns < kShortest || ns > kLongest) {
    throw base::UsageError(
        fmt::format("--sample-period: give 100us to 100ms, not '{}'", o.sample_period));
  }
  plan.sample_period = std::chrono::microseconds(ns / 1000);
}

// The generation is known for the simulator, so its format is checked now; a real device's
// format is checked against its generation once it is identified, but a name no generation has
// is refused here.
void check_format(const std::string& text, const ProfilePlan& plan) {
  if (plan.device.spec.simulated()) {
    (void)oa::parse_format(text, plan.device.sim.platform.gen);
    return;
  }
  std::string first_error;
  for (std::string_view name : oa::platform_names()) {
    try {
      (void)oa::parse_format(text, oa::require_platform_by_name(name).gen);
      return;
    } catch (const std::invalid_argument& e) {
      if (first_error.empty()) first_error = e.what();
    }
  }
  throw base::UsageError(
      fmt::format("--format {}: no supported GPU has this format ({})", text, first_error));
}

void check_access(const std::string& access) {
  std::string names;
  for (const auto& s : gpu::counter_sources()) {
    if (s.name == access) return;
    names += (names.empty() ? "" : ", ") + std::string(s.name);
  }
  throw base::UsageError(fmt::format("--access {}: give one of {}", access, names));
}

// A simulated part xe drives (--sim-platform lnl) is read as xe is on hardware: through its
// observation stream. It has no i915 to ask.
void plan_sim_xe(const ProfileOptions& o, ProfilePlan& plan) {
  if (o.access != "perf") {
    throw base::UsageError(fmt::format(
        "--sim-platform {}: xe drives this part and owns its OA unit, which oaprof reads only "
        "through xe's observation stream: use --access perf, not {}",
        o.sim_platform, o.access));
  }
  plan.device.sim.i915 = false;
}

void plan_device(const ProfileOptions& o, const std::map<std::string, std::string>& env, uid_t euid,
                 ProfilePlan& plan) {
  gpu::DeviceOptions& d = plan.device;
  d.spec = gpu::device_spec_with_pci(gpu::DeviceSpec::parse(o.device_spec), o.pci);
  // The in-process simulator needs no privileges; sim:FILE and real devices do.
  const bool in_process = d.spec.kind() == gpu::DeviceSpec::Kind::kSim;
  plan.through_daemon = o.daemon == "always" || (o.daemon == "auto" && euid != 0 && !in_process);
  if (o.daemon != "auto" && o.daemon != "always" && o.daemon != "never") {
    throw base::UsageError("--daemon: give auto, always or never, not '" + o.daemon + "'");
  }
  check_access(o.access);
  plan.access = o.access;
  d.forcewake.mode = mmio::parse_forcewake_mode(o.forcewake);
  d.forcewake.debugfs_root = o.debugfs_root;
  d.sysfs_root = o.sysfs_root;
  d.map_registers = gpu::access_maps_registers(o.access);  // perf: no BAR
  d.render_node = o.render_node;
  d.drm_card_sysfs = o.drm_card;
  if (o.oa_exponent < -1 || o.oa_exponent > 31) {
    throw base::UsageError("--oa-exponent: give 0 to 31");
  }
  d.perf_period_exponent = o.oa_exponent;
  if (o.sim_eus < 0) throw base::UsageError("--sim-eus: give a positive number of EUs");
  d.sim.eus = o.sim_eus;
  d.sim.i915 = !o.sim_no_i915;
  d.sim.platform = mmio::sim_platform_by_name(o.sim_platform);
  if (plan.device.spec.simulated() && d.sim.platform.driver == oa::KernelDriver::kXe)
    plan_sim_xe(o, plan);
  check_format(o.format_text, plan);
  plan.format_text = o.format_text;
  plan.metrics_xml = o.metrics_xml;
  plan_metric_sets(o, plan);
  plan_attribution(o, plan);

  plan.creds = session::credentials_from_sudo(env, euid);
  // Under sudo the options that point root at files keep their defaults (session/root_paths.h).
  const session::RootPathOption paths[] = {
      {"--sysfs-root", o.sysfs_root, "/sys"},
      {"--debugfs-root", o.debugfs_root, "/sys/kernel/debug"},
      {"--render-node", o.render_node, "auto", "/dev/dri/renderD"},
      {"--drm-card", o.drm_card, "auto", "/sys/class/drm/card"},
  };
  session::require_root_paths_under_sudo(paths, plan.creds);
  session::require_no_register_file_under_sudo(d.spec, plan.creds);
  // Read from the environment once, here, whatever the device: under sudo it is the user's.
  plan.state_dir = session::state_dir_from(env, plan.creds);
}

void plan_energy(const ProfileOptions& o, ProfilePlan& plan) {
  if (power::canonical_energy_backend(o.energy).empty()) {
    std::string names = "auto";
    for (const auto& b : power::energy_backends()) names += ", " + std::string(b.name);
    throw base::UsageError(fmt::format("--energy {}: give one of {}", o.energy, names));
  }
  // Refused before the device is touched where the plan knows enough: a simulated part's
  // placement is its platform's; a real device's is checked once it is open (oaprofd checks its
  // own device the same way).
  const bool simulated = plan.device.spec.simulated();
  power::EnergyDevice device{simulated, power::GpuPlacement::kUnknown,
                             "--device " + plan.device.spec.str()};
  if (simulated) {
    device.placement = plan.device.sim.platform.discrete ? power::GpuPlacement::kDiscrete
                                                         : power::GpuPlacement::kIntegrated;
  }
  power::check_energy_backend_for_device(o.energy, device);
  plan.energy = o.energy;
  plan.igpu_formula = power::parse_igpu_formula_choice(o.igpu_power);
  plan.idle_baseline_ns = power::parse_idle_baseline(o.idle_baseline);
}

void plan_outputs(const ProfileOptions& o, ProfilePlan& plan) {
  OutputPlan& out = plan.outputs;
  const std::string stem = plan.mode == RunMode::kSystemWide
                               ? std::string("oaprof-system")
                               : "oaprof-" + fs::path(o.command[0]).filename().string();
  // Escaped: the program's name may hold a %.
  std::string escaped;
  for (char c : stem) escaped += c == '%' ? std::string("%%") : std::string(1, c);
  const std::string by_default = escaped + (plan.who.rank ? "-%h-%r.csv" : ".csv");
  try {
    out.csv = expand_output_name(o.csv_path.empty() ? by_default : o.csv_path, plan.who);
    out.json = expand_output_name(o.json_path, plan.who);
    out.trace = expand_output_name(o.trace_path, plan.who);
  } catch (const std::invalid_argument& e) {
    throw base::UsageError(fmt::format("output name: {}", e.what()));
  }
  const int on_stdout =
      int(names_stdout(out.csv)) + int(names_stdout(out.json)) + int(names_stdout(out.trace));
  if (on_stdout > 1) {
    throw base::UsageError(
        "more than one of -o, --json and --trace names standard output, where they would mix; "
        "send all but one to files");
  }
  plan.quiet = o.quiet;
  plan.share_kernel_names = o.share_kernel_names;
}

}  // namespace

std::string run_mode_name(RunMode mode) {
  switch (mode) {
    case RunMode::kKernel:
      return "kernel";
    case RunMode::kApp:
      return "app";
    case RunMode::kSystemWide:
      return "system-wide";
  }
  return "kernel";
}

// /dev/stdout is a link (to /proc/self/fd/1), which the user files' O_NOFOLLOW would refuse; the
// descriptor behind it is the one the user gave oaprof, so it is used directly.
bool names_stdout(const std::string& path) { return path == "-" || path == "/dev/stdout"; }

std::span<const std::string_view> rank_variables() {
  static constexpr std::string_view kNames[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"};
  return kNames;
}

RunIdentity run_identity(const std::map<std::string, std::string>& env) {
  RunIdentity who;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) who.host = host;
  who.host = who.host.substr(0, who.host.find('.'));
  who.pid = static_cast<long>(::getpid());
  for (std::string_view name : rank_variables()) {
    const auto it = env.find(std::string(name));
    if (it == env.end()) continue;
    const std::string& v = it->second;
    const bool plain = !v.empty() && v.size() <= 9 &&
                       std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!plain) {
      throw base::UsageError(
          fmt::format("{}={} is not a rank (a plain decimal); unset it or fix the launcher", name,
                      v.substr(0, 32)));
    }
    who.rank = v;
    break;
  }
  return who;
}

std::string expand_output_name(const std::string& pattern, const RunIdentity& who) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    const char c = i + 1 < pattern.size() ? pattern[++i] : '\0';
    switch (c) {
      case 'h':
        out += who.host.empty() ? std::string("unknown-host") : who.host;
        break;
      case 'p':
        out += std::to_string(who.pid);
        break;
      case '%':
        out += '%';
        break;
      case 'r':
        if (!who.rank) {
          throw base::UsageError(fmt::format(
              "{} has %r, but no rank is set (OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID): "
              "run it under mpirun or srun, or use %h-%p",
              pattern));
        }
        out += *who.rank;
        break;
      default:
        throw base::UsageError(fmt::format(
            "{}: unknown %{} (give %h for the host, %p for the pid, %r for the rank, %% for %)",
            pattern, c == '\0' ? std::string() : std::string(1, c)));
    }
  }
  return out;
}

ProfilePlan make_profile_plan(const ProfileOptions& options,
                              const std::map<std::string, std::string>& env, uid_t euid,
                              const RunIdentity& who) {
  ProfilePlan plan;
  plan.who = who;
  plan_mode(options, plan);
  plan_launches(options, plan);
  plan_device(options, env, euid, plan);
  plan_energy(options, plan);
  plan_outputs(options, plan);
  return plan;
}

}  // namespace oaprof::run
