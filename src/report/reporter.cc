#include "report/reporter.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <ostream>
#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::report {

double kernel_time_ns(const oa::LaunchRecord& r) {
  if (!r.launch.profiled || r.launch.end_ns < r.launch.start_ns) return std::nan("");
  return static_cast<double>(r.launch.end_ns - r.launch.start_ns);
}

std::string dims(const std::array<std::uint64_t, 3>& v, std::uint32_t work_dim) {
  std::string s;
  for (std::uint32_t i = 0; i < work_dim && i < 3; ++i) {
    if (i) s += 'x';
    s += std::to_string(v[i]);
  }
  return s;
}

void flush_or_throw(std::ostream& out, std::string_view what) {
  errno = 0;
  out.flush();
  if (!out) {
    const int err = errno;
    throw std::runtime_error(fmt::format(
        "writing the {} file failed{}{}; rows from here on are not saved (free some space, or "
        "write elsewhere with -o/--json)",
        what, err ? ": " : "", err ? std::strerror(err) : ""));
  }
}

namespace {

class TeeReporter final : public Reporter {
 public:
  explicit TeeReporter(std::vector<std::unique_ptr<Reporter>> reporters)
      : reporters_(std::move(reporters)) {}
  void begin(const RunInfo& info) override {
    for (auto& r : reporters_) r->begin(info);
  }
  void add(const oa::LaunchRecord& record, const RowEnergy& energy) override {
    for (auto& r : reporters_) r->add(record, energy);
  }
  void flush() override {
    for (auto& r : reporters_) r->flush();
  }
  void end() override {
    for (auto& r : reporters_) r->end();
  }

 private:
  std::vector<std::unique_ptr<Reporter>> reporters_;
};

}  // namespace

std::unique_ptr<Reporter> make_tee_reporter(std::vector<std::unique_ptr<Reporter>> reporters) {
  return std::make_unique<TeeReporter>(std::move(reporters));
}

}  // namespace oaprof::report
