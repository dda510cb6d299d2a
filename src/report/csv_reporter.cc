// CSV: one row per launch, written as each launch completes and flushed whenever no further row
// waits, so a crash of the profiled program leaves every finished row on disk. Units are in the
// column names; text cells are quoted and neutralised by report/csv.h; an empty cell means "not
// measured".
#include <charconv>
#include <ostream>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "report/csv.h"
#include "report/reporter.h"
#include "report/row.h"

namespace oaprof::report {
namespace {

// One CSV line being written, kept from row to row so that a row allocates nothing: numbers are
// formatted straight into it (a row is a hundred cells, most of them numbers).
class CsvLine {
 public:
  void clear() {
    text_.clear();
    cells_ = 0;
  }
  std::string_view text() const { return {text_.data(), text_.size()}; }

  void add(const CellValue& value, int decimals) {
    if (cells_++ > 0) text_.push_back(',');
    std::visit([&](const auto& v) { append(v, decimals); }, value);
  }

 private:
  void append(std::monostate, int) {}
  void append(std::uint64_t v, int) {
    constexpr std::size_t kDigits = 20;  // 2^64 - 1
    const std::size_t size = text_.size();
    text_.reserve(size + kDigits);
    char* at = text_.data() + size;
    text_.resize(size + static_cast<std::size_t>(std::to_chars(at, at + kDigits, v).ptr - at));
  }
  // As "{:.{}f}" writes it; the usual precisions are compiled formats: parsing the format
  // string took as long as the formatting.
  void append(double v, int decimals) {
    const auto out = fmt::appender(text_);
    switch (decimals) {
      case 0:
        fmt::format_to(out, FMT_COMPILE("{:.0f}"), v);
        break;
      case 1:
        fmt::format_to(out, FMT_COMPILE("{:.1f}"), v);
        break;
      case 3:
        fmt::format_to(out, FMT_COMPILE("{:.3f}"), v);
        break;
      default:
        fmt::format_to(out, "{:.{}f}", v, decimals);
    }
  }
  void append(std::string_view v, int) {
    if (csv_text_as_is(v)) {
      text_.append(v);
    } else {
      text_.append(std::string_view(csv_text(v)));
    }
  }

  fmt::memory_buffer text_;
  std::size_t cells_ = 0;
};

// Writes a row's cells straight into one CSV line: no Field, name or owned copy per cell.
class CsvLineSink final : public RowSink {
 public:
  void cell(std::string_view /*name*/, const CellValue& value, int decimals) override {
    line.add(value, decimals);
  }
  CsvLine line;
};

// A Field's value as a cell.
CellValue cell_of(const FieldValue& value) {
  return std::visit([](const auto& v) -> CellValue { return v; }, value);
}

}  // namespace

std::string csv_line(const std::vector<Field>& fields) {
  CsvLine line;
  for (const Field& f : fields) line.add(cell_of(f.value), f.decimals);
  return std::string(line.text());
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
    sink_.line.clear();
    write_launch_row(r, energy, info_, sink_);
    const std::string_view text = sink_.line.text();
    out_.write(text.data(), static_cast<std::streamsize>(text.size()));
    out_.put('\n');
  }

  void flush() override { flush_or_throw(out_, "CSV"); }
  void end() override { out_.flush(); }

 private:
  std::ostream& out_;
  RunInfo info_;
  CsvLineSink sink_;
};

}  // namespace

std::unique_ptr<Reporter> make_csv_reporter(std::ostream& out) {
  return std::make_unique<CsvReporter>(out);
}

}  // namespace oaprof::report
