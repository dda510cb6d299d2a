// CSV: one row per launch, written as each launch completes and flushed whenever no further row
// waits, so a crash of the profiled program leaves every finished row on disk. Units are in the
// column names; text cells are quoted and neutralised by report/csv.h; an empty cell means "not
// measured".
#include <cstring>
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
  }

  // Integer cells in one go: room for the longest of each is made once, and the digits go
  // straight into it.
  void add_integers(std::span<const std::uint64_t> values, std::span<const bool> present) {
    char* at = room(values.size() * (kMaxUintChars + 1));
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (present.empty() || present[i]) at = write_uint(at, values[i]);
      *at++ = ',';
    }
    finish(at);
  }

  // The metrics' cells in one go: empty where not available or divided by zero.
  void add_metrics(std::span<const oa::EquationValue> values, const std::vector<bool>& available,
                   int decimals) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      const oa::EquationValue& v = values[i];
      if (!available[i] || v.div_by_zero) {
        append(std::monostate{}, decimals);
      } else if (v.is_float) {
        append(v.f, decimals);
      } else {
        append(v.u, decimals);
      }
    }
  }

 private:
  // Room for `n` more characters, and where they go; finish() says where they ended.
  char* room(std::size_t n) {
    text_.reserve(text_.size() + n);
    return text_.data() + text_.size();
  }
  void finish(const char* end) { text_.resize(static_cast<std::size_t>(end - text_.data())); }

  // Each cell is written with its comma.
  void append(std::monostate, int) {
    char* at = room(1);
    *at++ = ',';
    finish(at);
  }
  void append(std::uint64_t v, int) {
    char* at = write_uint(room(kMaxUintChars + 1), v);
    *at++ = ',';
    finish(at);
  }
  // As "{:.{}f}" writes it: straight into the line where write_fixed reaches (every figure of a
  // row but NaN, infinities and the enormous), else by fmt; its usual precisions are compiled
  // formats, since parsing the format string took as long as the formatting.
  void append(double v, int decimals) {
    if (char* at = write_fixed(room(kMaxFixedChars + 1), v, decimals)) {
      *at++ = ',';
      finish(at);
      return;
    }
    const auto out = fmt::appender(text_);
    switch (decimals) {
      case 0:
        fmt::format_to(out, FMT_COMPILE("{:.0f},"), v);
        break;
      case 1:
        fmt::format_to(out, FMT_COMPILE("{:.1f},"), v);
        break;
      case 3:
        fmt::format_to(out, FMT_COMPILE("{:.3f},"), v);
        break;
      default:
        fmt::format_to(out, "{:.{}f},", v, decimals);
    }
  }
  void append(std::string_view v, int) {
    const std::string quoted = csv_text_as_is(v) ? std::string() : csv_text(v);
    const std::string_view text = quoted.empty() ? v : std::string_view(quoted);
    char* at = room(text.size() + 1);
    std::memcpy(at, text.data(), text.size());
    at += text.size();
    *at++ = ',';
    finish(at);
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
  void metric_cells(std::span<const std::string> /*names*/,
                    std::span<const oa::EquationValue> values, const std::vector<bool>& available,
                    int decimals) override {
    line.add_metrics(values, available, decimals);
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
