// `oaprof selftest`: runs the fixed list of hardware-assumption checks (run/selftest.h) on one
// device and prints a table, and with --json writes the report meant for a bug report.
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/cli.h"
#include "gpu/counter_source.h"
#include "mmio/signal_restore.h"
#include "report/fd_ostream.h"
#include "report/json_text.h"
#include "report/reporter.h"
#include "run/energy_model_file.h"
#include "run/selftest.h"
#include "run/selftest_daemon.h"
#include "run/selftest_result.h"
#include "session/privilege_drop.h"
#include "session/remote_source.h"
#include "session/user_file.h"
#include "tools/oaprof/commands.h"

namespace oaprof::tools {
namespace {

// "Checks: a, b, ..." from the list the selftest runs, folded at 80 columns, so that --help names
// every check there is (CliTest holds help lines to 100).
std::string checks_footer() {
  std::string text = "Checks:";
  std::size_t line_start = 0;
  for (const std::string_view name : run::selftest::check_names()) {
    if (text.size() - line_start + name.size() + 2 > 80) {
      text += "\n ";
      line_start = text.size() - 1;
    }
    text += fmt::format(" {},", name);
  }
  text.back() = '.';
  return text + "\n(docs/selftest.md says what each proves.)\n";
}

struct SelftestCommandOptions {
  std::string device = "auto";
  std::string access = "all";
  std::string json_file;
  bool quick = false;
  std::string sim_platform = "kblgt2";
  std::vector<std::string> sim_faults;
  std::string metrics_xml;
  std::string energy = "auto";
  std::string energy_model;
  std::string daemon = "auto";
  // The options given that only a local run takes (through oaprofd they are refused).
  std::vector<std::string> local_only;
};

// `--daemon`, as a profile run decides it (docs/daemon.md): `auto` goes through oaprofd when not
// root, except for the simulator, which needs no privilege.
bool selftest_goes_to_daemon(const SelftestCommandOptions& o) {
  if (o.daemon == "always") return true;
  return o.daemon == "auto" && ::geteuid() != 0 && !gpu::DeviceSpec::parse(o.device).simulated();
}

void show_selftest_progress(std::string_view check) {
  std::cerr << "oaprof selftest: " << check << "…\n";
}

run::selftest::SelftestOptions selftest_options(const SelftestCommandOptions& o) {
  run::selftest::SelftestOptions s;
  s.device.spec = gpu::DeviceSpec::parse(o.device);
  s.device.sim.platform = mmio::sim_platform_by_name(o.sim_platform);
  if (o.access != "all") s.accesses = {o.access};
  s.quick = o.quick;
  for (const std::string& f : o.sim_faults) s.faults.push_back(run::selftest::parse_sim_fault(f));
  s.metrics_xml = o.metrics_xml;
  s.energy = o.energy;
  if (!o.energy_model.empty()) {
    // Read as the user who ran sudo, as a profile run reads it; a bad file is a usage error.
    s.energy_model = run::read_energy_model(
        o.energy_model,
        session::credentials_from_sudo(session::process_environment(), ::geteuid()));
  }
  s.energy_roots.gpu_pci_address = s.device.spec.simulated() ? "" : s.device.spec.address().str();
  s.progress = show_selftest_progress;
  return s;
}

// The report, opened as the invoking user under sudo (session/user_file.h).
void write_json(const std::string& path, const nlohmann::json& report) {
  const auto creds = session::credentials_from_sudo(session::process_environment(), ::geteuid());
  int fd = -1;
  try {
    fd = session::open_user_file(path, session::UserFileAccess::kWrite, creds);
  } catch (const session::UserFileError& e) {
    throw base::OutputError(std::string("--json: ") + e.what());
  }
  report::FdOstream out(fd);
  out << report::json_text(report, 2) << "\n";
  report::flush_or_throw(out, path);
}

// oaprofd runs the checks its sessions' grant covers, keeps the result itself, and sends the
// report back; this end prints it and writes --json as the invoking user.
int run_selftest_in_daemon(const SelftestCommandOptions& opt) {
  return base::run_command("oaprof selftest", [&opt] {
    if (!opt.local_only.empty()) {
      throw base::UsageError(fmt::format(
          "{} {} not sent to oaprofd: through it the selftest uses oaprofd's own device, metric "
          "files and energy, and never a fault; run sudo oaprof selftest, or give --daemon never",
          fmt::join(opt.local_only, ", "), opt.local_only.size() == 1 ? "is" : "are"));
    }
    const ipc::wire::Selftest request{opt.quick, opt.device, opt.access};
    const nlohmann::json json = run::selftest::selftest_through_daemon(
        session::daemon_socket_path(), request, show_selftest_progress);
    const run::selftest::SelftestReport report = run::selftest::report_from_json(json);
    std::cout << run::selftest::report_table(report);
    std::cerr << "oaprof selftest: run by oaprofd, which keeps the result for profile runs\n";
    if (!opt.json_file.empty()) write_json(opt.json_file, json);
    return run::selftest::any_failed(report) ? base::kExitCheckFailed : 0;
  });
}

int run_selftest_command(const SelftestCommandOptions& opt) {
  if (selftest_goes_to_daemon(opt)) return run_selftest_in_daemon(opt);
  mmio::SignalThread::start();  // the checks program the OA unit: signals restore it
  return base::run_command("oaprof selftest", [&opt] {
    const run::selftest::SelftestReport report = run::selftest::run_selftest(selftest_options(opt));
    std::cout << run::selftest::report_table(report);
    std::cerr << "oaprof selftest: " << run::selftest::keep_last_result(report, OAPROF_VERSION)
              << "\n";
    if (!opt.json_file.empty()) {
      write_json(opt.json_file, run::selftest::report_json(report, OAPROF_VERSION));
    }
    return run::selftest::any_failed(report) ? base::kExitCheckFailed : 0;
  });
}

std::pair<CLI::App*, Action> add_selftest_command(CLI::App& app) {
  auto opt = std::make_shared<SelftestCommandOptions>();
  CLI::App* sub =
      app.add_subcommand("selftest", "check each hardware assumption oaprof makes on this GPU");
  sub->add_option("--device", opt->device, "GPU to check: auto, sim or a PCI address")
      ->capture_default_str();
  std::vector<std::string> accesses = {"all"};
  for (const auto& entry : gpu::counter_sources()) {
    if (entry.name != "sim") accesses.emplace_back(entry.name);
  }
  sub->add_option("--access", opt->access, "the read-outs to measure through")
      ->check(CLI::IsMember(accesses))
      ->capture_default_str();
  sub->add_option("--json", opt->json_file, "write the report to FILE (attach it to bug reports)")
      ->check(base::cli::output_file());
  sub->add_flag("--quick", opt->quick, "fewer, shorter windows: an answer in seconds");
  sub->add_option("--metrics-xml", opt->metrics_xml,
                  "the IGT metric file to program read-outs with (perf needs one)");
  sub->add_option("--energy", opt->energy, "energy backend for the energy check")
      ->capture_default_str();
  sub->add_option("--energy-model", opt->energy_model,
                  "model.json of `oaprof model fit`: the energy-model check judges it");
  sub->add_option("--daemon", opt->daemon, "run the checks in oaprofd (docs/selftest.md)")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  using base::cli::testing;
  testing(sub->add_option("--sim-platform", opt->sim_platform, "with --device sim: the part"))
      ->check(CLI::IsMember(std::vector<std::string>(mmio::sim_platform_names().begin(),
                                                     mmio::sim_platform_names().end())))
      ->capture_default_str();
  std::vector<std::string> faults;
  for (const auto& f : run::selftest::sim_faults()) faults.emplace_back(f.name);
  testing(sub->add_option("--sim-fault", opt->sim_faults,
                          "with --device sim: make the simulated hardware wrong in one way, so "
                          "that its check fails (repeatable)"))
      ->check(CLI::IsMember(faults));
  sub->footer(checks_footer() +
              "\n"
              "Exit status:\n"
              "  0  every check passed or was skipped (with its reason)\n"
              "  1  a check failed\n"
              "  2  bad options\n"
              "  3  the device could not be opened (or oaprofd, with --daemon, is not there)\n"
              "  4  the --json file cannot be written as the invoking user");
  return {sub, [opt, sub] {
            for (const char* name :
                 {"--metrics-xml", "--energy", "--energy-model", "--sim-platform", "--sim-fault"}) {
              if (sub->count(name) > 0) opt->local_only.emplace_back(name);
            }
            return run_selftest_command(*opt);
          }};
}

}  // namespace

OAPROF_REGISTER_SUBCOMMAND(selftest, add_selftest_command);

}  // namespace oaprof::tools
