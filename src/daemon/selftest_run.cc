#include "daemon/selftest_run.h"

#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace oaprof::daemon {
namespace wire = ipc::wire;

namespace {

// Thrown by the progress callback of a cancelled run: the checks end where they are.
class Cancelled : public std::runtime_error {
 public:
  Cancelled()
      : std::runtime_error("the selftest was cancelled: its client went, or oaprofd stops") {}
};

}  // namespace

SelftestRun::SelftestRun(std::string holder, session::Unit unit, SelftestJob job,
                         const SelftestRunner& runner)
    : holder_(std::move(holder)), unit_(std::move(unit)) {
  thread_ =
      std::thread([this, job = std::move(job), runner]() mutable { run(std::move(job), runner); });
}

SelftestRun::~SelftestRun() {
  cancel();
  if (thread_.joinable()) thread_.join();
}

bool SelftestRun::done() const {
  std::lock_guard lock(mu_);
  return done_;
}

std::string SelftestRun::check() const {
  std::lock_guard lock(mu_);
  return check_;
}

void SelftestRun::run(SelftestJob job, const SelftestRunner& runner) {
  job.progress = [this](std::string_view check) {
    if (cancelled_) throw Cancelled();
    std::lock_guard lock(mu_);
    check_ = std::string(check);
  };
  job.open_device = [this](gpu::DeviceOptions device) {
    return session::open_journaled(unit_, std::move(device));
  };
  std::optional<SelftestOutcome> outcome;
  std::optional<wire::Error> error;
  try {
    outcome = runner(job);
    if (outcome->report_json.size() > wire::kMaxSelftestReportBytes) {
      error = wire::Error{wire::ErrorCode::kDeviceError,
                          fmt::format("the selftest's report is {} bytes, more than the {} "
                                      "oaprofd sends; run sudo oaprof selftest",
                                      outcome->report_json.size(), wire::kMaxSelftestReportBytes)};
      outcome.reset();
    }
  } catch (const std::invalid_argument& e) {
    error = wire::Error{wire::ErrorCode::kBadRequest, e.what()};
  } catch (const std::exception& e) {
    error = wire::Error{wire::ErrorCode::kDeviceError, e.what()};
  }
  // The runner closed the device, each check having restored what it programmed: the state
  // file goes, then the lock, before the client may see the run done and open a session.
  unit_.mark_restored();
  unit_ = session::Unit{};
  std::lock_guard lock(mu_);
  outcome_ = std::move(outcome);
  error_ = std::move(error);
  done_ = true;
}

}  // namespace oaprof::daemon
