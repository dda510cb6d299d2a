#include "run/selftest.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "mmio/pci_bar.h"
#include "mmio/pci_sysfs.h"
#include "power/sim_power.h"
#include "report/text_escape.h"
#include "run/selftest_act_freq.h"
#include "run/selftest_checks.h"
#include "run/selftest_driver.h"
#include "run/selftest_energy_model.h"
#include "run/selftest_known_work.h"
#include "run/selftest_load.h"
#include "run/selftest_result.h"
#include "run/selftest_work.h"
#include "session/metric_source.h"
#include "session/privilege_drop.h"
#include "session/trusted_metrics.h"
#include "session/unit.h"

namespace oaprof::run::selftest {
namespace {

constexpr SimFaultInfo kSimFaults[] = {
    {SimFault::kOaTimestampShift, "oa-timestamp-shift", "clocks",
     "reports the OA unit writes carry their timestamp one bit further left"},
    {SimFault::kFlexMisrouted, "flex-misrouted", "flex-routing",
     "EU_PERF_CNTLi feeds A(7 + (i + 1) % 7)"},
    {SimFault::kForcewakeNeverAcks, "forcewake-never-acks", "forcewake",
     "the first OA power domain never acknowledges forcewake"},
    {SimFault::kRegisterNotRestored, "register-not-restored", "restore",
     "OA_DEBUG keeps oaprof's value when oaprof restores it"},
    {SimFault::kRaplStuck, "rapl-stuck", "energy", "the PP1 (uncore) RAPL plane never moves"},
    {SimFault::kFusedEus, "fused-eus", "topology",
     "the part has one subslice's EUs fewer than the platform table"},
    {SimFault::kGpuTicksClock, "gpu-ticks-clock", "gpu-ticks",
     "GPU_TICKS count twice the clock the frequency register reports"},
    {SimFault::kConfigRejected, "config-rejected", "driver-accepts-configs",
     "the driver refuses one metric set's register list (the first of the platform's file "
     "other than the selftest's own set) with EINVAL"},
    {SimFault::kNoaSlowSettle, "noa-slow-settle", "noa-settle",
     "the NOA mux settles 25 ms after its last write, 50 times the plan's delay: B and C count "
     "garbage until then"},
    {SimFault::kCtxImageStale, "ctx-image-stale", "context-switch",
     "i915's context images lack oaprof's configuration: a context switch loads another "
     "context's OACTXCONTROL and EU_PERF_CNTL0-6 (Gen8-11)"},
    {SimFault::kPeriodicCountsDoubled, "periodic-counts-doubled", "rpc-vs-periodic",
     "the OA unit's periodic reports carry every A counter but A0 at twice its count"},
    {SimFault::kActFreqMismatch, "act-freq-mismatch", "gpu-ticks",
     "the driver's sysfs act_freq says half the frequency the GPU runs at"},
    {SimFault::kHwmonStuck, "hwmon-stuck", "energy",
     "a discrete card's GPU package energy (hwmon) never moves"},
    {SimFault::kFpuCountHalved, "fpu-count-halved", "known-work-flops",
     "the FPU counters (Gen9's A9-A11) count half of a known kernel's FPU cycles"},
    {SimFault::kEuActiveUndercount, "eu-active-undercount", "known-work-eu-active",
     "the EU-active counters (Gen9's A7, Gen12's A7-A10) count a quarter of a known kernel's "
     "EU-active cycles"},
    {SimFault::kGtiBytesLost, "gti-bytes-lost", "known-work-bytes",
     "the GTI counters (the C counters ComputeBasic's GtiRead/WriteThroughput read) count half "
     "of a known kernel's bytes"},
    {SimFault::kRenderCounterLeak, "render-counter-leak", "idle-and-render-quiet",
     "PsThreads (A6) and RasterizedPixels (A21) count 1% of the busy clock during compute"},
    {SimFault::kEnergyModelDrift, "energy-model-drift", "energy-model",
     "the GPU draws twice the energy per busy cycle of its per-event table (mmio/sim_energy.h): "
     "a model fitted before no longer holds"},
};

// One check of the fixed list: what it assumes and how far off it may be, and its measurement.
struct CheckSpec {
  std::string_view name;
  std::string_view group;
  std::string_view assumes;
  std::string_view tolerance;
  Outcome (*run)(Context&);
};

constexpr CheckSpec kChecks[] = {
    {"topology", "identity",
     "The platform table's slices, subslices and EUs for this PCI id are what the device reports.",
     "exact", check_topology},
    {"timestamp-frequency", "identity",
     "The driver, the clock registers and (for fixed-rate parts) the table give one timestamp "
     "frequency.",
     "0.1%", check_timestamp_frequency},
    {"clocks", "clocks",
     "Report timestamps at the device's timestamp frequency advance with CLOCK_MONOTONIC.",
     "0.5% and 2 ticks outside the window's bounds", check_clocks},
    {"gpu-ticks", "clocks", "GPU_TICKS count the clock the frequency register reports.",
     "2% outside the window's bounds", check_gpu_ticks},
    {"readouts-agree", "read-outs agree",
     "The same work counted through mmio, rpc and perf gives the same counts per GPU-busy clock.",
     "2% per counter", check_readouts_agree},
    {"rpc-vs-periodic", "read-outs agree",
     "The reports the OA unit writes on its own (periodic) and the snapshots a window is "
     "bracketed by (MI_REPORT_PERF_COUNT; the registers on Gen12+) count the same work alike.",
     "2% per counter per GPU-busy clock", check_rpc_vs_periodic},
    {"known-work-flops", "counters",
     "FLOPs derived from the FPU counters as the metric set's equations read them (Fpu0Active, "
     "Fpu1Active) are the FLOPs kernel_runner's mad_vect4 and mad_vect8 do.",
     "10% per kernel and size", check_known_work_flops},
    {"known-work-eu-active", "counters",
     "The metric set's EU-active share (EuActive, XveActive on Xe-LPG: percent of EU-cycles, as "
     "its equation reads it) counts, in mad_vect4's and mad_vect8's launches, at least the "
     "EU-cycles their known FLOPs need at an EU's peak (FLOPs / 16) and at least the busier FPU's "
     "active EU-cycles (Fpu0Active, Fpu1Active: an EU is active whenever one of its FPUs is), "
     "and at most every EU-cycle (100%).",
     "10% per kernel and size, below either floor or above 100%", check_known_work_eu_active},
    {"known-work-bytes", "counters",
     "GTI bytes from the metric set's GtiReadThroughput and GtiWriteThroughput are the bytes "
     "kernel_runner's load_store moves at sizes beyond the last-level cache.",
     "10% per size", check_known_work_bytes},
    {"idle-and-render-quiet", "counters",
     "An idle window keeps the busy and EU counters still, and render-pipeline counters stay at "
     "0 during compute.",
     "idle shares below 0.1%; render counters exactly 0", check_idle_and_render_quiet},
    {"noa-counting", "programming",
     "Once oaprof programmed the OA unit (SQCNT1 on Gen12+), the EU counters count work and stay "
     "still without it.",
     "idle below 0.1% of busy", check_noa_counting},
    {"flex-routing", "programming",
     "EU_PERF_CNTLi feeds A(7+i), as the metric sets' equations read it.",
     "only that counter moves by more than 2%", check_flex_routing},
    {"driver-accepts-configs", "programming",
     "The kernel driver accepts every IGT metric set's register list for this part (i915 "
     "PERF_ADD_CONFIG, xe's observation add-config), and removes each again.",
     "every set accepted and removed", check_driver_accepts_configs},
    {"noa-settle", "programming",
     "The NOA mux has settled once the plan's 500 us delay is over: B and C counters count at "
     "their later rates from the first window on.",
     "5% and 2 events per ms between the first and the last idle sub-window", check_noa_settle},
    {"context-switch", "programming",
     "The OA configuration survives a context switch: i915 puts it into every context image for "
     "its stream (Gen8-11), and mmio and rpc notice the loss (config_lost).",
     "flex-fed counters per GPU-busy clock within 2% across a switch", check_context_switch},
    {"restore", "restore",
     "After a profile every register oaprof wrote reads back its value from before.", "exact",
     check_restore},
    {"forcewake", "restore",
     "Forcewake through the registers is acknowledged and let go on release.",
     "acknowledged within 50 ms; released at once", check_forcewake},
    {"energy", "energy",
     "Every plane of the device's energy backend moves over a window, the whole covers its parts "
     "(RAPL: PKG >= PP0 + PP1; a card's hwmon: CARD >= GPU_PKG), and no window holds more than "
     "the power the sampler's wrap handling is sized for.",
     "1% and 1 mJ; 1000 W", check_energy},
    {"energy-model", "energy",
     "The energy model given with --energy-model predicts, from a window's counters, the energy "
     "the planes measure over windows of known work and an idle one.",
     "the model's error and the measurement's (energy_model_disagrees)", check_energy_model},
};

void apply_fault(SimFault fault, mmio::SimConfig& sim, power::SimPowerModel& power) {
  switch (fault) {
    case SimFault::kOaTimestampShift:
      sim.faults.oa_timestamp_extra_shift = 1;
      return;
    case SimFault::kFlexMisrouted:
      sim.faults.flex_misrouted = true;
      return;
    case SimFault::kForcewakeNeverAcks:
      sim.faults.forcewake_never_acks = true;
      return;
    case SimFault::kRegisterNotRestored:
      sim.faults.oa_debug_not_restored = true;
      return;
    case SimFault::kRaplStuck:
      power.stuck_plane = power::Domain::kUncore;
      return;
    case SimFault::kFusedEus:
      // One whole subslice fewer: xe fuses whole Xe-cores, i915's simulated query drops the last.
      sim.eus = sim.platform.eus - sim.platform.eus / std::max(sim.platform.subslices, 1);
      return;
    case SimFault::kGpuTicksClock:
      sim.faults.gpu_ticks_per_clock = 2.0;
      return;
    case SimFault::kConfigRejected:
    case SimFault::kNoaSlowSettle:
    case SimFault::kCtxImageStale:
    case SimFault::kPeriodicCountsDoubled:
      return;  // apply_driver_fault (selftest_driver.cc)
    case SimFault::kActFreqMismatch:
      return;  // the fake sysfs tree's (sim_card_tree), not the registers'
    case SimFault::kHwmonStuck:
      return;  // the simulated card's hwmon (open_energy)
    case SimFault::kFpuCountHalved:
      sim.faults.fpu_count_halved = true;
      return;
    case SimFault::kEuActiveUndercount:
      sim.faults.eu_active_undercount = true;
      return;
    case SimFault::kGtiBytesLost:
      sim.faults.gti_bytes_lost = true;
      return;
    case SimFault::kRenderCounterLeak:
      sim.faults.render_counter_leak = true;
      return;
    case SimFault::kEnergyModelDrift:
      sim.energy_model = drifted_sim_energy_model(sim.platform.gen);
      return;
  }
}

// <debugfs>/dri/<minor> of the device: its DRM card's number (cardN) is the minor.
std::optional<std::filesystem::path> dri_debugfs_dir(const gpu::Device& device,
                                                     const std::filesystem::path& debugfs,
                                                     std::string& why) {
  try {
    const std::string card = std::filesystem::path(gpu::resolve_card_sysfs(device)).filename();
    if (card.rfind("card", 0) == 0 && card.size() > 4) return debugfs / "dri" / card.substr(4);
    why = "the device's DRM directory is not named cardN: " + card;
  } catch (const std::exception& e) {
    why = std::string("no DRM card for the device: ") + e.what();
  }
  return std::nullopt;
}

void describe_firmware(const gpu::Device& device, const SelftestOptions& options,
                       SelftestReport& report) {
  std::optional<SimDebugfs> sim;
  std::optional<std::filesystem::path> dri;
  std::string why;
  if (device.simulated()) {
    sim.emplace(device.platform.driver);
    dri = sim->dri_dir();
  } else {
    dri = dri_debugfs_dir(device, options.debugfs_root, why);
  }
  if (dri) {
    report.guc = read_firmware(*dri, device.platform.driver, "guc_info");
    report.huc = read_firmware(*dri, device.platform.driver, "huc_info");
  } else {
    report.guc.reason = report.huc.reason = why;
  }
  report.firmware = fmt::format("GuC {}, HuC {}", report.guc.version, report.huc.version);
}

void describe_system(const gpu::Device& device, const SelftestOptions& options,
                     SelftestReport& report) {
  report.kernel = kernel_release();
  report.driver = driver_description(device.simulated(), device.platform, device.sysfs_root,
                                     device.pci_address);
  describe_firmware(device, options, report);
}

nlohmann::json firmware_json(const FirmwareVersion& f) {
  return {{"version", f.version}, {"path", f.path}, {"status", f.status}, {"reason", f.reason}};
}

}  // namespace

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kFail:
      return "fail";
    case Verdict::kSkip:
      return "skip";
  }
  return "?";
}

std::span<const SimFaultInfo> sim_faults() { return kSimFaults; }

std::vector<std::string_view> check_names() {
  std::vector<std::string_view> names;
  for (const CheckSpec& c : kChecks) names.push_back(c.name);
  return names;
}

SimFault parse_sim_fault(std::string_view name) {
  std::vector<std::string_view> names;
  for (const SimFaultInfo& f : kSimFaults) {
    if (f.name == name) return f.fault;
    names.push_back(f.name);
  }
  throw std::invalid_argument(
      fmt::format("--sim-fault {}: the simulator's faults are {}", name, fmt::join(names, ", ")));
}

const SimFaultInfo& sim_fault_info(SimFault fault) {
  for (const SimFaultInfo& f : kSimFaults) {
    if (f.fault == fault) return f;
  }
  throw std::logic_error("selftest: a fault missing from kSimFaults");
}

namespace {

// The read-outs to measure through: those asked for (all the device's when none), less those
// this device or set cannot have, which `c.unusable` lists with the reason.
void choose_accesses(Context& c, const std::string& no_set) {
  std::vector<std::string> asked = c.options.accesses;
  if (asked.empty()) {
    for (const auto& entry : gpu::counter_sources()) {
      if (entry.name != "sim") asked.emplace_back(entry.name);
    }
  }
  for (const std::string& a : asked) {
    const bool xe = c.device.platform.driver == oa::KernelDriver::kXe;
    if (xe && gpu::access_maps_registers(a)) {
      c.unusable[a] = "xe owns the OA unit";
    } else if (a == "perf" && c.config.guid.empty()) {
      c.unusable[a] = "needs a metric set with a guid: " + no_set;
    } else if (gpu::access_maps_registers(a) && !c.registers_mapped) {
      c.unusable[a] = "the registers are not mapped";
    } else {
      c.accesses.push_back(a);
    }
  }
}

// The set every read-out is programmed with: options.metric_set from the platform's metric
// file where one is found, else the bare counters (and `why` says what was missing).
void choose_config(Context& c, std::string& why) {
  // Under sudo the metric file is the user's to name and read: opened as them.
  const auto user = session::credentials_from_sudo(session::process_environment(), ::geteuid());
  try {
    const oa::MetricSet set = session::load_metric_set(c.device.platform, c.options.metric_set,
                                                       c.options.metrics_xml, user);
    c.config = session::oa_config_for(set, c.device.platform, c.device.facts);
  } catch (const std::exception& e) {
    why = e.what();
  }
}

void open_energy(Context& c, const power::SimPowerModel& model) {
  if (c.device.simulated() && c.device.platform.discrete) {
    // A card's own hwmon, as a profile reads it: the energy check opens it (selftest_energy.cc).
    c.sim_card.emplace();
    c.sim_card->driver = std::string(oa::kernel_driver_name(c.device.platform.driver));
    const auto& faults = c.options.faults;
    if (std::find(faults.begin(), faults.end(), SimFault::kHwmonStuck) != faults.end()) {
      c.sim_card->stuck_domain = power::Domain::kGpuPackage;
    }
    return;
  }
  if (c.device.simulated()) {
    auto sim = std::make_unique<power::SimEnergySource>(std::filesystem::path(), model);
    c.sim_power = sim.get();
    c.energy = std::move(sim);
    return;
  }
  // Aimed at this device: a card's own hwmon sensors, an integrated GPU's RAPL.
  power::EnergyRoots roots = c.options.energy_roots;
  session::aim_energy_roots(roots, c.device);
  power::EnergyChoice choice = power::choose_energy_source(c.options.energy, roots);
  c.energy = std::move(choice.source);
  c.energy_missing = choice.reason;
}

// The simulator's sysfs card directory, with act_freq at the frequency its register reports
// (half that with act-freq-mismatch); null where the register gives none.
std::unique_ptr<SimCardTree> sim_card_tree(const SelftestOptions& options, gpu::Device& device) {
  const std::optional<double> mhz = gpu::read_gpu_freq_mhz(device);
  if (!mhz) return nullptr;
  const bool wrong = std::find(options.faults.begin(), options.faults.end(),
                               SimFault::kActFreqMismatch) != options.faults.end();
  return std::make_unique<SimCardTree>(device.platform.driver, wrong ? *mhz / 2 : *mhz);
}

// Where the driver reports act_freq: the card's sysfs directory, or the simulator's fake tree.
void choose_card_sysfs(Context& c, std::unique_ptr<SimCardTree>& sim_card) {
  if (c.device.simulated()) {
    sim_card = sim_card_tree(c.options, c.device);
    if (sim_card) c.card_sysfs = sim_card->card();
    return;
  }
  try {
    c.card_sysfs = gpu::resolve_card_sysfs(c.device);
  } catch (const std::exception&) {
    // No DRM card: gpu-ticks says act_freq was not compared, with the path it looked under.
  }
}

CheckResult run_check(const CheckSpec& spec, Context& c) {
  if (c.options.progress) c.options.progress(spec.name);
  CheckResult r{.name = std::string(spec.name),
                .group = std::string(spec.group),
                .assumes = std::string(spec.assumes),
                .tolerance = std::string(spec.tolerance)};
  if (const auto skipped = c.options.skip_checks.find(spec.name);
      skipped != c.options.skip_checks.end()) {
    r.reason = skipped->second;
    return r;  // a skip
  }
  Outcome o;
  try {
    o = spec.run(c);
  } catch (const std::exception& e) {
    o = fail("the measurement could not be made", e.what());
  }
  r.verdict = o.verdict;
  r.measurement = std::move(o.measurement);
  r.reason = std::move(o.reason);
  r.figures = std::move(o.figures);
  return r;
}

gpu::DeviceOptions device_options(const SelftestOptions& options, power::SimPowerModel& power,
                                  RecordingMmio*& recorder) {
  gpu::DeviceOptions d = options.device;
  d.wrap_mmio = [&recorder](std::unique_ptr<mmio::Mmio> inner) -> std::unique_ptr<mmio::Mmio> {
    auto wrapped = std::make_unique<RecordingMmio>(std::move(inner));
    recorder = wrapped.get();
    return wrapped;
  };
  if (!d.spec.simulated()) {
    if (!options.faults.empty()) {
      throw std::invalid_argument("--sim-fault is for --device sim: a real GPU has its own faults");
    }
    // Under xe oaprof maps no BAR (gpu::open_device refuses to): perf alone is measured there.
    const bool xe = mmio::bound_driver(d.sysfs_root, d.spec.address()) == "xe";
    d.map_registers =
        !xe && (options.accesses.empty() ||
                std::any_of(options.accesses.begin(), options.accesses.end(),
                            [](const std::string& a) { return gpu::access_maps_registers(a); }));
    return d;
  }
  // The forcewake check takes it itself; the flex-routing check needs configured flex events.
  d.forcewake.mode = mmio::ForcewakeMode::kNone;
  d.sim.flex_events = true;
  for (const SimFault f : options.faults) {
    apply_fault(f, d.sim, power);
    apply_driver_fault(f, options, d.sim);
  }
  return d;
}

// The device the checks run on, opened with everything they are handed (its Context); closed
// (restored) as it goes.
class CheckedDevice {
 public:
  explicit CheckedDevice(const SelftestOptions& options)
      : device_opts_(device_options(options, power_model_, recorder_)),
        device_(options.open_device ? options.open_device(device_opts_)
                                    : gpu::open_device(device_opts_)),
        c_{.options = options,
           .device = device_,
           .table = oa::require_platform_for_pci_id(device_.pci_id)} {
    c_.recorder = recorder_;
    c_.format = oa::default_format(device_.platform.gen);
    c_.registers_mapped =
        device_opts_.map_registers && device_.platform.driver == oa::KernelDriver::kI915;
    c_.windows = options.windows > 0 ? options.windows : options.quick ? 3 : 8;
    c_.window_ns = options.window_ns > 0 ? options.window_ns
                   : options.quick       ? 20'000'000
                                         : 100'000'000;
    std::string no_set;
    choose_config(c_, no_set);
    choose_accesses(c_, no_set);
    open_energy(c_, power_model_);
    choose_card_sysfs(c_, sim_card_);
  }
  CheckedDevice(const CheckedDevice&) = delete;
  CheckedDevice& operator=(const CheckedDevice&) = delete;

  Context& context() { return c_; }
  // The device as a profile run opens it for itself: the same options (the simulator's
  // SimConfig, faults included), without the selftest's recording of register writes.
  gpu::DeviceOptions profile_device() const {
    gpu::DeviceOptions d = device_opts_;
    d.wrap_mmio = nullptr;
    return d;
  }

 private:
  power::SimPowerModel power_model_;
  RecordingMmio* recorder_ = nullptr;  // set by device_opts_'s wrap_mmio as the device opens
  gpu::DeviceOptions device_opts_;
  gpu::Device device_;
  Context c_;
  std::unique_ptr<SimCardTree> sim_card_;
};

// kernel_runner's known work for the counters checks, planned on a first opening of the device
// (which runs each check needs) and run once it is closed: each run takes the GPU as a profile
// does, so the selftest never holds it at the same time.
KnownWork measure_known_work(const SelftestOptions& options) {
  KnownWork known;
  if (std::all_of(std::begin(kKnownWorkChecks), std::end(kKnownWorkChecks),
                  [&](std::string_view check) { return options.skip_checks.contains(check); })) {
    return known;  // oaprofd's: it starts no program for a client
  }
  // Started as the profile started below starts its program (the same SUDO_UID and SUDO_GID),
  // and never as root.
  if (!invoking_user(known.why_none)) return known;
  known.kernel_runner = selftest_kernel_runner(options, known.why_none);
  if (!known.kernel_runner) return known;
  {
    CheckedDevice planning(options);
    plan_known_work(planning.context(), known);
    known.device = planning.profile_device();
  }
  run_known_work(known, options.progress);
  return known;
}

SelftestReport describe_report(const SelftestOptions& options, const Context& c) {
  const gpu::Device& device = c.device;
  SelftestReport report;
  report.device = device.mmio->describe();
  report.platform = platform_label(device.platform);
  report.device_key = device_key(device.simulated(), device.platform, device.pci_address);
  report.pci_id = device.pci_id;
  report.simulated = device.simulated();
  report.accesses = c.accesses;
  report.quick = options.quick;
  for (const SimFault f : options.faults) report.faults.emplace_back(sim_fault_info(f).name);
  describe_system(device, options, report);
  return report;
}

}  // namespace

SelftestReport run_selftest(const SelftestOptions& options) {
  const KnownWork known = measure_known_work(options);
  CheckedDevice checked(options);
  Context& c = checked.context();
  c.known_work = &known;
  SelftestReport report = describe_report(options, c);
  c.earlier = &report.checks;
  for (const CheckSpec& spec : kChecks) report.checks.push_back(run_check(spec, c));
  return report;
}

bool any_failed(const SelftestReport& report) {
  return std::any_of(report.checks.begin(), report.checks.end(),
                     [](const CheckResult& r) { return r.verdict == Verdict::kFail; });
}

nlohmann::json report_json(const SelftestReport& report, std::string_view oaprof_version) {
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckResult& r : report.checks) {
    nlohmann::json figures = nlohmann::json::object();
    for (const Figure& f : r.figures) figures[f.name] = {{"value", f.value}, {"unit", f.unit}};
    checks.push_back({{"name", r.name},
                      {"group", r.group},
                      {"assumes", r.assumes},
                      {"tolerance", r.tolerance},
                      {"verdict", verdict_name(r.verdict)},
                      {"measurement", r.measurement},
                      {"reason", r.reason},
                      {"figures", figures}});
  }
  return {{"schema_version", kSchemaVersion},
          {"oaprof_version", oaprof_version},
          {"device",
           {{"label", report.device},
            {"platform", report.platform},
            {"pci_id", fmt::format("8086:{:04x}", report.pci_id)},
            {"simulated", report.simulated}}},
          {"system",
           {{"kernel", report.kernel},
            {"driver", report.driver},
            {"firmware", report.firmware},
            {"firmware_versions",
             {{"guc", firmware_json(report.guc)}, {"huc", firmware_json(report.huc)}}}}},
          {"accesses", report.accesses},
          {"sim_faults", report.faults},
          {"quick", report.quick},
          {"failed", any_failed(report)},
          {"checks", checks}};
}

std::string report_table(const SelftestReport& report) {
  using report::visible_text;
  std::string out = fmt::format(
      "oaprof selftest: {} ({}), read-outs {}{}\n", visible_text(report.device), report.platform,
      report.accesses.empty() ? "none" : fmt::format("{}", fmt::join(report.accesses, ", ")),
      report.faults.empty() ? "" : fmt::format(", faults {}", fmt::join(report.faults, ", ")));
  std::size_t failed = 0, skipped = 0;
  for (const CheckResult& r : report.checks) {
    out += fmt::format("{:<4}  {:<20} {}\n", verdict_name(r.verdict), r.name,
                       visible_text(r.measurement.empty() ? r.assumes : r.measurement));
    if (!r.reason.empty()) out += fmt::format("{:<26} {}\n", "", visible_text(r.reason));
    failed += r.verdict == Verdict::kFail;
    skipped += r.verdict == Verdict::kSkip;
  }
  out += fmt::format("{} checks: {} passed, {} failed, {} skipped{}\n", report.checks.size(),
                     report.checks.size() - failed - skipped, failed, skipped,
                     report.simulated ? " (device: simulated: a model, not a measurement)" : "");
  return out;
}

}  // namespace oaprof::run::selftest
