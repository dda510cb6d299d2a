// CSV: one row per launch, written as each launch completes and flushed whenever no further row
// waits, so a crash of the profiled program leaves every finished row on disk. Units are in the
// column names; text cells are quoted and neutralised by report/csv.h; an empty cell means "not
// measured".
#include <ostream>

#include <fmt/format.h>

#include "report/csv.h"
#include "report/reporter.h"
#include "report/row.h"

namespace oaprof::report {
namespace {

std::string cell(const Field& f) {
  struct Visitor {
    int decimals;
    std::string operator()(std::monostate) const { return {}; }
    std::string operator()(std::uint64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return fmt::format("{:.{}f}", v, decimals); }
    std::string operator()(const std::string& v) const { return csv_text(v); }
  };
  return std::visit(Visitor{f.decimals}, f.value);
}

}  // namespace

std::string csv_line(const std::vector<Field>& fields) {
  std::string line;
  for (const auto& f : fields) {
    if (!line.empty()) line += ',';
    line += cell(f);
  }
  return line;
}

namespace {

class CsvReporter final : public Reporter {
 public:
  explicit CsvReporter(std::ostream& out) : out_(out) {}

  void begin(const RunInfo& info) override {
    info_ = info;
    out_ << csv_text_line(launch_field_names(info)) << '\n';
    out_.flush();
  }

  void add(const oa::LaunchRecord& r, const RowEnergy& energy) override {
    out_ << csv_line(launch_fields(r, energy, info_)) << '\n';
  }

  void flush() override { flush_or_throw(out_, "CSV"); }
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
