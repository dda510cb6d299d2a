// `oaprof doctor`: checks what profiling needs on this machine and prints, for each check, a
// verdict (ok, info, warn, fail, skip) and the exact fix, so a user gets from a fresh install to
// a working profile without reading the kernel's mind. The checks are in doctor.{h,cc}.
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/cli.h"
#include "mmio/signal_restore.h"
#include "mmio/sim_gpu.h"
#include "report/json_text.h"
#include "run/doctor.h"
#include "session/daemon_paths.h"
#include "session/privilege_drop.h"
#include "tools/oaprof/commands.h"

namespace oaprof::tools {
namespace {

namespace doctor = run::doctor;

struct DoctorCommandOptions {
  doctor::DoctorOptions checks;
  // Parsed as strings: CLI11 would print a std::filesystem::path default with quotes.
  std::string sysfs_root = "/sys";
  std::string debugfs_root = "/sys/kernel/debug";
  std::string proc_root = "/proc";
  std::string dev_root = "/dev";
  std::string systemd_dropins = "/etc/systemd/system/oaprofd.service.d";
  std::string device;  // --device sim
  int sim_eus = 0;
  bool sim_no_i915 = false;
  std::string sim_platform = "kblgt2";
  bool json = false;
};

void print_text(const doctor::DoctorOptions& opt, const std::vector<doctor::Check>& checks) {
  std::cout << fmt::format("oaprof doctor: device {}, sysfs {}, debugfs {}, proc {}, dev {}\n",
                           opt.pci, opt.sysfs_root.string(), opt.debugfs_root.string(),
                           opt.proc_root.string(), opt.dev_root.string());
  for (const auto& c : checks) {
    std::cout << fmt::format("{:<5} {:<15} {}\n", doctor::verdict_name(c.verdict), c.name,
                             c.detail);
    if (!c.fix.empty()) std::cout << fmt::format("{:<21} fix: {}\n", "", c.fix);
  }
  std::size_t failed = 0, warned = 0;
  for (const auto& c : checks) {
    failed += c.verdict == doctor::Verdict::kFail;
    warned += c.verdict == doctor::Verdict::kWarn;
  }
  std::cout << fmt::format("{} failed, {} warnings\n", failed, warned);
}

void print_json(const doctor::DoctorOptions& opt, const std::vector<doctor::Check>& checks) {
  nlohmann::json j;
  j["pci"] = opt.pci;
  j["checks"] = nlohmann::json::array();
  for (const auto& c : checks) {
    j["checks"].push_back({{"check", c.name},
                           {"verdict", doctor::verdict_name(c.verdict)},
                           {"detail", c.detail},
                           {"fix", c.fix}});
  }
  j["failed"] = doctor::any_failed(checks);
  std::cout << report::json_text(j, 2) << "\n";
}

int run_doctor(DoctorCommandOptions& opt) {
  mmio::SignalThread::start();  // doctor may hold forcewake: signals restore it (profile.cc)
  const session::RootPathOption paths[] = {
      {"--sysfs-root", opt.sysfs_root, "/sys"},
      {"--debugfs-root", opt.debugfs_root, "/sys/kernel/debug"},
      {"--proc-root", opt.proc_root, "/proc"},
      {"--dev-root", opt.dev_root, "/dev"},
      {"--systemd-dropins", opt.systemd_dropins, "/etc/systemd/system/oaprofd.service.d"},
      {"--opencl-library", opt.checks.opencl_library, "libOpenCL.so.1"},
  };
  if (const int rc = require_root_paths("doctor", paths); rc != 0) return rc;
  try {
    opt.checks.sudo_user =
        session::credentials_from_sudo(session::process_environment(), ::geteuid());
  } catch (const std::invalid_argument& e) {
    std::cerr << "oaprof doctor: " << e.what() << "\n";
    return base::kExitUsage;
  }
  if (opt.checks.sudo_user && opt.checks.opencl_platforms) {
    // Listing platforms loads every ICD the loader finds, steered by the user's environment
    // (OCL_ICD_VENDORS): not as root.
    opt.checks.opencl_platforms = false;
    opt.checks.opencl_skipped_because =
        "not listed under sudo: that loads every OpenCL ICD as root; run `oaprof doctor` "
        "without sudo to list them";
  }
  opt.checks.sysfs_root = opt.sysfs_root;
  opt.checks.debugfs_root = opt.debugfs_root;
  opt.checks.proc_root = opt.proc_root;
  opt.checks.dev_root = opt.dev_root;
  opt.checks.systemd_dropins = opt.systemd_dropins;
  if (!opt.device.empty()) {
    mmio::SimConfig sim;
    sim.eus = opt.sim_eus;
    sim.i915 = !opt.sim_no_i915;
    sim.platform = mmio::sim_platform_by_name(opt.sim_platform);
    opt.checks.sim = sim;
  }
  return base::run_command("oaprof doctor", [&opt] {
    const std::vector<doctor::Check> checks = doctor::run_checks(opt.checks);
    if (opt.json) {
      print_json(opt.checks, checks);
    } else {
      print_text(opt.checks, checks);
    }
    return doctor::any_failed(checks) ? base::kExitCheckFailed : 0;
  });
}

std::pair<CLI::App*, Action> add_doctor_command(CLI::App& app) {
  auto opt = std::make_shared<DoctorCommandOptions>();
  CLI::App* sub =
      app.add_subcommand("doctor", "check this machine for profiling; each check says its fix");
  auto& c = opt->checks;
  sub->add_option("--pci", c.pci, "the GPU's PCI address (what oaprof --pci BDF names)")
      ->capture_default_str();
  using base::cli::testing;
  testing(sub->add_option("--sysfs-root", opt->sysfs_root, "where sysfs is"))
      ->capture_default_str();
  testing(sub->add_option("--debugfs-root", opt->debugfs_root, "where debugfs is"))
      ->capture_default_str();
  base::cli::deprecated(sub->add_option("--debugfs", opt->debugfs_root), "oaprof doctor",
                        "--debugfs-root");
  testing(sub->add_option("--proc-root", opt->proc_root, "where procfs is"))->capture_default_str();
  testing(sub->add_option("--dev-root", opt->dev_root, "where /dev is (the msr backend's)"))
      ->capture_default_str();
  testing(sub->add_option("--systemd-dropins", opt->systemd_dropins,
                          "where oaprofd.service's drop-ins are (docs/exporter.md)"))
      ->capture_default_str();
  sub->add_option("--daemon-socket", c.daemon_socket,
                  std::string("oaprofd's socket (default: $") + session::kDaemonSocketEnv + ")");
  sub->add_option("--opencl-library", c.opencl_library, "the OpenCL loader to inspect")
      ->capture_default_str();
  sub->add_flag("!--no-opencl-devices", c.opencl_platforms,
                "do not list OpenCL platforms (that loads every ICD)");
  sub->add_flag("--json", opt->json, "print the checks as JSON");
  testing(sub->add_option("--device", opt->device, "sim: ask the simulator, not the GPU at --pci"))
      ->check(CLI::IsMember({"sim"}));
  testing(sub->add_option("--sim-eus", opt->sim_eus, "with --device sim: the simulated part's EUs"))
      ->check(CLI::PositiveNumber);
  testing(sub->add_flag("--sim-no-i915", opt->sim_no_i915, "with --device sim: no i915 to ask"));
  testing(sub->add_option("--sim-platform", opt->sim_platform, "with --device sim: the part"))
      ->check(CLI::IsMember(std::vector<std::string>(mmio::sim_platform_names().begin(),
                                                     mmio::sim_platform_names().end())))
      ->capture_default_str();
  sub->footer(
      "Checks: GPU, driver, topology, forcewake, lockdown, perf, RAPL, OpenCL, oaprofd, exporter.\n"
      "\n"
      "Exit status:\n"
      "  0  no check failed (warnings allowed)\n"
      "  1  a check failed\n"
      "  2  bad options");
  return {sub, [opt] { return run_doctor(*opt); }};
}

}  // namespace

OAPROF_REGISTER_SUBCOMMAND(doctor, add_doctor_command);

}  // namespace oaprof::tools
