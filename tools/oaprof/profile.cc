// The default action of oaprof: profile a program. Wiring only: the device (gpu), the Session
// and its socket (daemon), the child with the layer, and the reporters (report).
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "daemon/child.h"
#include "daemon/server.h"
#include "daemon/session.h"
#include "gpu/counter_source.h"
#include "gpu/device.h"
#include "oa/report_format.h"
#include "report/reporter.h"
#include "tools/oaprof/commands.h"

extern char** environ;

namespace {
namespace fs = std::filesystem;

using oaprof::tools::kExitCannotRun;
using oaprof::tools::kExitOutput;
using oaprof::tools::kExitSetup;
using oaprof::tools::kExitUsage;

std::atomic<pid_t> g_child{0};

// Signals sent to oaprof (kill, systemd, a batch system) go on to the program, which decides how
// to end; oaprof then writes everything measured and restores the GPU. A Ctrl-C from the terminal
// already reaches the program through the process group, so it is not sent twice.
void forward_signal(int sig, siginfo_t* info, void*) {
  const pid_t child = g_child.load();
  if (child > 0 && info->si_code != SI_KERNEL) ::kill(child, sig);
}

std::uint64_t parse_duration_ms(const std::string& text) {
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (...) {
    throw CLI::ValidationError("duration", fmt::format("'{}' is not a duration like 50ms or 1s", text));
  }
  const std::string unit = text.substr(pos);
  const std::map<std::string, double> to_ms{{"", 1}, {"ms", 1}, {"s", 1000}, {"us", 1e-3}};
  auto it = to_ms.find(unit);
  if (it == to_ms.end() || v < 0) {
    throw CLI::ValidationError("duration", fmt::format("'{}' is not a duration like 50ms or 1s", text));
  }
  return static_cast<std::uint64_t>(v * it->second);
}

fs::path layer_path() {
  if (const char* p = std::getenv("OAPROF_LAYER"); p && *p) return p;
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).parent_path() / OAPROF_LAYER_FROM_BIN;
}

std::map<std::string, std::string> environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq) env.emplace(std::string(*e, static_cast<std::size_t>(eq - *e)), eq + 1);
  }
  return env;
}

}  // namespace


namespace oaprof::tools {

struct ProfileOptions {
  std::string device_spec = "auto";
  std::string access = "mmio";
  std::string format_text = "101";
  std::string csv_path;
  std::string min_window = "50ms";
  bool quiet = false;
  std::vector<std::string> command;
};

int run_profile(const ProfileOptions& options);

Action add_profile_options(CLI::App& app) {
  auto opt = std::make_shared<ProfileOptions>();
  app.add_option("--device", opt->device_spec,
                 "GPU to measure: auto (0000:00:02.0), sim (the simulator, for machines without an "
                 "Intel GPU; its numbers are a model, labelled 'device: simulated'), or a PCI "
                 "address such as 0000:00:02.0")
      ->capture_default_str();
  std::string access_help = "counter read-out:";
  for (const auto& s : gpu::counter_sources()) {
    access_help += fmt::format(" {} ({})", s.name, s.description);
  }
  app.add_option("--access", opt->access, access_help)->capture_default_str();
  app.add_option("--format", opt->format_text,
                 "OA report format: counter-select code in binary (101) or decimal (5), or a name "
                 "(A32u40_A4u32_B8_C8); read for the device's generation")
      ->capture_default_str();
  app.add_option("-o,--csv", opt->csv_path,
                 "CSV file, one row per launch, written as the run goes (default: "
                 "oaprof-<program>.csv)");
  app.add_option("--min-window", opt->min_window,
                 "least measurement window a power figure needs (50ms, 1s); kernel_runner repeats "
                 "launches until it is covered")
      ->capture_default_str();
  app.add_flag("-q,--quiet", opt->quiet, "no summary table or progress");
  app.add_option("command", opt->command, "the program to profile and its arguments, after --");
  return [opt] { return run_profile(*opt); };
}

int run_profile(const ProfileOptions& options) {
  const auto& command = options.command;
  if (command.empty()) {
    std::cerr << "oaprof: name the program to profile after --, e.g. oaprof -- kernel_runner "
                 "mad_vect4 (oaprof --help lists the options)\n";
    return kExitUsage;
  }
  std::uint64_t min_window_ms = 0;
  try {
    min_window_ms = parse_duration_ms(options.min_window);
  } catch (const CLI::ValidationError& e) {
    std::cerr << "oaprof: --min-window: " << e.what() << "\n";
    return kExitUsage;
  }
  const std::string csv_path =
      options.csv_path.empty()
          ? fmt::format("oaprof-{}.csv", fs::path(command[0]).filename().string())
          : options.csv_path;

  const auto env = environment();
  std::optional<daemon::Credentials> creds;
  gpu::Device device;
  std::unique_ptr<gpu::CounterSource> source;
  oa::ReportFormat format{};
  try {
    creds = daemon::credentials_from_sudo(env, ::geteuid());
    gpu::DeviceOptions dopt;
    dopt.spec = options.device_spec;
    device = gpu::open_device(dopt);
    format = oa::parse_format(options.format_text, device.platform.gen);
    source = gpu::make_counter_source(options.access, device);
  } catch (const std::invalid_argument& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    return kExitSetup;
  }

  std::ofstream csv(csv_path, std::ios::trunc);
  if (!csv) {
    std::cerr << fmt::format("oaprof: cannot write {}: {}\n", csv_path, std::strerror(errno));
    return kExitOutput;
  }
  if (creds) (void)::chown(csv_path.c_str(), creds->uid, creds->gid);  // the user's file

  report::RunInfo info;
  info.device = device.label();
  info.device_detail = device.mmio->describe();
  info.platform = std::string(device.platform.metrics_file);
  info.format = std::string(oa::layout_of(format).name);
  info.access = options.access;
  info.eus = device.platform.eus;
  info.timestamp_hz = device.platform.timestamp_hz;
  info.command = command;
  auto csv_reporter = report::make_csv_reporter(csv);
  auto table = report::make_table_reporter(std::cout);
  csv_reporter->begin(info);
  table->begin(info);
  std::atomic<std::uint64_t> rows{0};
  daemon::Session session(*source, format, [&](const oa::LaunchRecord& r) {
    csv_reporter->add(r);
    table->add(r);
    rows.fetch_add(1, std::memory_order_relaxed);
  });

  const char* tmpdir = std::getenv("TMPDIR");
  std::string dir = fmt::format("{}/oaprof-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  if (::mkdtemp(dir.data()) == nullptr) {
    std::cerr << fmt::format("oaprof: cannot create a socket directory {}: {}\n", dir,
                             std::strerror(errno));
    return kExitSetup;
  }
  const std::string socket_path = dir + "/session.sock";
  std::vector<uid_t> allowed{::getuid()};
  if (creds) {
    allowed.push_back(creds->uid);
    (void)::chown(dir.c_str(), creds->uid, creds->gid);
  }

  std::unique_ptr<daemon::Server> server;
  try {
    session.start();
    server = std::make_unique<daemon::Server>(socket_path, session, allowed);
    if (creds) (void)::chown(socket_path.c_str(), creds->uid, creds->gid);
    ::chmod(socket_path.c_str(), 0600);
    server->start();
  } catch (const std::exception& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    ::rmdir(dir.c_str());
    return kExitSetup;
  }
  auto cleanup = [&] {
    server->stop();
    session.stop();  // restores every register the session touched
    server.reset();
    ::rmdir(dir.c_str());
    csv_reporter->end();
  };

  const fs::path layer = layer_path();
  if (!fs::exists(layer)) {
    std::cerr << fmt::format(
        "oaprof: the OpenCL layer {} is missing; reinstall oaprof or set OAPROF_LAYER\n",
        layer.string());
    cleanup();
    return kExitSetup;
  }
  daemon::ChildSpec child;
  child.argv = command;
  child.credentials = creds;
  child.set_env["OAPROF_SOCKET"] = socket_path;
  child.set_env["OAPROF_MIN_TIME_MS"] = std::to_string(min_window_ms);
  // ocl-icd ≥ 2.3 loads the layers named here, in order; ours goes first so it sees the program's
  // calls before any other layer the user has.
  auto existing = env.find("OPENCL_LAYERS");
  child.set_env["OPENCL_LAYERS"] =
      layer.string() +
      (existing != env.end() && !existing->second.empty() ? ":" + existing->second : "");

  struct sigaction sa {};
  sa.sa_sigaction = &forward_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaction(sig, &sa, nullptr);

  int exit_code = 0;
  try {
    const pid_t pid = daemon::spawn_child(child);
    g_child = pid;
    if (!options.quiet) {
      std::cerr << fmt::format("oaprof: profiling '{}' on {} ({}), writing {}\n", command[0],
                               info.device, info.device_detail, csv_path);
    }
    // Progress on a terminal: the count of launches measured so far, once a second.
    const bool tty = !options.quiet && ::isatty(STDERR_FILENO);
    auto last_progress = std::chrono::steady_clock::now();
    int status = 0;
    for (;;) {
      const pid_t r = ::waitpid(pid, &status, tty ? WNOHANG : 0);
      if (r == pid) break;
      if (r < 0 && errno != EINTR) break;
      if (tty) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(1)) {
          last_progress = std::chrono::steady_clock::now();
          std::cerr << fmt::format("\roaprof: {} launches measured", rows.load());
        }
      }
    }
    if (tty) std::cerr << "\r\033[K";
    g_child = 0;
    exit_code = daemon::shell_status(status);
  } catch (const std::exception& e) {
    std::cerr << "oaprof: " << e.what() << "\n";
    exit_code = kExitCannotRun;
  }
  cleanup();
  if (!options.quiet) {
    table->end();
    std::cerr << fmt::format(
        "oaprof: {} launches written to {}{}\n", rows.load(), csv_path,
        session.launches_dropped()
            ? fmt::format(" ({} incomplete launches dropped)", session.launches_dropped())
            : "");
    if (exit_code != 0 && exit_code != kExitCannotRun) {
      std::cerr << fmt::format("oaprof: '{}' exited with status {}\n", command[0], exit_code);
    }
  }
  return exit_code;
}

}  // namespace oaprof::tools
