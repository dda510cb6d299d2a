// CSV: one row per launch, written as each launch completes and flushed whenever no further row
// waits, so a crash of the profiled program leaves every finished row on disk. Units are in the
// column names; text cells are quoted and neutralised by report/csv.h; an empty cell means "not
// measured".
#include <iterator>
#include <ostream>

#include <fmt/format.h>

#include "report/csv.h"
#include "report/reporter.h"
#include "report/row.h"

namespace oaprof::report {
namespace {

// Appends `f`'s cell to `line`: numbers formatted in place, text through csv_text.
void append_cell(const Field& f, std::string& line) {
  struct Visitor {
    int decimals;
    std::string& line;
    void operator()(std::monostate) const {}
    void operator()(std::uint64_t v) const { fmt::format_to(std::back_inserter(line), "{}", v); }
    void operator()(double v) const {
      fmt::format_to(std::back_inserter(line), "{:.{}f}", v, decimals);
    }
    void operator()(const std::string& v) const { line += csv_text(v); }
  };
  std::visit(Visitor{f.decimals, line}, f.value);
}

}  // namespace

std::string csv_line(const std::vector<Field>& fields) {
  std::string line;
  line.reserve(fields.size() * 8);
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line += ',';
    append_cell(fields[i], line);
  }
  return line;
}

namespace {

class CsvReporter final : public Reporter {
 public:
  explicit CsvReporter(std::ostream& out) : out_(out) {}

  void begin(const RunInfo& info) override {
    info_ = info;
    prepare_row_columns(info_);
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
