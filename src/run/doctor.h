// `oaprof doctor`'s checks: each looks at one thing profiling needs (the device, its driver, its
// topology and timestamp clock, debugfs, lockdown, perf permissions, RAPL, virtualisation,
// OpenCL, oaprofd and its group) and
// returns a verdict with the exact fix. Every system path sits under a root the caller chooses,
// so tests run the checks on fake trees; the subcommand (doctor_command.cc) only prints them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mmio/sim_gpu.h"
#include "oa/device_facts.h"
#include "oa/platform.h"
#include "session/privilege_drop.h"

namespace oaprof::gpu {
class XeQuery;
}

namespace oaprof::run::doctor {

// kInfo is a note that needs no action; only kFail makes `oaprof doctor` exit 1.
enum class Verdict { kOk, kInfo, kWarn, kFail, kSkip };

std::string_view verdict_name(Verdict verdict);  // "ok", "info", "warn", "fail", "skip"

struct Check {
  std::string name;  // "device", "driver", "debugfs", …
  Verdict verdict = Verdict::kSkip;
  std::string detail;  // what was found
  std::string fix;     // the command or option that fixes it; empty when none is needed
};

struct DoctorOptions {
  std::filesystem::path sysfs_root = "/sys";
  std::filesystem::path debugfs_root = "/sys/kernel/debug";
  std::filesystem::path proc_root = "/proc";
  std::filesystem::path dev_root = "/dev";
  // Where an administrator's drop-ins for oaprofd.service are (the exporter's among them).
  std::filesystem::path systemd_dropins = "/etc/systemd/system/oaprofd.service.d";
  std::string pci = "0000:00:02.0";
  // Empty: $OAPROF_DAEMON_SOCKET, else session::kDefaultDaemonSocket (session/daemon_paths.h).
  std::string daemon_socket;
  std::string opencl_library = "libOpenCL.so.1";
  // The Level Zero loader and its tracing layer, by the names the loader loads them by.
  std::string level_zero_loader = "libze_loader.so.1";
  std::string level_zero_tracing = "libze_tracing_layer.so.1";
  // Under sudo, the invoking user: the loader is looked for and read as them (run/opencl_loader.h).
  std::optional<session::Credentials> sudo_user;
  // Listing OpenCL platforms loads every ICD into this process; tests of other checks skip it.
  bool opencl_platforms = true;
  std::string opencl_skipped_because = "not listed (--no-opencl-devices)";
  // --device sim: the topology and timestamp checks ask the simulator (with these settings)
  // instead of the device at `pci`.
  std::optional<mmio::SimConfig> sim;
};

// What sysfs says about the PCI device at `address`, read once and shared by several checks.
struct PciFacts {
  std::string address;  // normalised, "0000:00:02.0"
  bool present = false;
  std::uint16_t vendor = 0;
  std::uint16_t device = 0;
  std::uint32_t device_class = 0;
  std::string driver;                    // basename of the driver link; empty when unbound
  std::optional<int> dri_minor;          // N of drm/cardN: debugfs dri/N
  std::optional<int> render_minor;       // M of drm/renderDM: /dev/dri/renderDM
  std::optional<oa::Platform> platform;  // when oaprof knows the PCI id
  bool intel_display() const { return present && vendor == 0x8086 && (device_class >> 16) == 0x03; }
};

// Throws std::invalid_argument for an address that is not a PCI address.
PciFacts read_pci_facts(const std::filesystem::path& sysfs_root, const std::string& address);

Check check_device(const PciFacts& pci);
Check check_driver(const PciFacts& pci);
Check check_debugfs(const PciFacts& pci, const DoctorOptions& options);

// What oaprof learns about the device when it opens it, asked the same way: i915 on its render
// node under options.dev_root (nothing is mapped, forcewake is not taken), or the simulator's
// i915 and clock registers for --device sim. nullopt without a known platform.
struct ProbedFacts {
  oa::Platform table;  // the PCI id's platform, as the table has it
  oa::DeviceFacts facts;
  std::string device;                 // "0000:00:02.0" or "simulated KBL GT2 (23 EUs, 1150 MHz)"
  std::optional<Check> engine_clock;  // xe only: check_engine_clock
};
std::optional<ProbedFacts> probe_facts(const PciFacts& pci, const DoctorOptions& options);
// The topology it read, or that it fell back to the platform table (and rows say so).
Check check_topology(const std::optional<ProbedFacts>& probed);
// The timestamp frequency it read (i915, the clock registers), or the table's it fell back to.
Check check_timestamp(const std::optional<ProbedFacts>& probed);
// xe: whether DRM_XE_DEVICE_QUERY_ENGINE_CYCLES answers for the render OAG's engine, by whose
// timestamp xe snapshots are placed; `xe` null: it could not be asked, `no_xe` says why. On
// Xe-LPG, whose OA clock is not the engine's, it says that snapshots wait instead.
Check check_engine_clock(const oa::Platform& platform, gpu::XeQuery* xe, const std::string& device,
                         const std::string& no_xe);
Check check_lockdown(const DoctorOptions& options);
Check check_perf_stream_paranoid(const DoctorOptions& options);
Check check_xe_observation(const DoctorOptions& options);
// Which energy source profiles of the GPU (`platform`, when known) would use, and why: a
// discrete card's own hwmon sensors, never RAPL; RAPL for an integrated GPU; the simulated
// source of the simulated part's placement with --device sim.
Check check_energy(const DoctorOptions& options, const std::optional<oa::Platform>& platform);
Check check_virtualisation(const PciFacts& pci, const DoctorOptions& options);
Check check_opencl_loader(const DoctorOptions& options);
Check check_opencl_platforms(const DoctorOptions& options);
// Level Zero's way in: the loader's tracing layer where the dynamic linker finds it (what
// `--inject auto` picks), else LD_PRELOAD; and whether there is a Level Zero loader at all.
Check check_level_zero(const DoctorOptions& options);
// `euid` decides whether a missing daemon matters: root profiles without it (sudo oaprof).
Check check_daemon(const DoctorOptions& options, unsigned euid);
Check check_group(unsigned euid);
// oaprofd's Prometheus exporter: off, or where its drop-in makes it listen, whether that stays on
// this machine, and whether anything answers there.
Check check_exporter(const DoctorOptions& options);
// The --metrics-listen value of an ExecStart= line among `dropin_text`'s lines: nullopt when no
// line starts oaprofd with it, "" when it is given without a value.
std::optional<std::string> metrics_listen_in(const std::string& dropin_text);
// Gen8–11 only: why rows may be flagged config_lost (gpu::kContextSavedNote).
std::optional<Check> context_saved_note(const PciFacts& pci);

// Which read-outs (`--access mmio|rpc|perf`) this part and machine allow, one check each
// ("access-mmio", "access-rpc", "access-perf"), and why not: the generation (Haswell is perf
// only), kernel lockdown and root for the BAR, perf_stream_paranoid, root or CAP_PERFMON for a
// system-wide stream, and on Gen12+ what the read-out reads (OAG; rpc's B/C) and GuC submission.
// `euid` and `cap_perfmon` are the invoking process's.
std::vector<Check> check_readouts(const std::optional<oa::Platform>& platform,
                                  const DoctorOptions& options, unsigned euid, bool cap_perfmon);
// Whether CapEff in <proc>/self/status has CAP_PERFMON (38) or CAP_SYS_ADMIN (21).
bool has_cap_perfmon(const std::filesystem::path& proc_root);

// The daemon check's verdict for connect(2)'s result: 0, or the errno it failed with.
Check daemon_verdict(const std::string& socket_path, int connect_errno, unsigned euid);

// The socket `oaprof doctor` tries: `option`, else the one every client tries
// (session::daemon_socket_path()).
std::string daemon_socket_path(const std::string& option);

// Every check, in the order a user fixes things.
std::vector<Check> run_checks(const DoctorOptions& options);

bool any_failed(const std::vector<Check>& checks);

}  // namespace oaprof::run::doctor
