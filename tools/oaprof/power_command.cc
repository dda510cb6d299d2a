// `oaprof power`: a power meter. Reads the energy counters over a duration and prints each
// plane's energy and average power and the iGPU power by every formula, so a user can check the
// energy path (backend, permissions, a live counter) before profiling.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <memory>
#include <string>

#include "base/cli.h"
#include "base/duration.h"
#include "mmio/pci_bar.h"
#include "mmio/pci_sysfs.h"
#include "oa/platform.h"
#include "power/energy_registry.h"
#include "power/energy_sampler.h"
#include "power/energy_window.h"
#include "power/idle_baseline.h"
#include "power/sim_power.h"
#include "report/json_text.h"
#include "tools/oaprof/commands.h"

namespace oaprof::tools {
namespace {

struct PowerOptions {
  std::string energy = "auto";
  std::string sysfs_root = "/sys";
  std::string dev_root = "/dev";
  std::string proc_root = "/proc";
  std::string duration = "1s";
  std::string igpu_formula = "auto";
  std::string pci;  // the GPU whose energy to read: a discrete card's own sensors (hwmon)
  double sim_gpu_activity = 0;
  bool json = false;
};

std::string watts_text(const std::optional<double>& w) {
  return w ? fmt::format("{:9.3f} W", *w) : std::string("        - ");
}

void print_power_table(const std::string& source, const power::EnergyWindow& w) {
  std::cout << fmt::format("energy source: {}{}\n", source,
                           power::is_simulated_energy_backend(source)
                               ? " (device: simulated; a model, not a measurement)"
                               : "");
  std::cout << fmt::format("window: {:.3f} s\n", static_cast<double>(w.duration_ns) / 1e9);
  std::cout << fmt::format("{:<8} {:<5} {:>12} {:>11}\n", "domain", "plane", "energy", "power");
  for (const auto& [domain, uj] : w.energy_uj) {
    const auto p = w.power_w.find(domain);
    std::cout << fmt::format(
        "{:<8} {:<5} {:>10.6f} J {}\n", power::domain_name(domain), power::plane_name(domain),
        static_cast<double>(uj) / 1e6,
        watts_text(p != w.power_w.end() ? std::optional<double>(p->second) : std::nullopt));
  }
  std::cout << "GPU power:\n";
  for (power::IgpuFormula f : power::kAllIgpuFormulas) {
    std::string note;
    if (f == power::IgpuFormula::kPkgPp0Dram && w.igpu.pkg_pp0_dram_w && w.igpu.dram_missing) {
      note = "  (no DRAM plane: P_DRAM counted as 0)";
    } else if (!w.igpu.watts(f)) {
      note = "  (a plane it needs is missing)";
    }
    std::cout << fmt::format("  {}{:<13} {:<24} {}{}\n", f == w.formula ? "*" : " ",
                             power::formula_name(f), power::formula_label(f),
                             watts_text(w.igpu.watts(f)), note);
  }
  if (w.counters_did_not_move) {
    std::cout << "the energy counters did not move: they are not live (a virtual machine "
                 "exposes a frozen RAPL counter); no power figure is given\n";
  }
  const auto flags = w.flags();
  if (!flags.empty()) std::cout << fmt::format("flags: {}\n", fmt::join(flags, ","));
}

// Where the GPU at `address` sits, from its PCI id (oa::Platform::discrete); unknown where sysfs
// does not say or oaprof does not know the id.
power::GpuPlacement placement_of(const std::filesystem::path& sysfs,
                                 const mmio::PciAddress& address) {
  const auto id = mmio::read_pci_identity(sysfs, address);
  const auto platform =
      id && id->vendor == 0x8086 ? oa::platform_for_pci_id(id->device) : std::nullopt;
  if (!platform) return power::GpuPlacement::kUnknown;
  return platform->discrete ? power::GpuPlacement::kDiscrete : power::GpuPlacement::kIntegrated;
}

// The power meter's options, checked: throws base::UsageError.
struct PowerPlan {
  std::uint64_t duration_ns = 0;
  std::optional<power::IgpuFormula> formula;
  power::EnergyRoots roots;
};

PowerPlan plan_power(const PowerOptions& opt) {
  PowerPlan plan;
  plan.duration_ns =
      static_cast<std::uint64_t>(base::parse_duration("--duration", opt.duration).count());
  if (plan.duration_ns == 0) throw base::UsageError("--duration must be positive, e.g. 1s");
  plan.formula = power::parse_igpu_formula_choice(opt.igpu_formula);
  if (!(opt.sim_gpu_activity >= 0 && opt.sim_gpu_activity <= 1)) {
    throw base::UsageError("--sim-gpu-activity is a fraction between 0 and 1");
  }
  plan.roots.sysfs = opt.sysfs_root;
  plan.roots.dev = opt.dev_root;
  plan.roots.proc = opt.proc_root;
  if (!opt.pci.empty()) {
    const mmio::PciAddress address = mmio::parse_pci_address(opt.pci);
    plan.roots.gpu_pci_address = address.str();
    plan.roots.gpu_placement = placement_of(plan.roots.sysfs, address);
  }
  return plan;
}

std::unique_ptr<power::EnergySource> open_power_source(const PowerOptions& opt,
                                                       const PowerPlan& plan) {
  std::unique_ptr<power::EnergySource> source;
  try {
    source = power::make_energy_source(opt.energy, plan.roots);
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    // A refusal for the GPU names the option already.
    throw base::UsageError(what.starts_with("--energy") ? what : "--energy: " + what);
  }
  if (!source) {
    throw base::UsageError("--energy none reads nothing; name a backend or leave out --energy");
  }
  if (auto* sim = dynamic_cast<power::SimulatedEnergy*>(source.get())) {
    sim->set_gpu_activity(opt.sim_gpu_activity);
  }
  return source;
}

int run_power(const PowerOptions& opt) {
  const session::RootPathOption paths[] = {{"--sysfs-root", opt.sysfs_root, "/sys"},
                                           {"--dev-root", opt.dev_root, "/dev"},
                                           {"--proc-root", opt.proc_root, "/proc"}};
  if (const int rc = require_root_paths("power", paths); rc != 0) return rc;
  return base::run_command("oaprof power", [&opt] {
    const PowerPlan plan = plan_power(opt);
    std::unique_ptr<power::EnergySource> source = open_power_source(opt, plan);
    const std::string name(source->name());
    power::WindowOptions wopt;
    wopt.formula = plan.formula.value_or(power::default_igpu_formula(source->domains()));
    // Through the sampler: a counter may wrap several times within --duration.
    const power::EnergyWindow w =
        power::measure_energy_window(std::move(source), plan.duration_ns, wopt);
    if (w.went_backwards) throw base::SetupError(w.unavailable_reason);
    if (opt.json) {
      nlohmann::json j = power::to_json(w);
      j["source"] = name;
      j["simulated"] = power::is_simulated_energy_backend(name);
      std::cout << report::json_text(j, 2) << "\n";
    } else {
      print_power_table(name, w);
    }
    return 0;
  });
}

std::pair<CLI::App*, Action> add_power_command(CLI::App& app) {
  auto opt = std::make_shared<PowerOptions>();
  CLI::App* sub = app.add_subcommand(
      "power", "a power meter: RAPL planes, GPU sensors, GPU power (docs/energy.md)");
  std::string backends = "backend: auto";
  for (const auto& b : power::energy_backends()) backends += fmt::format(", {}", b.name);
  sub->add_option("--energy", opt->energy, backends)->capture_default_str();
  base::cli::testing(sub->add_option("--sysfs-root", opt->sysfs_root, "where sysfs is"))
      ->capture_default_str();
  base::cli::testing(sub->add_option("--dev-root", opt->dev_root, "where /dev is (msr backend)"))
      ->capture_default_str();
  base::cli::testing(
      sub->add_option("--proc-root", opt->proc_root, "where procfs is (msr backend's cpuinfo)"))
      ->capture_default_str();
  sub->add_option("--duration", opt->duration, "how long to measure (500ms, 1s, 2.5s)")
      ->capture_default_str();
  sub->add_option("--pci", opt->pci,
                  "the GPU to measure: a discrete card's own sensors (hwmon), never RAPL");
  sub->add_option("--igpu-power", opt->igpu_formula, "the headline GPU formula (docs/energy.md)")
      ->capture_default_str();
  base::cli::testing(sub->add_option("--sim-gpu-activity", opt->sim_gpu_activity,
                                     "with --energy sim: the GPU's busy fraction (0 to 1)"))
      ->capture_default_str();
  sub->add_flag("--json", opt->json, "print JSON: every figure, each iGPU one with its formula");
  sub->footer("Exit status:\n  0  measured\n  2  bad options\n  3  no energy source could be read");
  return {sub, [opt] { return run_power(*opt); }};
}

}  // namespace

OAPROF_REGISTER_SUBCOMMAND(power, add_power_command);

}  // namespace oaprof::tools
