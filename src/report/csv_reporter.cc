// CSV: one row per launch, written as each launch completes and flushed whenever no further row
// waits, so a crash of the profiled program leaves every finished row on disk. Units are in the
// column names; text cells are quoted and neutralised by report/csv.h; an empty cell means "not
// measured".
#include <ostream>
#include <span>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "report/csv.h"
#include "report/decimal_text.h"
#include "report/reporter.h"
#include "report/row.h"

namespace oaprof::report {
namespace {

// One CSV line being written, kept from row to row so that a row allocates nothing: numbers are
// formatted straight into it (a row is a hundred cells, most of them numbers). Every cell is
// followed by its comma, and the last one is dropped when the line is read: one store per cell
// instead of a test of whether it is the first.
class CsvLine {
 public:
  void clear() { text_.clear(); }
  std::string_view text() const { return {text_.data(), text_.size() == 0 ? 0 : text_.size() - 1}; }

  void add(const CellValue& value, int decimals) {
    std::visit([&](const auto& v) { append(v, decimals); }, value);
    text_.push_back(',');
  }

  // Integer cells in one go: room for the longest of each is made once, and the digits go
  // straight into it.
  void add_integers(std::span<const std::uint64_t> values, std::span<const bool> present) {
    constexpr std::size_t kCell = kMaxUintChars + 1;  // the digits and the comma
    const std::size_t size = text_.size();
    text_.reserve(size + values.size() * kCell);
    char* const begin = text_.data();
    char* at = begin + size;
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (present.empty() || present[i]) at = write_uint(at, values[i]);
      *at++ = ',';
    }
    text_.resize(static_cast<std::size_t>(at - begin));
  }

 private:
  void append(std::monostate, int) {}
  void append(std::uint64_t v, int) {
    const std::size_t size = text_.size();
    text_.reserve(size + kMaxUintChars);
    text_.resize(static_cast<std::size_t>(write_uint(text_.data() + size, v) - text_.data()));
  }
  // As "{:.{}f}" writes it: straight into the line where write_fixed reaches (every figure of a
  // row but NaN, infinities and the enormous), else by fmt; its usual precisions are compiled
  // formats, since parsing the format string took as long as the formatting.
  void append(double v, int decimals) {
    const std::size_t size = text_.size();
    text_.reserve(size + kMaxFixedChars);
    if (char* end = write_fixed(text_.data() + size, v, decimals)) {
      text_.resize(static_cast<std::size_t>(end - text_.data()));
      return;
    }
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
};

// Writes a row's cells straight into one CSV line: no Field, name or owned copy per cell.
class CsvLineSink final : public RowSink {
 public:
  void cell(std::string_view /*name*/, const CellValue& value, int decimals) override {
    line.add(value, decimals);
  }
  void integer_cells(std::span<const std::string> /*names*/, std::span<const std::uint64_t> values,
                     std::span<const bool> present) override {
    line.add_integers(values, present);
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
