#include "run/doctor.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <stdexcept>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include "attach/loader.h"
#include "daemon/listen_address.h"
#include "gpu/counter_source.h"
#include "gpu/device.h"
#include "gpu/i915/i915_query.h"
#include "gpu/xe/xe_query.h"
#include "mmio/pci_bar.h"
#include "mmio/pci_sysfs.h"
#include "power/energy_registry.h"
#include "power/hwmon.h"
#include "report/row.h"
#include "run/opencl_loader.h"
#include "session/daemon_paths.h"
#include "session/remote_source.h"

namespace oaprof::run::doctor {
namespace fs = std::filesystem;

namespace {

// The first line of a small sysfs or procfs file, without its newline; nullopt when unreadable.
std::optional<std::string> read_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

Check make(std::string name, Verdict verdict, std::string detail, std::string fix = {}) {
  return Check{std::move(name), verdict, std::move(detail), std::move(fix)};
}

// Whether a TCP connection to the address is accepted (within a second).
bool port_answers(const daemon::ListenAddress& address) {
  const bool v6 = address.host.starts_with('[');
  const int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int rc = -1;
  if (v6) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(static_cast<std::uint16_t>(address.port));
    ::inet_pton(AF_INET6, address.host.substr(1, address.host.size() - 2).c_str(), &a.sin6_addr);
    rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  } else {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(address.port));
    ::inet_pton(AF_INET, address.host.c_str(), &a.sin_addr);
    rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  }
  ::close(fd);
  return rc == 0;
}

bool i915_bound(const PciFacts& pci) { return pci.intel_display() && pci.driver == "i915"; }

std::string platform_text(const oa::Platform& p) {
  return fmt::format("{}, {} {}, {} EUs", p.codename, oa::generation_name(p.gen), oa::gt_label(p),
                     p.eus);
}

}  // namespace

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kOk:
      return "ok";
    case Verdict::kInfo:
      return "info";
    case Verdict::kWarn:
      return "warn";
    case Verdict::kFail:
      return "fail";
    case Verdict::kSkip:
      return "skip";
  }
  return "?";
}

PciFacts read_pci_facts(const fs::path& sysfs_root, const std::string& address) {
  PciFacts facts;
  const mmio::PciAddress addr = mmio::parse_pci_address(address);
  facts.address = addr.str();
  const fs::path dir = mmio::pci_device_dir(sysfs_root, addr);
  std::error_code ec;
  facts.present = fs::exists(dir, ec);
  if (!facts.present) return facts;
  if (const auto id = mmio::read_pci_identity(sysfs_root, addr)) {
    facts.vendor = id->vendor;
    facts.device = id->device;
    facts.device_class = id->device_class;
  }
  const fs::path driver = fs::read_symlink(dir / "driver", ec);
  if (!ec) facts.driver = driver.filename().string();
  const mmio::DrmNodes nodes = mmio::find_drm_nodes(sysfs_root, addr);
  facts.dri_minor = nodes.card_minor;
  facts.render_minor = nodes.render_minor;
  if (facts.intel_display()) facts.platform = oa::platform_for_pci_id(facts.device);
  // Tiger Lake to Meteor Lake may be bound to xe (xe.force_probe): judged as xe's then.
  if (facts.platform && facts.driver == "xe") facts.platform->driver = oa::KernelDriver::kXe;
  return facts;
}

Check check_device(const PciFacts& pci) {
  if (!pci.present) {
    return make("device", Verdict::kFail, fmt::format("no PCI device at {}", pci.address),
                "use --pci BDF or --device sim: find the Intel GPU with `lspci -D -d 8086::0300`; "
                "without one, profile the simulator with --device sim");
  }
  if (!pci.intel_display()) {
    return make("device", Verdict::kFail,
                fmt::format("{} is not an Intel display device (vendor 0x{:04x}, class 0x{:06x})",
                            pci.address, pci.vendor, pci.device_class),
                "use --pci BDF or --device sim: find the Intel GPU with `lspci -D -d 8086::0300` "
                "and profile it with --pci BDF; without one, use --device sim");
  }
  if (!pci.platform) {
    return make("device", Verdict::kWarn,
                fmt::format("{} is an Intel display device (8086:{:04x}) that oaprof does not "
                            "know: no platform table entry, so no counter layout or clocks",
                            pci.address, pci.device),
                "profile with --device sim, or add the PCI id to src/oa/platform.cc with its "
                "platform");
  }
  return make("device", Verdict::kOk,
              fmt::format("{} is an Intel display device (8086:{:04x}: {})", pci.address,
                          pci.device, platform_text(*pci.platform)));
}

Check check_driver(const PciFacts& pci) {
  if (!pci.intel_display()) return make("driver", Verdict::kSkip, "no Intel display device");
  if (pci.driver == "i915") {
    return make("driver", Verdict::kOk, fmt::format("i915 is bound to {}", pci.address));
  }
  const oa::Generation gen = pci.platform ? pci.platform->gen : oa::Generation::kGen9;
  if (pci.driver == "xe" && pci.platform && gen == oa::Generation::kXe2) {
    return make("driver", Verdict::kOk,
                fmt::format("xe is bound to {} ({}): oaprof reads it through xe's observation "
                            "stream (--access perf); the register read-outs stay xe's "
                            "(docs/xe.md)",
                            pci.address, pci.platform->codename));
  }
  if (pci.driver == "xe" && pci.platform && oa::is_gen12_family(gen)) {
    // Both drivers can run these parts; i915 gives every row exact MI_RPC snapshots.
    return make("driver", Verdict::kOk,
                fmt::format("xe is bound to {0} ({1}): oaprof reads it through xe's observation "
                            "stream (--access perf), its snapshots periodic reports (rows "
                            "flagged xe_periodic); under i915 they are exact to the kernel: boot "
                            "with i915.force_probe={2:04x} xe.force_probe=!{2:04x} for that "
                            "(docs/xe.md)",
                            pci.address, pci.platform->codename, pci.device));
  }
  if (pci.driver == "xe") {
    return make("driver", Verdict::kFail,
                fmt::format("xe is bound to {}, which oaprof does not know as a part xe has OA "
                            "for (Gen12 and later): it reads none of it (docs/xe.md)",
                            pci.address),
                "bind i915 to it, or use --device sim");
  }
  if (pci.driver.empty()) {
    return make("driver", Verdict::kFail, fmt::format("no driver is bound to {}", pci.address),
                "sudo modprobe i915 (and read `dmesg | grep i915` if it still does not bind)");
  }
  return make(
      "driver", Verdict::kFail,
      fmt::format("{} is bound to {}, not to i915", pci.address, pci.driver),
      fmt::format("give it back to i915: echo {0} | sudo tee /sys/bus/pci/drivers/{1}/unbind"
                  " && echo {0} | sudo tee /sys/bus/pci/drivers/i915/bind",
                  pci.address, pci.driver));
}

Check check_debugfs(const PciFacts& pci, const DoctorOptions& options) {
  if (!i915_bound(pci)) return make("forcewake", Verdict::kSkip, "no device bound to i915");
  const int minor = pci.dri_minor.value_or(0);
  const fs::path file =
      options.debugfs_root / "dri" / std::to_string(minor) / "i915_forcewake_user";
  std::error_code ec;
  if (fs::exists(file, ec)) {
    return make("forcewake", Verdict::kOk,
                fmt::format("debugfs is mounted; forcewake is held through {}", file.string()));
  }
  if (ec == std::errc::permission_denied) {
    return make("forcewake", Verdict::kSkip,
                fmt::format("{} cannot be read without root", options.debugfs_root.string()),
                "run `sudo oaprof doctor` to check it (oaprofd and sudo oaprof open it as root)");
  }
  const std::string fallback =
      "; until then oaprof wakes the GPU through its forcewake registers (--forcewake registers)";
  if (!fs::exists(options.debugfs_root / "dri", ec)) {
    return make(
        "forcewake", Verdict::kWarn,
        fmt::format("debugfs is not mounted at {}", options.debugfs_root.string()),
        fmt::format("sudo mount -t debugfs none {}{}", options.debugfs_root.string(), fallback));
  }
  return make("forcewake", Verdict::kWarn,
              fmt::format("debugfs is mounted but has no {}", file.string()),
              fmt::format("check that dri/{} is this device's i915 minor (--debugfs-root names "
                          "another debugfs){}",
                          minor, fallback));
}

std::optional<ProbedFacts> probe_facts(const PciFacts& pci, const DoctorOptions& options) {
  if (options.sim) {
    const gpu::Device d = gpu::make_sim_device(std::make_unique<mmio::ManualClock>(), *options.sim);
    ProbedFacts probed{options.sim->platform, d.facts, d.mmio->describe(), std::nullopt};
    if (d.sim_xe) {
      probed.engine_clock = check_engine_clock(
          options.sim->platform, gpu::make_sim_xe_query(*d.sim_xe).get(), probed.device, "");
    }
    return probed;
  }
  if (!pci.intel_display() || !pci.platform) return std::nullopt;
  const bool xe = pci.driver == "xe";
  std::unique_ptr<gpu::I915Query> i915;
  std::unique_ptr<gpu::XeQuery> xe_query;
  std::string why;
  if (!pci.render_minor) {
    why = fmt::format("{} has no DRM render node in sysfs (drm/renderDN): is {} bound to it?",
                      pci.address, xe ? "xe" : "i915");
  } else {
    try {
      const fs::path node = options.dev_root / "dri" / fmt::format("renderD{}", *pci.render_minor);
      if (xe) {
        xe_query = gpu::open_xe_query(node.string());
      } else {
        i915 = gpu::open_i915_query(node.string());
      }
    } catch (const std::exception& e) {
      why = e.what();
    }
  }
  if (xe) {
    return ProbedFacts{*pci.platform, gpu::read_xe_device_facts(*pci.platform, xe_query.get(), why),
                       pci.address,
                       check_engine_clock(*pci.platform, xe_query.get(), pci.address, why)};
  }
  // No register is read here: doctor maps nothing and takes no forcewake.
  return ProbedFacts{*pci.platform, gpu::read_device_facts(*pci.platform, i915.get(), why, nullptr),
                     pci.address, std::nullopt};
}

Check check_engine_clock(const oa::Platform& platform, gpu::XeQuery* xe, const std::string& device,
                         const std::string& no_xe) {
  constexpr const char* kName = "engine-clock";
  const std::string waits =
      "xe snapshots then wait out xe's 5 ms buffer poll, so each row's gpu_time_ns may include "
      "up to 5 ms of idle beside the kernel (event counts stay whole; docs/xe.md)";
  if (platform.gen == oa::Generation::kXeLpg) {
    return make(kName, Verdict::kWarn,
                fmt::format("{}: on Xe-LPG the OA unit's timestamp counts at a rate scaled from "
                            "the engine's (xe_oa.c, Wa_18013179988), so the engine's cannot place "
                            "snapshots; {}",
                            device, waits),
                "for snapshots exact to the kernel, have i915 drive it (the driver line gives "
                "the boot options)");
  }
  if (xe == nullptr) {
    return make(kName, Verdict::kWarn,
                fmt::format("{}: xe could not be asked ({}); {}", device, no_xe, waits),
                "make the render node readable (the render group), or run oaprof with sudo");
  }
  try {
    const std::vector<gpu::XeOaUnit> units = gpu::query_xe_oa_units(*xe);
    const gpu::XeOaUnit* oag = gpu::render_oag(units);
    if (oag == nullptr) {
      return make(kName, Verdict::kWarn,
                  fmt::format("{}: xe lists no OA unit with a render or compute engine; {}", device,
                              waits));
    }
    const gpu::xe::EngineClassInstance engine = *gpu::render_engine(*oag);
    const gpu::XeEngineCycles c = gpu::query_xe_engine_cycles(*xe, engine);
    return make(
        kName, Verdict::kOk,
        fmt::format("{}: ENGINE_CYCLES reads engine class {} instance {}'s {}-bit "
                    "timestamp beside CLOCK_MONOTONIC (read in {} ns); oaprof places each "
                    "xe snapshot at the first OA report at or after it",
                    device, engine.engine_class, engine.engine_instance, c.width, c.cpu_delta_ns));
  } catch (const std::runtime_error& e) {
    return make(kName, Verdict::kWarn, fmt::format("{}: {}; {}", device, e.what(), waits));
  }
}

namespace {

constexpr const char* kAskI915Fix =
    "let oaprof ask i915: bind i915 to the device (see the driver check) and make its render "
    "node readable (sudo usermod -aG render $USER, then log in again; sudo oaprof and oaprofd "
    "can read it as root); for offline work (oaprof decode) give --eus/--subslices";

}  // namespace

Check check_topology(const std::optional<ProbedFacts>& probed) {
  if (!probed) return make("topology", Verdict::kSkip, "no Intel GPU oaprof knows");
  const oa::DeviceFacts& f = probed->facts;
  if (!f.topology_from_table()) {
    std::string detail = fmt::format("{}: {}, read from the {} ({})", probed->device,
                                     oa::describe_topology(f.topology),
                                     oa::topology_source_name(f.topology_source), f.topology_note);
    if (f.topology.eus != probed->table.eus) {
      detail += fmt::format("; the platform table's {} has {}: the rest are fused off",
                            probed->table.codename, probed->table.eus);
    }
    return make("topology", Verdict::kOk, detail);
  }
  return make(
      "topology", Verdict::kWarn,
      fmt::format("{}: {} could not be asked ({}); oaprof falls back to the platform "
                  "table's {} and flags every row {}",
                  probed->device, oa::kernel_driver_name(probed->table.driver), f.topology_note,
                  oa::describe_topology(f.topology), report::kTopologyFromTableFlag),
      kAskI915Fix);
}

Check check_timestamp(const std::optional<ProbedFacts>& probed) {
  if (!probed) return make("timestamp", Verdict::kSkip, "no Intel GPU oaprof knows");
  const oa::DeviceFacts& f = probed->facts;
  const double mhz = f.timestamp_hz / 1e6;
  switch (f.timestamp_source) {
    case oa::TimestampSource::kI915GetParam:
      return make(
          "timestamp", Verdict::kOk,
          fmt::format("{}: {:g} MHz, read from i915 ({})", probed->device, mhz, f.timestamp_note));
    case oa::TimestampSource::kRegisters:
      return make("timestamp", Verdict::kOk,
                  fmt::format("{}: {:g} MHz, read from the clock registers ({})", probed->device,
                              mhz, f.timestamp_note));
    case oa::TimestampSource::kXeOaUnit:
      return make("timestamp", Verdict::kOk,
                  fmt::format("{}: {:g} MHz, read from xe's OA unit ({})", probed->device, mhz,
                              f.timestamp_note));
    case oa::TimestampSource::kPlatformTable:
      break;
  }
  const oa::Generation gen = probed->table.gen;
  if (gen == oa::Generation::kGen7_5 || gen == oa::Generation::kGen8) {
    return make("timestamp", Verdict::kOk,
                fmt::format("{}: {:g} MHz, fixed on {} (i915 reads no register there)",
                            probed->device, mhz, oa::generation_name(gen)));
  }
  return make("timestamp", Verdict::kWarn,
              fmt::format("{}: i915 could not be asked ({}); oaprof uses the platform table's "
                          "{:g} MHz, or with --access mmio reads the clock registers (CTC_MODE, "
                          "RPM_CONFIG0) instead",
                          probed->device, f.timestamp_note, mhz),
              kAskI915Fix);
}

Check check_lockdown(const DoctorOptions& options) {
  const auto mode = mmio::kernel_lockdown_mode(options.sysfs_root);
  if (!mode) {
    return make("lockdown", Verdict::kOk,
                fmt::format("no kernel lockdown ({} is absent)",
                            (options.sysfs_root / "kernel" / "security" / "lockdown").string()));
  }
  if (!mmio::lockdown_forbids_bar(mode)) {
    return make("lockdown", Verdict::kOk, fmt::format("kernel lockdown: {}", *mode));
  }
  return make("lockdown", Verdict::kFail,
              fmt::format("kernel lockdown is '{}': the kernel refuses to map the GPU's BAR, so "
                          "--access mmio and rpc cannot program or read the OA unit",
                          *mode),
              "profile with --access perf (the i915 perf stream), or boot without lockdown: "
              "disable Secure Boot (Debian and Ubuntu kernels lock down under it) and remove any "
              "lockdown= kernel parameter");
}

Check check_perf_stream_paranoid(const DoctorOptions& options) {
  const fs::path file = options.proc_root / "sys" / "dev" / "i915" / "perf_stream_paranoid";
  const auto line = read_line(file);
  if (!line) {
    return make("perf-paranoid", Verdict::kSkip,
                fmt::format("{} is absent: i915 is not loaded", file.string()));
  }
  if (*line == "0") {
    return make("perf-paranoid", Verdict::kOk,
                "perf_stream_paranoid is 0: any user may open i915 perf streams");
  }
  return make("perf-paranoid", Verdict::kWarn,
              fmt::format("perf_stream_paranoid is {}: --access perf needs root or CAP_PERFMON "
                          "(sudo oaprof and oaprofd have it)",
                          *line),
              "to let every user open OA streams: sudo sysctl dev.i915.perf_stream_paranoid=0 "
              "(keep it with a line dev.i915.perf_stream_paranoid=0 in "
              "/etc/sysctl.d/60-oaprof.conf)");
}

// dev.xe.observation_paranoid (drivers/gpu/drm/xe/xe_observation.c @ torvalds/linux
// 895b4fae931a256f6c7c6c68f77a8e337980b5a1: 0 or 1, default 1; while 1, xe's observation streams
// follow perf_event_paranoid and CAP_PERFMON). Only where xe is loaded.
Check check_xe_observation(const DoctorOptions& options) {
  const fs::path file = options.proc_root / "sys" / "dev" / "xe" / "observation_paranoid";
  const auto line = read_line(file);
  if (!line) {
    return make("xe-observation", Verdict::kSkip,
                fmt::format("{} is absent: xe is not loaded", file.string()));
  }
  const std::string value =
      *line == "0" ? "0: any user may open xe's observation (OA) streams"
                   : *line +
                         ": xe's observation (OA) streams need CAP_PERFMON (or perf_event_paranoid "
                         "allowing it)";
  return make("xe-observation", Verdict::kInfo,
              fmt::format("dev.xe.observation_paranoid is {}; oaprof reads Lunar Lake and later "
                          "through these streams (--access perf), older parts under xe not yet "
                          "(docs/xe.md)",
                          value));
}

namespace {

power::GpuPlacement placement_of(const std::optional<oa::Platform>& platform) {
  if (!platform) return power::GpuPlacement::kUnknown;
  return platform->discrete ? power::GpuPlacement::kDiscrete : power::GpuPlacement::kIntegrated;
}

// The simulator's energy is a model chosen by the simulated part's placement; nothing is read.
Check simulated_energy(power::GpuPlacement placement) {
  const bool discrete = placement == power::GpuPlacement::kDiscrete;
  return make("energy", Verdict::kInfo,
              fmt::format("the simulated part is {}: --energy auto uses {}, a model, not a "
                          "measurement",
                          discrete ? "a discrete card" : "an integrated GPU",
                          discrete ? "sim-hwmon (a simulated card's hwmon)"
                                   : "sim (a simulated RAPL tree)"));
}

// A discrete card: its own sensors or nothing, never RAPL (power/energy_registry.h).
Check discrete_card_energy(const power::EnergyRoots& roots) {
  constexpr std::string_view kWhy =
      "RAPL is not used: its planes are the CPU package's and never include a discrete card";
  try {
    const auto source = power::make_energy_source("hwmon", roots);
    std::vector<std::string_view> domains;
    for (power::Domain d : source->domains()) domains.push_back(power::domain_name(d));
    const auto* hwmon = dynamic_cast<const power::HwmonSource*>(source.get());
    return make("energy", Verdict::kOk,
                fmt::format("{} is a discrete card: its own energy sensors are readable through "
                            "hwmon ({}: {}); {}",
                            roots.gpu_pci_address, fmt::join(domains, ", "),
                            hwmon ? hwmon->describe() : std::string(), kWhy));
  } catch (const std::exception& e) {
    return make("energy", Verdict::kWarn,
                fmt::format("{} is a discrete card and its own energy sensors cannot be read "
                            "({}); {}, so profiles of it carry no energy figures",
                            roots.gpu_pci_address, e.what(), kWhy),
                "use a kernel whose i915 or xe registers the card's hwmon energy1_input "
                "(docs/energy.md), or profile without energy (--energy none)");
  }
}

// An integrated GPU (or an unknown one): the automatic order, each failure said.
Check rapl_energy(const power::EnergyRoots& roots) {
  std::vector<std::string> reasons;
  for (const power::EnergyBackendInfo* backend : power::automatic_energy_backends(roots)) {
    try {
      const auto source = power::make_energy_source(backend->name, roots);
      std::vector<std::string_view> domains;
      for (power::Domain d : source->domains()) domains.push_back(power::domain_name(d));
      return make(
          "energy", Verdict::kOk,
          fmt::format(
              "{} readable through {} ({}){}",
              backend->name == "hwmon" ? "the GPU's own energy sensors are" : "RAPL is",
              backend->name, fmt::join(domains, ", "),
              reasons.empty() ? "" : fmt::format("; before it: {}", fmt::join(reasons, "; "))));
    } catch (const std::exception& e) {
      reasons.emplace_back(e.what());  // each names its backend: "--energy powercap: …"
    }
  }
  return make("energy", Verdict::kWarn,
              fmt::format("no RAPL backend can be read: {}", fmt::join(reasons, "; ")),
              "run as root (sudo oaprof) or through oaprofd, which read RAPL for you; for the msr "
              "backend: sudo modprobe msr. A virtual machine has no RAPL: profile without energy "
              "(--energy none)");
}

}  // namespace

Check check_energy(const DoctorOptions& options, const std::optional<oa::Platform>& platform) {
  const power::GpuPlacement placement = placement_of(platform);
  if (options.sim) return simulated_energy(placement);
  power::EnergyRoots roots;
  roots.sysfs = options.sysfs_root;
  roots.dev = options.dev_root;
  roots.proc = options.proc_root;  // the msr backend's cpuinfo
  roots.gpu_pci_address = options.pci;
  roots.gpu_placement = placement;
  return placement == power::GpuPlacement::kDiscrete ? discrete_card_energy(roots)
                                                     : rapl_energy(roots);
}

Check check_virtualisation(const PciFacts& pci, const DoctorOptions& options) {
  const fs::path dmi = options.sysfs_root / "class" / "dmi" / "id";
  const std::string vendor = read_line(dmi / "sys_vendor").value_or("");
  const std::string product = read_line(dmi / "product_name").value_or("");
  // DMI names of the common hypervisors; the cpuinfo flag catches the others.
  static constexpr std::array<std::string_view, 10> kVmVendors = {
      "QEMU",
      "innotek GmbH",
      "VMware, Inc.",
      "Xen",
      "Parallels Software International Inc.",
      "Amazon EC2",
      "Google",
      "OpenStack Foundation",
      "BHYVE",
      "Red Hat"};
  bool vm = std::find(kVmVendors.begin(), kVmVendors.end(), vendor) != kVmVendors.end() ||
            (vendor == "Microsoft Corporation" && product == "Virtual Machine") || product == "KVM";
  std::string what = vendor;
  if (!vm) {
    std::ifstream cpuinfo(options.proc_root / "cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
      if (line.rfind("flags", 0) == 0) {
        vm = (line + " ").find(" hypervisor ") != std::string::npos;
        break;
      }
    }
    if (vm) what = "the cpu flag 'hypervisor' is set";
  }
  if (!vm) return make("virtualisation", Verdict::kOk, "not a virtual machine");
  if (pci.intel_display()) {
    return make(
        "virtualisation", Verdict::kWarn,
        fmt::format("a virtual machine ({}) with an Intel display device passed through", what),
        "counters work with the GPU passed through (GVT-d); RAPL energy is usually "
        "absent or frozen in a guest: read it on the host, or use --energy none");
  }
  return make("virtualisation", Verdict::kWarn,
              fmt::format("a virtual machine ({}) without an Intel GPU passed through", what),
              "profile with --device sim (a simulator, not a measurement), or pass the iGPU "
              "through to the guest (GVT-d with vfio-pci)");
}

Check check_opencl_loader(const DoctorOptions& options) {
  const char* search = std::getenv("LD_LIBRARY_PATH");
  const attach::LoaderInfo info = oaprof::run::find_opencl_loader(
      options.opencl_library, search != nullptr ? search : "", options.sudo_user);
  if (!info.found) {
    return make("opencl-loader", Verdict::kFail, info.note,
                "sudo apt install ocl-icd-libopencl1, and an ICD: intel-opencl-icd for the GPU "
                "(pocl-opencl-icd runs kernels on the CPU, for --device sim)");
  }
  if (info.supports_layers) return make("opencl-loader", Verdict::kOk, info.note);
  return make("opencl-loader", Verdict::kInfo, info.note,
              "works as it is; ocl-icd 2.3 or later lets oaprof come in as an OpenCL layer");
}

Check check_level_zero(const DoctorOptions& options) {
  const char* env = std::getenv("LD_LIBRARY_PATH");
  const std::string search = env != nullptr ? env : "";
  const auto loader =
      oaprof::run::find_library_file(options.level_zero_loader, search, options.sudo_user);
  if (!loader) {
    return make("level-zero", Verdict::kInfo,
                fmt::format("no Level Zero loader ({}): Level Zero programs (SYCL, PyTorch XPU, "
                            "OpenMP offload) cannot run here; OpenCL ones are profiled as before",
                            options.level_zero_loader),
                "sudo apt install libze1 (and intel-level-zero-gpu for the GPU)");
  }
  const auto tracing =
      oaprof::run::find_library_file(options.level_zero_tracing, search, options.sudo_user);
  if (tracing) {
    return make("level-zero", Verdict::kOk,
                fmt::format("loader {}; tracing layer {}: Level Zero launches come in through "
                            "the tracing layer (--inject auto)",
                            *loader, *tracing));
  }
  return make("level-zero", Verdict::kInfo,
              fmt::format("loader {}; no tracing layer ({}): Level Zero launches come in by "
                          "LD_PRELOAD, which misses programs that dlopen the loader and look its "
                          "entry points up themselves",
                          *loader, options.level_zero_tracing),
              "install a loader that ships libze_tracing_layer (libze1 1.8 or later)");
}

namespace {

// The few OpenCL entry points doctor needs, looked up at run time so that oaprof itself does not
// depend on libOpenCL: a missing loader is a finding, not a start-up failure.
struct OpenClApi {
  decltype(&clGetPlatformIDs) platform_ids = nullptr;
  decltype(&clGetPlatformInfo) platform_info = nullptr;
  decltype(&clGetDeviceIDs) device_ids = nullptr;
  decltype(&clGetDeviceInfo) device_info = nullptr;
};

// clGetPlatformInfo and clGetDeviceInfo share their calling convention: ask the size, then fill.
template <typename Get, typename Handle, typename Param>
std::string info_string(Get get, Handle handle, Param what) {
  std::size_t size = 0;
  if (get(handle, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "?";
  std::string s(size, '\0');
  if (get(handle, what, size, s.data(), nullptr) != CL_SUCCESS) return "?";
  s.resize(std::strlen(s.c_str()));
  return s;
}

}  // namespace

Check check_opencl_platforms(const DoctorOptions& options) {
  if (!options.opencl_platforms) {
    return make("opencl-devices", Verdict::kSkip, options.opencl_skipped_because);
  }
  // Never closed: ICDs the loader pulled in may keep threads or atexit handlers of their own.
  void* lib = ::dlopen(options.opencl_library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    return make("opencl-devices", Verdict::kSkip,
                fmt::format("{} cannot be loaded: {}", options.opencl_library, ::dlerror()));
  }
  OpenClApi api;
  api.platform_ids = reinterpret_cast<decltype(api.platform_ids)>(::dlsym(lib, "clGetPlatformIDs"));
  api.platform_info =
      reinterpret_cast<decltype(api.platform_info)>(::dlsym(lib, "clGetPlatformInfo"));
  api.device_ids = reinterpret_cast<decltype(api.device_ids)>(::dlsym(lib, "clGetDeviceIDs"));
  api.device_info = reinterpret_cast<decltype(api.device_info)>(::dlsym(lib, "clGetDeviceInfo"));
  if (!api.platform_ids || !api.platform_info || !api.device_ids || !api.device_info) {
    return make("opencl-devices", Verdict::kFail,
                fmt::format("{} lacks the OpenCL 1.0 entry points", options.opencl_library),
                "reinstall the loader: sudo apt install --reinstall ocl-icd-libopencl1");
  }
  cl_uint count = 0;
  const cl_int err = api.platform_ids(0, nullptr, &count);
  if (err != CL_SUCCESS || count == 0) {
    return make("opencl-devices", Verdict::kFail,
                fmt::format("no OpenCL platform (clGetPlatformIDs: {}, {} platforms): the loader "
                            "finds no ICD in /etc/OpenCL/vendors or $OCL_ICD_VENDORS",
                            err, count),
                "sudo apt install intel-opencl-icd for the Intel GPU, or pocl-opencl-icd to run "
                "kernels on the CPU with --device sim");
  }
  std::vector<cl_platform_id> platforms(count);
  api.platform_ids(count, platforms.data(), nullptr);
  std::vector<std::string> found;
  bool intel_gpu = false;
  for (cl_platform_id p : platforms) {
    cl_uint ndev = 0;
    std::vector<std::string> names;
    if (api.device_ids(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &ndev) == CL_SUCCESS && ndev > 0) {
      std::vector<cl_device_id> devices(ndev);
      api.device_ids(p, CL_DEVICE_TYPE_ALL, ndev, devices.data(), nullptr);
      for (cl_device_id d : devices) {
        cl_device_type type = 0;
        cl_uint vendor = 0;
        api.device_info(d, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
        api.device_info(d, CL_DEVICE_VENDOR_ID, sizeof vendor, &vendor, nullptr);
        const bool gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
        intel_gpu = intel_gpu || (gpu && vendor == 0x8086);
        names.push_back(fmt::format("{} {}",
                                    gpu                           ? "gpu"
                                    : (type & CL_DEVICE_TYPE_CPU) ? "cpu"
                                                                  : "other",
                                    info_string(api.device_info, d, CL_DEVICE_NAME)));
      }
    }
    found.push_back(
        fmt::format("{} ({}): {}", info_string(api.platform_info, p, CL_PLATFORM_NAME),
                    info_string(api.platform_info, p, CL_PLATFORM_VERSION),
                    names.empty() ? "no devices" : fmt::format("{}", fmt::join(names, ", "))));
  }
  const std::string detail = fmt::format("{}", fmt::join(found, "; "));
  if (intel_gpu) return make("opencl-devices", Verdict::kOk, detail);
  return make("opencl-devices", Verdict::kWarn, "no Intel GPU among the OpenCL devices: " + detail,
              "sudo apt install intel-opencl-icd to run kernels on the Intel GPU; with --device "
              "sim, kernels on PoCL's CPU device are what the simulator expects");
}

std::string daemon_socket_path(const std::string& option) {
  return option.empty() ? session::daemon_socket_path() : option;
}

Check daemon_verdict(const std::string& socket_path, int connect_errno, unsigned euid) {
  if (connect_errno == 0) {
    return make("oaprofd", Verdict::kOk,
                fmt::format("oaprofd accepts connections at {}", socket_path));
  }
  // Root profiles with sudo oaprof and needs no daemon, so a missing one is only worth a warning.
  const Verdict missing = euid == 0 ? Verdict::kWarn : Verdict::kFail;
  const std::string root_note = euid == 0 ? " (root profiles without it: sudo oaprof)" : "";
  switch (connect_errno) {
    case ENOENT:
      return make("oaprofd", missing, fmt::format("no socket at {}{}", socket_path, root_note),
                  "not running: sudo systemctl enable --now oaprofd.socket (install it first: "
                  "docs/install.md)");
    case ECONNREFUSED:
      return make("oaprofd", missing,
                  fmt::format("nothing listens on {}{}", socket_path, root_note),
                  "sudo systemctl restart oaprofd.socket; `journalctl -u oaprofd` says why it "
                  "stopped");
    case EACCES:
    case EPERM:
      return make("oaprofd", Verdict::kFail,
                  fmt::format("{} refuses you: only root and group {} may connect", socket_path,
                              session::kDefaultDaemonGroup),
                  fmt::format("add yourself to group {0}: sudo usermod -aG {0} $USER, then log in "
                              "again",
                              session::kDefaultDaemonGroup));
    default:
      return make("oaprofd", missing,
                  fmt::format("cannot connect to {}: {}{}", socket_path,
                              std::strerror(connect_errno), root_note),
                  "sudo systemctl status oaprofd.socket oaprofd.service");
  }
}

Check check_daemon(const DoctorOptions& options, unsigned euid) {
  const std::string path = daemon_socket_path(options.daemon_socket);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return make(
        "oaprofd", Verdict::kFail,
        fmt::format("socket path {} is longer than {} bytes", path, sizeof addr.sun_path - 1),
        "use a shorter --daemon-socket or OAPROF_DAEMON_SOCKET");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return daemon_verdict(path, errno, euid);
  int err = 0;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) err = errno;
  ::close(fd);
  return daemon_verdict(path, err, euid);
}

Check check_group(unsigned euid) {
  if (euid == 0) return make("group", Verdict::kOk, "root needs no group");
  const group* gr = ::getgrnam(session::kDefaultDaemonGroup);
  if (gr == nullptr) {
    return make(
        "group", Verdict::kFail,
        fmt::format("group {} does not exist", session::kDefaultDaemonGroup),
        fmt::format("sudo systemd-sysusers (it reads the installed sysusers.d/oaprof.conf), "
                    "or sudo groupadd --system {}",
                    session::kDefaultDaemonGroup));
  }
  const gid_t gid = gr->gr_gid;
  std::vector<gid_t> groups(static_cast<std::size_t>(std::max(::getgroups(0, nullptr), 0)));
  const int n = ::getgroups(static_cast<int>(groups.size()), groups.data());
  groups.resize(static_cast<std::size_t>(std::max(n, 0)));
  if (::getegid() == gid || std::find(groups.begin(), groups.end(), gid) != groups.end()) {
    return make("group", Verdict::kOk,
                fmt::format("you are in group {}", session::kDefaultDaemonGroup));
  }
  const passwd* pw = ::getpwuid(euid);
  const std::string user = pw != nullptr ? pw->pw_name : std::to_string(euid);
  bool listed = false;
  for (char** m = gr->gr_mem; m != nullptr && *m != nullptr; ++m) listed = listed || user == *m;
  if (listed) {
    return make("group", Verdict::kWarn,
                fmt::format("{} was added to group {} after this session began", user,
                            session::kDefaultDaemonGroup),
                fmt::format("log in again (or start a shell with `newgrp {}`)",
                            session::kDefaultDaemonGroup));
  }
  return make("group", Verdict::kFail,
              fmt::format("{} is not in group {}", user, session::kDefaultDaemonGroup),
              fmt::format("add yourself to group {0}: sudo usermod -aG {0} $USER, then log in "
                          "again",
                          session::kDefaultDaemonGroup));
}

std::optional<Check> context_saved_note(const PciFacts& pci) {
  if (!pci.platform) return std::nullopt;
  const oa::Generation gen = pci.platform->gen;
  if (gen != oa::Generation::kGen8 && gen != oa::Generation::kGen9 &&
      gen != oa::Generation::kGen11) {
    return std::nullopt;
  }
  return make("context", Verdict::kInfo, std::string(gpu::kContextSavedNote));
}

namespace {

// GuC submission per i915's enable_guc module parameter (bit 0: submission); nullopt when absent.
std::optional<bool> guc_submission(const DoctorOptions& options) {
  const auto line = read_line(options.sysfs_root / "module" / "i915" / "parameters" / "enable_guc");
  if (!line) return std::nullopt;
  try {
    const int value = std::stoi(*line);  // -1: the platform's default, unknown here
    if (value < 0) return std::nullopt;
    return (value & 1) != 0;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Why the BAR cannot be mapped here (empty when it can).
std::string bar_obstacle(const DoctorOptions& options, unsigned euid) {
  const auto mode = mmio::kernel_lockdown_mode(options.sysfs_root);
  if (mmio::lockdown_forbids_bar(mode)) {
    return fmt::format("kernel lockdown '{}' refuses to map the GPU's BAR", *mode);
  }
  if (euid != 0) return "mapping the BAR needs root (sudo oaprof, or oaprofd for its group)";
  return "";
}

}  // namespace

bool has_cap_perfmon(const fs::path& proc_root) {
  std::ifstream in(proc_root / "self" / "status");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("CapEff:")) continue;
    try {
      const unsigned long long caps = std::stoull(line.substr(7), nullptr, 16);
      return ((caps >> 38) & 1) != 0 || ((caps >> 21) & 1) != 0;
    } catch (const std::exception&) {
      return false;
    }
  }
  return false;
}

// Xe2 and later: xe owns the OA unit; only its observation stream (--access perf) reads it.
std::vector<Check> check_xe_readouts(const oa::Platform& platform, const DoctorOptions& options,
                                     unsigned euid, bool cap_perfmon) {
  std::vector<Check> out;
  for (const char* access : {"access-mmio", "access-rpc"}) {
    out.push_back(make(access, Verdict::kWarn,
                       fmt::format("not on {}: xe drives it and owns its OA unit, which oaprof "
                                   "never programs behind xe's back",
                                   platform.codename),
                       "use --access perf"));
  }
  const std::string what =
      "xe's observation stream on the render/compute OAG unit; snapshots are its periodic "
      "reports, so rows are flagged xe_periodic";
  const auto paranoid =
      read_line(options.proc_root / "sys" / "dev" / "xe" / "observation_paranoid");
  if (!paranoid) {
    out.push_back(make("access-perf", Verdict::kWarn,
                       "not here: /proc/sys/dev/xe/observation_paranoid is absent (xe is not "
                       "loaded, or has no OA support: it needs GuC submission)",
                       "load xe (modprobe xe) on a kernel with CONFIG_DRM_XE"));
  } else if (*paranoid != "0" && euid != 0 && !cap_perfmon) {
    out.push_back(make("access-perf", Verdict::kWarn,
                       fmt::format("not for this user: observation_paranoid is {} and it has "
                                   "neither root nor CAP_PERFMON; {}",
                                   *paranoid, what),
                       "sudo oaprof, or sudo sysctl dev.xe.observation_paranoid=0"));
  } else {
    out.push_back(make("access-perf", Verdict::kOk, fmt::format("possible: {}", what)));
  }
  return out;
}

// A register read-out the part cannot have whatever the machine: Haswell's OA unit is not
// programmed over MMIO by oaprof.
std::optional<Check> readout_not_on_part(const oa::Platform& platform, std::string_view access) {
  const std::string name = fmt::format("access-{}", access);
  if (platform.gen == oa::Generation::kGen7_5) {
    return make(name, Verdict::kWarn,
                fmt::format("{} is Haswell: oaprof programs the OA unit over MMIO on Gen8 to "
                            "Xe-LPG only",
                            platform.codename),
                "use --access perf");
  }
  return std::nullopt;
}

std::vector<Check> check_readouts(const std::optional<oa::Platform>& platform,
                                  const DoctorOptions& options, unsigned euid, bool cap_perfmon) {
  if (!platform) {
    return {make("access", Verdict::kSkip, "no Intel GPU oaprof knows: no read-out to judge")};
  }
  if (platform->driver == oa::KernelDriver::kXe) {
    return check_xe_readouts(*platform, options, euid, cap_perfmon);
  }
  const oa::Generation gen = platform->gen;
  const bool gen12 = oa::is_gen12_family(gen);
  std::vector<Check> out;
  const std::string bar = bar_obstacle(options, euid);
  const std::string unit =
      gen12 ? "the global OAG unit (OAG_OACONTROL 0xDAF4), which no context switch reloads"
            : "the OA unit (OACONTROL 0x2B00)";
  for (const char* access : {"mmio", "rpc"}) {
    const std::string name = fmt::format("access-{}", access);
    const bool rpc = std::string_view(access) == "rpc";
    if (auto refused = readout_not_on_part(*platform, access)) {
      out.push_back(std::move(*refused));
      continue;
    }
    std::string what = fmt::format("programs and reads {}", unit);
    if (rpc && gen12) {
      what +=
          "; snapshots are MI_STORE_REGISTER_MEM of its counter registers in a batch "
          "(MI_REPORT_PERF_COUNT reports the per-context OAR unit, which only i915 enables), "
          "so A, B and C counters are all reported";
    }
    if (!bar.empty()) {
      out.push_back(make(name, Verdict::kWarn, fmt::format("not here: {}; it {}", bar, what),
                         "profile with --access perf, or as root without lockdown"));
    } else {
      out.push_back(make(name, Verdict::kOk, fmt::format("possible: it {}", what)));
    }
  }
  const auto paranoid =
      read_line(options.proc_root / "sys" / "dev" / "i915" / "perf_stream_paranoid");
  std::string perf_detail =
      gen == oa::Generation::kXeLpg
          ? "i915 streams the render engine's OAG unit (OA_ENGINE_CLASS/INSTANCE render 0: "
            "perf revision 6)"
          : "i915 streams the OA unit";
  if (gen12) {
    if (const auto guc = guc_submission(options); guc && *guc) {
      perf_detail +=
          "; GuC submission is on (enable_guc): OAG is global, so mmio and rpc see "
          "every context's work, and the per-context OAR state is i915's either way";
    }
  }
  if (!paranoid) {
    out.push_back(make("access-perf", Verdict::kWarn,
                       "not here: /proc/sys/dev/i915/perf_stream_paranoid is absent (i915 is not "
                       "loaded or has no perf support)",
                       "load i915 (modprobe i915) on a kernel with CONFIG_DRM_I915"));
  } else if (*paranoid != "0" && euid != 0 && !cap_perfmon) {
    out.push_back(make("access-perf", Verdict::kWarn,
                       fmt::format("not for this user: perf_stream_paranoid is {} and it has "
                                   "neither root nor CAP_PERFMON for a system-wide stream; {}",
                                   *paranoid, perf_detail),
                       "sudo oaprof, oaprofd, or sudo sysctl dev.i915.perf_stream_paranoid=0"));
  } else {
    out.push_back(make("access-perf", Verdict::kOk, fmt::format("possible: {}", perf_detail)));
  }
  return out;
}

std::vector<Check> run_checks(const DoctorOptions& options) {
  const PciFacts pci = read_pci_facts(options.sysfs_root, options.pci);
  const unsigned euid = ::geteuid();
  std::vector<Check> checks;
  checks.push_back(check_device(pci));
  checks.push_back(check_driver(pci));
  const std::optional<ProbedFacts> probed = probe_facts(pci, options);
  checks.push_back(check_topology(probed));
  checks.push_back(check_timestamp(probed));
  if (probed && probed->engine_clock) checks.push_back(*probed->engine_clock);
  checks.push_back(check_debugfs(pci, options));
  checks.push_back(check_lockdown(options));
  checks.push_back(check_perf_stream_paranoid(options));
  if (pci.driver == "xe") checks.push_back(check_xe_observation(options));
  const std::optional<oa::Platform> platform =
      options.sim ? std::optional<oa::Platform>(options.sim->platform)
                  : (pci.intel_display() ? pci.platform : std::nullopt);
  checks.push_back(check_energy(options, platform));
  checks.push_back(check_virtualisation(pci, options));
  checks.push_back(check_opencl_loader(options));
  checks.push_back(check_opencl_platforms(options));
  checks.push_back(check_level_zero(options));
  checks.push_back(check_daemon(options, euid));
  checks.push_back(check_group(euid));
  checks.push_back(check_exporter(options));
  if (auto note = context_saved_note(pci)) checks.push_back(std::move(*note));
  for (Check& c : check_readouts(platform, options, euid, has_cap_perfmon(options.proc_root))) {
    checks.push_back(std::move(c));
  }
  return checks;
}

std::optional<std::string> metrics_listen_in(const std::string& dropin_text) {
  std::istringstream lines(dropin_text);
  std::optional<std::string> found;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("ExecStart=")) continue;
    std::istringstream words(line.substr(10));
    std::vector<std::string> argv{std::istream_iterator<std::string>(words), {}};
    found.reset();  // a later ExecStart= replaces an earlier one
    for (std::size_t i = 0; i < argv.size(); ++i) {
      if (argv[i].starts_with("--metrics-listen=")) {
        found = argv[i].substr(17);
      } else if (argv[i] == "--metrics-listen") {
        found = i + 1 < argv.size() && !argv[i + 1].starts_with("--") ? argv[i + 1] : "";
      }
    }
  }
  return found;
}

Check check_exporter(const DoctorOptions& options) {
  std::optional<std::string> listen;
  std::string dropin;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(options.systemd_dropins, ec)) {
    if (e.path().extension() != ".conf") continue;
    std::ifstream in(e.path());
    std::stringstream text;
    text << in.rdbuf();
    if (auto l = metrics_listen_in(text.str())) {
      listen = l;
      dropin = e.path().string();
    }
  }
  if (!listen) {
    return make(
        "exporter", Verdict::kInfo,
        fmt::format("oaprofd exports no Prometheus metrics (no drop-in in {} passes "
                    "--metrics-listen)",
                    options.systemd_dropins.string()),
        "to watch the GPU from Prometheus, install the exporter drop-in (docs/exporter.md)");
  }
  daemon::ListenAddress address;
  try {
    address = daemon::parse_listen_address(
        listen->empty() ? std::string(daemon::kDefaultMetricsListen) : *listen);
  } catch (const std::invalid_argument& e) {
    return make("exporter", Verdict::kFail, fmt::format("{}: {}", dropin, e.what()),
                "fix the address in the drop-in, then sudo systemctl restart oaprofd");
  }
  const std::string where = fmt::format("http://{}/metrics", address.civetweb());
  if (!address.loopback) {
    return make("exporter", Verdict::kWarn,
                fmt::format("{} serves {} beyond this machine: anyone who reaches it learns the "
                            "GPU's load and power (docs/exporter.md, Security)",
                            dropin, where),
                "listen on 127.0.0.1 and let the Prometheus on this host, or a TLS proxy, scrape "
                "it");
  }
  if (!port_answers(address)) {
    return make("exporter", Verdict::kWarn,
                fmt::format("{} configures {}, but nothing answers there", dropin, where),
                "sudo systemctl restart oaprofd; to run it from boot rather than on the first "
                "client: sudo systemctl add-wants multi-user.target oaprofd.service");
  }
  return make("exporter", Verdict::kOk, fmt::format("oaprofd serves {} ({})", where, dropin), "");
}

bool any_failed(const std::vector<Check>& checks) {
  return std::any_of(checks.begin(), checks.end(),
                     [](const Check& c) { return c.verdict == Verdict::kFail; });
}

}  // namespace oaprof::run::doctor
