#include "run/selftest_daemon.h"

#include <chrono>
#include <cstdio>
#include <limits>
#include <thread>

#include <fmt/format.h>

#include "base/errors.h"
#include "oa/builtin_metric_set.h"
#include "run/selftest_result.h"
#include "run/selftest_work.h"
#include "session/remote_source.h"

namespace oaprof::run::selftest {
namespace wire = ipc::wire;

namespace {

// The checks whose busy windows run under the GPU load on real hardware: kernel_runner, which
// `sudo oaprof selftest` starts as the invoking user (run/selftest_load.h).
constexpr std::string_view kLoadChecks[] = {"readouts-agree", "rpc-vs-periodic", "noa-counting",
                                            "flex-routing", "context-switch"};
// Why oaprofd's selftest starts no GPU load: the energy check's busy windows say it.
constexpr std::string_view kNoLoad =
    "oaprofd starts no program for a client: sudo oaprof selftest runs kernel_runner as you";

// How often the client asks whether the checks have ended: each check takes a window or more
// (20 ms quick, 100 ms full), so a check's progress line is late by a fraction of it at most.
constexpr auto kFetchPeriod = std::chrono::milliseconds(50);
// The full run takes under two minutes on every part (issue 32); a daemon still running after
// this is stuck, and the client stops waiting (its connection closing cancels the run).
constexpr auto kSelftestDeadline = std::chrono::minutes(10);

}  // namespace

std::map<std::string, std::string, std::less<>> daemon_skipped_checks(
    const daemon::SelftestJob& job) {
  std::map<std::string, std::string, std::less<>> skip;
  skip["driver-accepts-configs"] =
      "needs root: it adds every metric set of the part's file to the kernel driver and removes "
      "it again, which oaprofd does for no client (a session adds only the set it names); run "
      "sudo oaprof selftest";
  skip["energy-model"] =
      "needs root: the model is a file of yours, which sudo oaprof selftest --energy-model reads "
      "as you; oaprofd reads no client's file";
  if (!job.lend_energy) {
    skip["energy"] =
        "needs root: this oaprofd lends no energy (--energy off: RAPL is a side channel, "
        "CVE-2020-8694); sudo oaprof selftest reads it itself";
  }
  // On the simulator too: their known work is kernel_runner's, run through a profile.
  for (std::string_view check : kKnownWorkChecks) {
    skip[std::string(check)] =
        "needs root: it reads kernel_runner's known work, which sudo oaprof selftest runs as you "
        "through a profile; oaprofd starts no program for a client";
  }
  if (!job.device.spec.simulated()) {
    for (std::string_view check : kLoadChecks) {
      skip[std::string(check)] =
          "needs root: on real hardware its busy windows run under a GPU load (kernel_runner) "
          "that sudo oaprof selftest starts as you; oaprofd starts no program for a client";
    }
  }
  return skip;
}

daemon::SelftestOutcome serve_selftest(const daemon::SelftestJob& job) {
  SelftestOptions o;
  o.device = job.device;
  o.accesses = job.accesses;
  o.quick = job.quick;
  // oaprofd's own file, checked as a session's is; without one the bare counters, never a file
  // found on a search path oaprofd does not trust.
  if (job.metrics_xml.empty()) {
    o.metric_set = std::string(oa::kBuiltinMetricSetSymbol);
  } else {
    o.metrics_xml = job.metrics_xml.string();
  }
  o.energy_roots = job.energy_roots;
  o.energy_roots.gpu_pci_address =
      job.device.spec.simulated() ? "" : job.device.spec.address().str();
  o.progress = job.progress;
  o.open_device = job.open_device;
  o.skip_checks = daemon_skipped_checks(job);
  o.no_load = std::string(kNoLoad);
  const SelftestReport report = run_selftest(o);

  daemon::SelftestOutcome outcome;
  outcome.report_json = report_json(report, OAPROF_VERSION).dump();
  outcome.checks = report.checks.size();
  for (const CheckResult& r : report.checks) outcome.failed += r.verdict == Verdict::kFail;
  const ResultIdentity identity{report.device_key, report.platform, report.driver, report.kernel,
                                OAPROF_VERSION};
  try {
    outcome.kept = "result kept in " + keep_result(job.state_dir, report, identity).string();
  } catch (const std::exception& e) {
    outcome.kept = fmt::format("the result is not kept: {}", e.what());
  }
  return outcome;
}

namespace {

// The reply to the request, or the exception its error means.
void throw_selftest_refusal(const wire::Error& error) {
  switch (error.code) {
    case wire::ErrorCode::kUnknownType:
      throw base::SetupError(
          "this oaprofd does not run the selftest: upgrade oaprofd to this oaprof's version "
          "(" OAPROF_VERSION "), or run sudo oaprof selftest");
    case wire::ErrorCode::kBadRequest:
      throw std::invalid_argument("oaprofd refused the selftest: " + error.message);
    default:
      throw std::runtime_error("oaprofd's selftest: " + error.message);
  }
}

wire::SelftestReport fetch(session::DaemonClient& daemon, std::uint32_t offset) {
  const wire::Body reply = daemon.call(wire::SelftestFetch{offset});
  if (const auto* error = std::get_if<wire::Error>(&reply)) throw_selftest_refusal(*error);
  const auto* report = std::get_if<wire::SelftestReport>(&reply);
  if (report == nullptr) throw std::runtime_error("oaprofd answered a fetch with another reply");
  return *report;
}

// Waits for the checks to end, telling `progress` each as it starts; the first chunk.
wire::SelftestReport wait_for_report(session::DaemonClient& daemon,
                                     const std::function<void(std::string_view)>& progress) {
  const auto deadline = std::chrono::steady_clock::now() + kSelftestDeadline;
  std::string shown;
  for (;;) {
    wire::SelftestReport r = fetch(daemon, 0);
    if (r.done) return r;
    if (!r.check.empty() && r.check != shown && progress) progress(r.check);
    shown = r.check;
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error(fmt::format(
          "oaprofd's selftest has not ended after {} minutes (at check {}); see oaprofd's log",
          std::chrono::duration_cast<std::chrono::minutes>(kSelftestDeadline).count(), shown));
    }
    std::this_thread::sleep_for(kFetchPeriod);
  }
}

}  // namespace

nlohmann::json selftest_through_daemon(const std::string& socket, const wire::Selftest& request,
                                       const std::function<void(std::string_view)>& progress) {
  session::DaemonClient daemon(socket);
  const wire::Body started = daemon.call(request);
  if (const auto* error = std::get_if<wire::Error>(&started)) throw_selftest_refusal(*error);
  if (!std::holds_alternative<wire::Ok>(started)) {
    throw std::runtime_error("oaprofd answered the selftest with another reply");
  }
  wire::SelftestReport r = wait_for_report(daemon, progress);
  // The size came from the daemon: bounded by the decoder, and every chunk must advance.
  std::string text = r.chunk;
  while (text.size() < r.total) {
    r = fetch(daemon, static_cast<std::uint32_t>(text.size()));
    if (!r.done || r.chunk.empty() || text.size() + r.chunk.size() > r.total) {
      throw std::runtime_error("oaprofd sent its selftest report in chunks that do not add up");
    }
    text += r.chunk;
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("oaprofd's selftest report is not JSON: {}", e.what()));
  }
}

namespace {

Verdict verdict_named(const std::string& name) {
  for (const Verdict v : {Verdict::kPass, Verdict::kFail, Verdict::kSkip}) {
    if (verdict_name(v) == name) return v;
  }
  throw std::runtime_error("a check's verdict is " + name + ", not pass, fail or skip");
}

CheckResult check_from_json(const nlohmann::json& j) {
  CheckResult r{.name = j.at("name").get<std::string>(),
                .group = j.at("group").get<std::string>(),
                .assumes = j.at("assumes").get<std::string>(),
                .tolerance = j.at("tolerance").get<std::string>(),
                .verdict = verdict_named(j.at("verdict").get<std::string>()),
                .measurement = j.at("measurement").get<std::string>(),
                .reason = j.at("reason").get<std::string>()};
  for (const auto& [name, figure] : j.at("figures").items()) {
    // report_json writes a figure that is no number (NaN, an infinity) as null.
    const nlohmann::json& value = figure.at("value");
    r.figures.push_back(
        {name, value.is_null() ? std::numeric_limits<double>::quiet_NaN() : value.get<double>(),
         figure.at("unit").get<std::string>()});
  }
  return r;
}

// "8086:9a49", as report_json writes it.
std::uint16_t pci_id_from_json(const nlohmann::json& j) {
  const std::string text = j.get<std::string>();
  unsigned id = 0;
  if (text.size() != 9 || !text.starts_with("8086:") ||
      std::sscanf(text.c_str() + 5, "%4x", &id) != 1) {
    throw std::runtime_error("the device's pci_id is " + text + ", not 8086:XXXX");
  }
  return static_cast<std::uint16_t>(id);
}

FirmwareVersion firmware_from_json(const nlohmann::json& j) {
  return {.version = j.at("version").get<std::string>(),
          .path = j.at("path").get<std::string>(),
          .status = j.at("status").get<std::string>(),
          .reason = j.at("reason").get<std::string>()};
}

}  // namespace

SelftestReport report_from_json(const nlohmann::json& json) {
  try {
    if (json.at("schema_version").get<int>() != kSchemaVersion) {
      throw std::runtime_error(fmt::format("schema_version {} (this oaprof reads {})",
                                           json.at("schema_version").dump(), kSchemaVersion));
    }
    SelftestReport r;
    const nlohmann::json& device = json.at("device");
    r.device = device.at("label").get<std::string>();
    r.platform = device.at("platform").get<std::string>();
    r.pci_id = pci_id_from_json(device.at("pci_id"));
    r.simulated = device.at("simulated").get<bool>();
    const nlohmann::json& system = json.at("system");
    r.kernel = system.at("kernel").get<std::string>();
    r.driver = system.at("driver").get<std::string>();
    r.firmware = system.at("firmware").get<std::string>();
    r.guc = firmware_from_json(system.at("firmware_versions").at("guc"));
    r.huc = firmware_from_json(system.at("firmware_versions").at("huc"));
    r.accesses = json.at("accesses").get<std::vector<std::string>>();
    r.faults = json.at("sim_faults").get<std::vector<std::string>>();
    r.quick = json.at("quick").get<bool>();
    for (const nlohmann::json& check : json.at("checks"))
      r.checks.push_back(check_from_json(check));
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("not a selftest report: {}", e.what()));
  }
}

}  // namespace oaprof::run::selftest
