// What the selftest's in-process tests share: the metric search path (each platform's IGT file,
// which the perf read-out and the driver check need), a short simulated run, the build's
// kernel_runner or a fake one, and a fake sudo.
#pragma once

#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpu/device.h"
#include "mmio/sim_gpu.h"
#include "oa/device_facts.h"
#include "oa/platform.h"
#include "run/selftest.h"

namespace oaprof::run::selftest {

inline void use_shared_metrics_path() {
  const std::string metrics = std::string(OAPROF_METRICS_DIR);
  ::setenv("OAPROF_METRICS_PATH",
           (metrics + "/igt:" + metrics + "/igt-mtl:" + metrics + "/igt-xe").c_str(), 1);
}

// Short windows: every bound a check applies holds for any window length.
inline SelftestOptions sim_options(std::string_view platform, std::vector<SimFault> faults = {}) {
  SelftestOptions o;
  o.device.spec = gpu::DeviceSpec::sim();
  o.device.sim.platform = mmio::sim_platform_by_name(platform);
  o.faults = std::move(faults);
  o.windows = 3;
  o.window_ns = 5'000'000;
  return o;
}

// A real GPU as the selftest describes one (a PCI address, no simulator), opened by nothing: for
// what is built from the description alone, such as kernel_runner's arguments. KBL GT2.
inline gpu::Device described_real_device(const std::string& pci_address) {
  gpu::Device d;
  d.pci_id = 0x5916;
  d.platform = oa::require_platform_for_pci_id(d.pci_id);
  d.facts = oa::table_facts(d.platform, "described in a test");
  d.pci_address = pci_address;
  return d;
}

// A directory with a fake kernel_runner in it, open to the user it may run as (nobody), which
// writes what it was started with (its pid, uid, arguments and environment) beside itself and
// then runs `body`.
class FakeKernelRunner {
 public:
  explicit FakeKernelRunner(const std::string& body) {
    namespace fs = std::filesystem;
    dir_ = fs::temp_directory_path() /
           ("oaprof-load-" + std::to_string(::getpid()) + "-" + std::to_string(++count_));
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms::all);
    std::ofstream(dir_ / "kernel_runner") << "#!/bin/sh\n"
                                          << "echo $$ >> '" << (dir_ / "pids").string() << "'\n"
                                          << "id -u > '" << (dir_ / "uid").string() << "'\n"
                                          << "echo \"$@\" >> '" << (dir_ / "args").string() << "'\n"
                                          << "env > '" << (dir_ / "env").string() << "'\n"
                                          << body << "\n";
    fs::permissions(dir_ / "kernel_runner", fs::perms::all);
  }
  ~FakeKernelRunner() { std::filesystem::remove_all(dir_); }
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path program() const { return dir_ / "kernel_runner"; }
  std::string first_line(const std::string& file) const {
    std::string line;
    std::getline(std::ifstream(dir_ / file), line);
    return line;
  }
  std::vector<std::string> lines(const std::string& file) const {
    std::vector<std::string> out;
    std::ifstream in(dir_ / file);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  std::vector<pid_t> pids() const {
    std::vector<pid_t> out;
    std::ifstream in(dir_ / "pids");
    for (pid_t pid; in >> pid;) out.push_back(pid);
    return out;
  }

 private:
  static inline int count_ = 0;
  std::filesystem::path dir_;
};

// SUDO_UID/SUDO_GID for the test's life: nobody when we are root (as `sudo oaprof` by a user).
class SudoEnv {
 public:
  explicit SudoEnv(std::optional<std::string> uid) {
    for (const char* k : {"SUDO_UID", "SUDO_GID"}) {
      const char* v = std::getenv(k);
      saved_.push_back(v ? std::optional<std::string>(v) : std::nullopt);
      if (uid)
        ::setenv(k, uid->c_str(), 1);
      else
        ::unsetenv(k);
    }
  }
  ~SudoEnv() {
    const char* keys[] = {"SUDO_UID", "SUDO_GID"};
    for (std::size_t i = 0; i < 2; ++i) {
      if (saved_[i])
        ::setenv(keys[i], saved_[i]->c_str(), 1);
      else
        ::unsetenv(keys[i]);
    }
  }

 private:
  std::vector<std::optional<std::string>> saved_;
};

// The uid a program the selftest starts must run as: nobody under SudoEnv("65534") when root,
// else ours.
inline std::string expected_uid() {
  return ::geteuid() == 0 ? "65534" : std::to_string(::getuid());
}

// Environment variables set (or, with nullopt, unset) for the object's life.
class ScopedEnv {
 public:
  explicit ScopedEnv(std::vector<std::pair<std::string, std::optional<std::string>>> vars) {
    for (auto& [name, value] : vars) {
      const char* was = std::getenv(name.c_str());
      saved_.emplace_back(name, was ? std::optional<std::string>(was) : std::nullopt);
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

#ifdef OAPROF_LAYER_SO
// For its life, the build's kernel_runner for the known-work checks and oaprof's layers for its
// profile runs, found through oaprof's own variables: a test binary has neither beside it as
// oaprof has, so without this those checks skip (no kernel_runner) and start nothing. The
// selftest never starts kernel_runner as root: a root test runs it as nobody (SudoEnv), with
// PoCL's kernel cache where nobody may write it.
class BuiltKernelRunner {
 public:
  BuiltKernelRunner()
      : env_({{"OAPROF_LAYER", OAPROF_LAYER_SO},
              {"OAPROF_PRELOAD", OAPROF_PRELOAD_SO},
              {"POCL_CACHE_DIR", pocl_cache_dir()}}) {}
  SelftestOptions operator()(SelftestOptions o) const {
    o.kernel_runner_dir = std::filesystem::path(KERNEL_RUNNER_BIN).parent_path();
    return o;
  }

 private:
  static std::optional<std::string> pocl_cache_dir() {
    const char* ours = std::getenv("POCL_CACHE_DIR");
    if (::geteuid() != 0) return ours ? std::optional<std::string>(ours) : std::nullopt;
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / "oaprof-test-pocl-cache-nobody";
    std::filesystem::create_directories(dir);
    std::filesystem::permissions(dir, std::filesystem::perms::all);
    return dir.string();
  }

  SudoEnv sudo_{std::string("65534")};
  ScopedEnv env_;
};
#endif

// The check of that name in a report.
inline const CheckResult& check(const SelftestReport& report, std::string_view name) {
  for (const CheckResult& r : report.checks) {
    if (r.name == name) return r;
  }
  throw std::logic_error("no check " + std::string(name));
}

// The names of the checks that failed, in the report's order.
inline std::vector<std::string> failed(const SelftestReport& report) {
  std::vector<std::string> names;
  for (const CheckResult& r : report.checks) {
    if (r.verdict == Verdict::kFail) names.push_back(r.name);
  }
  return names;
}

}  // namespace oaprof::run::selftest
