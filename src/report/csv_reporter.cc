// CSV: one row per launch, written and flushed as each launch completes. Units are in the column
// names. Fields that need it are quoted as RFC 4180 says.
#include <cmath>
#include <ostream>

#include <fmt/format.h>

#include "report/reporter.h"

namespace oaprof::report {
namespace {

std::string quote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) {
    if (ch == '"') q += '"';
    q += ch;
  }
  return q + '"';
}

class CsvReporter final : public Reporter {
 public:
  explicit CsvReporter(std::ostream& out) : out_(out) {}

  void begin(const RunInfo& info) override {
    info_ = info;
    out_ << "launch,pid,kernel,work_dim,global_size,local_size,kernel_ns,gpu_time_ns,gpu_ticks,"
            "avg_freq_mhz";
    for (int i = 0; i < oa::kNumA; ++i) out_ << ",A" << i;
    for (int i = 0; i < oa::kNumB; ++i) out_ << ",B" << i;
    for (int i = 0; i < oa::kNumC; ++i) out_ << ",C" << i;
    out_ << ",device,flags\n";
    out_.flush();
  }

  void add(const oa::LaunchRecord& r) override {
    const auto& l = r.launch;
    const double kns = kernel_time_ns(r);
    std::string line = fmt::format(
        "{},{},{},{},{},{},{},{:.0f},{},{:.1f}", r.index, r.pid, quote(l.kernel_name), l.work_dim,
        dims(l.global, l.work_dim),
        l.local[0] == 0 ? std::string() : dims(l.local, l.work_dim),
        std::isnan(kns) ? std::string() : fmt::format("{:.0f}", kns),
        oa::gpu_time_ns(r.deltas, info_.timestamp_hz),
        r.deltas.has_gpu_ticks ? std::to_string(r.deltas.gpu_ticks) : std::string(),
        oa::average_frequency_mhz(r.deltas, info_.timestamp_hz));
    for (int i = 0; i < oa::kNumA; ++i) {
      line += r.deltas.a_present[i] ? fmt::format(",{}", r.deltas.a[i]) : std::string(",");
    }
    for (auto v : r.deltas.b) line += fmt::format(",{}", v);
    for (auto v : r.deltas.c) line += fmt::format(",{}", v);
    std::string flags;
    for (const auto& f : r.flags) flags += (flags.empty() ? "" : ";") + f;
    line += fmt::format(",{},{}\n", quote(info_.device), quote(flags));
    out_ << line;
    out_.flush();  // a crash of the profiled program must leave every finished row on disk
  }

  void end() override { out_.flush(); }

 private:
  std::ostream& out_;
  RunInfo info_;
};

}  // namespace

std::unique_ptr<Reporter> make_csv_reporter(std::ostream& out) {
  return std::make_unique<CsvReporter>(out);
}

}  // namespace oaprof::report
