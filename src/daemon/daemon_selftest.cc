// The selftest through oaprofd (DaemonService's kSelftest and kSelftestFetch): one at a time,
// holding the OA unit as a session does, run on a thread of its own (selftest_run.h) and fetched
// in chunks by the client that asked. What it may do is what oaprofd's sessions may: the served
// device, its read-outs, oaprofd's own metric files and energy policy; the checks that need more
// skip with their reason (src/run/selftest_daemon.cc).
#include <vector>

#include <fmt/format.h>

#include "daemon/daemon_service.h"
#include "gpu/counter_source.h"
#include "session/session_lock.h"
#include "session/trusted_metrics.h"

namespace oaprof::daemon {
namespace wire = ipc::wire;
using wire::ErrorCode;

namespace {

constexpr const char* kNoSelftestRunner =
    "this oaprofd does not run the selftest (it was built without it); run sudo oaprof selftest";

// The read-outs a request names: every one ("" or "all"), or one the device may have.
std::optional<std::vector<std::string>> requested_accesses(const std::string& access) {
  if (access.empty() || access == "all") return std::vector<std::string>{};
  for (const auto& entry : gpu::counter_sources()) {
    if (entry.name == access && entry.name != "sim") return std::vector<std::string>{access};
  }
  return std::nullopt;
}

}  // namespace

const SelftestRun* DaemonService::running_selftest() const {
  for (const auto& [client, run] : selftests_) {
    if (!run->done()) return run.get();
  }
  for (const auto& run : orphaned_selftests_) {
    if (!run->done()) return run.get();
  }
  return nullptr;
}

bool DaemonService::selftest_running() const { return running_selftest() != nullptr; }

void DaemonService::reap_selftests() {
  std::erase_if(orphaned_selftests_, [this](const std::unique_ptr<SelftestRun>& run) {
    if (!run->done()) return false;
    log(6, fmt::format("selftest of {} ended without its client, which went", run->holder()));
    return true;
  });
}

std::optional<wire::Error> DaemonService::refuse_selftest(std::uint64_t client,
                                                          const wire::Selftest& request) {
  if (!options_.selftest) return wire::Error{ErrorCode::kBadRequest, kNoSelftestRunner};
  if (selftests_.contains(client)) {
    return wire::Error{ErrorCode::kBadRequest,
                       "this connection's selftest has not been fetched yet; fetch its report "
                       "before asking again"};
  }
  if (session_held_by(client)) {
    return wire::Error{ErrorCode::kBadRequest,
                       "this connection holds a session; close it before the selftest"};
  }
  if (!requested_accesses(request.access)) {
    return wire::Error{ErrorCode::kBadRequest,
                       fmt::format("the selftest measures through all, mmio, rpc or perf, not "
                                   "'{}'",
                                   request.access)};
  }
  // Busy as for an open: another's session (the exporter's gives way) or selftest.
  return refuse_open(client, request.device);
}

SelftestJob DaemonService::selftest_job(const wire::Selftest& request) const {
  SelftestJob job;
  job.device = options_.device;
  job.quick = request.quick;
  job.accesses = *requested_accesses(request.access);
  job.energy_roots = options_.energy_roots;
  job.lend_energy = options_.lend_energy;
  job.state_dir = options_.state_dir;
  // The part's own file from oaprofd's directories, judged as a session's is; none found: the
  // selftest counts the bare counters and says why.
  if (const std::optional<oa::Platform> platform = served_platform()) {
    try {
      job.metrics_xml = session::choose_metric_set(*platform, "ComputeBasic", "",
                                                   options_.metrics_dirs, options_.metrics_owner)
                            .file;
    } catch (const std::exception& e) {
      log(4, fmt::format("the selftest runs without a metric set: {}", e.what()));
    }
  }
  return job;
}

wire::Body DaemonService::start_selftest(std::uint64_t client, const Peer& peer,
                                         const wire::Selftest& request) {
  if (auto refused = refuse_selftest(client, request)) return *refused;
  const std::string holder = session::holder_text(peer.uid, peer.pid) + " (oaprofd's selftest)";
  session::Unit unit;
  try {
    unit =
        session::reserve_unit(session::UnitFiles{lock_file(), state_file()}, holder,
                              options_.device, [this](const std::string& done) { log(5, done); });
  } catch (const session::UnitBusy& e) {
    return wire::Error{ErrorCode::kBusy, e.what()};
  }
  SelftestJob job = selftest_job(request);
  log(6,
      fmt::format("selftest started for {}: {}read-outs {}", holder, request.quick ? "quick, " : "",
                  request.access.empty() ? std::string("all") : request.access));
  selftests_[client] =
      std::make_unique<SelftestRun>(holder, std::move(unit), std::move(job), options_.selftest);
  return wire::Ok{};
}

wire::Body DaemonService::fetch_selftest(std::uint64_t client, const wire::SelftestFetch& request) {
  const auto it = selftests_.find(client);
  if (it == selftests_.end()) {
    return wire::Error{ErrorCode::kNoSession,
                       "no selftest on this connection: send selftest first"};
  }
  SelftestRun& run = *it->second;
  if (!run.done()) return wire::SelftestReport{false, run.check()};
  if (const auto& error = run.error()) {
    const wire::Error reply = *error;
    log(4, fmt::format("selftest of {} could not run: {}", run.holder(), reply.message));
    selftests_.erase(it);
    return reply;
  }
  const SelftestOutcome& outcome = *run.outcome();
  const std::string& text = outcome.report_json;
  if (request.offset > text.size()) {
    return wire::Error{ErrorCode::kBadRequest,
                       fmt::format("the selftest's report is {} bytes; offset {} is past its end",
                                   text.size(), request.offset)};
  }
  wire::SelftestReport reply{true, "", static_cast<std::uint32_t>(text.size()),
                             text.substr(request.offset, wire::kMaxSelftestChunkBytes)};
  if (request.offset + reply.chunk.size() == text.size()) {
    log(6, fmt::format("selftest of {} ended: {} checks, {} failed; {}", run.holder(),
                       outcome.checks, outcome.failed, outcome.kept));
    selftests_.erase(it);  // fetched to its end
  }
  return reply;
}

}  // namespace oaprof::daemon
