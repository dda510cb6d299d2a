// `oaprof selftest` through oaprofd, for members of its group (docs/selftest.md, "Through
// oaprofd"): both ends. oaprofd runs the checks itself with no more than its sessions grant (its
// device and read-outs, its own metric file, its energy policy; never a fault knob or a file of
// the client's), skips the rest saying they need root, keeps the result in its state directory
// as `sudo oaprof selftest` does, and sends the report back in chunks; the client prints the same
// table and writes the same --json as a local run.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "daemon/selftest_run.h"
#include "ipc/wire.h"
#include "run/selftest.h"

namespace oaprof::run::selftest {

// oaprofd's end, its DaemonService's SelftestRunner (wired by oaprofd's main): the checks run on
// `job`, the result kept in job.state_dir. Throws what run_selftest throws.
daemon::SelftestOutcome serve_selftest(const daemon::SelftestJob& job);

// The checks oaprofd does not run for a client on this job, each with the reason its skip gives.
std::map<std::string, std::string, std::less<>> daemon_skipped_checks(
    const daemon::SelftestJob& job);

// The client's end: asks the oaprofd at `socket` to run the selftest and fetches its report (the
// JSON of report_json), telling `progress` each check as the daemon starts it. Throws
// session::DaemonUnavailable when no oaprofd answers, base::SetupError for one that predates the
// selftest, std::invalid_argument for a request it refused as bad, std::runtime_error for the
// rest (busy, the device could not be opened, a report that is none), each with the daemon's
// message.
nlohmann::json selftest_through_daemon(const std::string& socket,
                                       const ipc::wire::Selftest& request,
                                       const std::function<void(std::string_view)>& progress);

// The report back from its JSON, for the table and the exit status. Throws std::runtime_error
// naming the field when it is not a report of this schema.
SelftestReport report_from_json(const nlohmann::json& json);

}  // namespace oaprof::run::selftest
