#include "report/merge.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/csv.h"
#include "report/json_text.h"
#include "report/run_bytes.h"
#include "report/run_json_stream.h"
#include "report/text_escape.h"

namespace oaprof::report {
namespace {

using ordered_json = nlohmann::ordered_json;

RunInputError bad(const std::string& source, const std::string& why) {
  return RunInputError(fmt::format("{}: {}", source, why));
}

// Splits RFC 4180 text into records as its chunks arrive, within the bounds of run_input.h; a
// quoted cell's text is read back through csv_text_read, which removes the single quote oaprof's
// writers put before a text a spreadsheet would take for a formula. Each record goes to
// `on_record` as its cells, each followed by a NUL, and is then forgotten.
class CsvRecords {
 public:
  using OnRecord = std::function<void(std::string_view cells, std::size_t count, std::size_t line)>;
  CsvRecords(const std::string& source, OnRecord on_record)
      : source_(source), on_record_(std::move(on_record)) {}

  void feed(std::string_view chunk) {
    for (const char c : chunk) take(c);
  }
  void finish() {
    if (quote_pending_) quoted_ = quote_pending_ = false;  // the text ends with a closing quote
    if (quoted_)
      throw bad(source_, fmt::format("line {}: a quote is never closed (cut short?)", line_));
    if (cell_started_ || count_ > 0) end_record();  // a last line without its newline
  }

 private:
  void take(char c) {
    if (c == '\0') throw bad(source_, fmt::format("line {}: holds a NUL byte: not a CSV", line_));
    if (quote_pending_) {  // a quote inside a quoted cell: doubled, or the cell's end
      quote_pending_ = false;
      if (c == '"') return add_char('"');
      quoted_ = false;
    }
    if (quoted_) {
      if (c == '"') {
        quote_pending_ = true;
        return;
      }
      if (c == '\n') ++line_;
      return add_char(c);
    }
    if (c == '"' && !cell_started_) {
      quoted_ = cell_started_ = cell_quoted_ = true;
    } else if (c == ',') {
      end_cell();
    } else if (c == '\n') {
      end_record();
      ++line_;
      record_line_ = line_;
    } else if (c != '\r') {
      add_char(c);
      cell_started_ = true;
    }
  }
  void add_char(char c) {
    cell_ += c;
    if (cell_.size() > kMaxRunText) {
      throw bad(source_, fmt::format("line {}: a cell longer than {} bytes", line_, kMaxRunText));
    }
  }
  void end_cell() {
    record_ += csv_text_read(cell_, cell_quoted_);
    record_ += '\0';
    cell_.clear();
    cell_started_ = cell_quoted_ = false;
    if (++count_ > kMaxRunFields) {
      throw bad(source_, fmt::format("line {}: more than {} cells", line_, kMaxRunFields));
    }
  }
  void end_record() {
    end_cell();
    if (++records_ > kMaxRunRows + 1)
      throw bad(source_, fmt::format("more than {} rows", kMaxRunRows));
    on_record_(record_, count_, record_line_);
    record_.clear();
    count_ = 0;
  }

  const std::string& source_;
  OnRecord on_record_;
  std::string cell_, record_;
  std::size_t count_ = 0, records_ = 0, line_ = 1, record_line_ = 1;
  bool quoted_ = false, quote_pending_ = false, cell_started_ = false, cell_quoted_ = false;
};

std::vector<std::string> split_cells(std::string_view cells) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < cells.size();) {
    const std::size_t end = cells.find('\0', at);
    out.emplace_back(cells.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

void require_join_columns(const RunTable& t) {
  for (const char* c : {"kernel", "gpu_time_ns", "host", "rank"}) {
    if (std::find(t.columns.begin(), t.columns.end(), c) == t.columns.end()) {
      throw bad(t.source, fmt::format("has no '{}' column: not the output of an oaprof run (one "
                                      "older than host and rank columns cannot be merged)",
                                      c));
    }
  }
}

std::size_t column_index(const std::vector<std::string>& columns, std::string_view name) {
  return static_cast<std::size_t>(std::find(columns.begin(), columns.end(), name) -
                                  columns.begin());
}

// Columns whose cells are text even when they read as a number (a host "1", a rank "0"); the
// others' cells that read as numbers are numbers.
bool text_column(std::string_view column) {
  return column == "rank" || column == "host" || column == "kernel";
}

std::string cell_text(const ordered_json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  return json_text(v);
}

// A data row's checks before it is kept: a row of empty cells (only commas, or nulls) or one
// without its kernel is no launch, and keeping it would let a file of separators alone cost
// memory for nothing.
void check_row(const RunTable& t, const std::vector<std::string_view>& cells,
               const std::string& where) {
  if (std::all_of(cells.begin(), cells.end(), [](std::string_view c) { return c.empty(); })) {
    throw bad(t.source, fmt::format("{} is empty (only separators): expected a launch with its "
                                    "kernel, host and rank (a file cut short or forged?)",
                                    where));
  }
  if (cells[column_index(t.columns, "kernel")].empty()) {
    throw bad(t.source, fmt::format("{} has no kernel: expected a launch with its kernel", where));
  }
}

void set_columns(RunTable& t, std::vector<std::string> columns) {
  std::set<std::string> seen;
  for (const auto& c : columns) {
    if (!seen.insert(c).second) throw bad(t.source, fmt::format("column '{}' appears twice", c));
  }
  t.columns = std::move(columns);
  require_join_columns(t);
  t.rows = CellRows(t.columns.size());
}

RunTable csv_table(RunBytes& bytes) {
  RunTable t;
  t.source = bytes.source();
  std::size_t row = 0;
  CsvRecords records(t.source, [&](std::string_view cells, std::size_t count, std::size_t line) {
    if (t.columns.empty()) {
      if (cells.empty() || cells.front() == '\0') throw bad(t.source, "empty: no header line");
      return set_columns(t, split_cells(cells));
    }
    ++row;
    if (count != t.columns.size()) {
      throw bad(t.source, fmt::format("line {}: row {} has {} cells, the header {} (a file cut "
                                      "short, or rows from another oaprof)",
                                      line, row, count, t.columns.size()));
    }
    t.rows.add(cells);
    check_row(t, t.rows[t.rows.size() - 1].cells(), fmt::format("line {}: row {}", line, row));
  });
  for (std::string_view chunk = bytes.next_chunk(); !chunk.empty(); chunk = bytes.next_chunk())
    records.feed(chunk);
  records.finish();
  if (t.columns.empty()) throw bad(t.source, "empty: no header line");
  return t;
}

// A JSON value as a cell: text as it is, numbers and objects as JSON text; a NUL (\u0000) is
// refused, as in a CSV.
void add_cell(std::string& cells, const ordered_json& v, const RunTable& t, std::size_t row) {
  const std::size_t at = cells.size();
  if (v.is_string()) {
    cells += v.get_ref<const std::string&>();
  } else if (!v.is_null()) {
    cells += json_text(v);
  }
  if (cells.find('\0', at) != std::string::npos) {
    throw bad(t.source, fmt::format("launch {} holds a NUL character: not oaprof's output", row));
  }
  cells += '\0';
}

void add_json_row(RunTable& t, const ordered_json& launch, std::size_t index) {
  if (t.columns.empty()) {
    std::vector<std::string> columns;
    for (const auto& [key, value] : launch.items()) columns.push_back(key);
    set_columns(t, std::move(columns));
  }
  if (launch.size() != t.columns.size()) {
    throw bad(t.source, fmt::format("launch {} has {} fields, the first {}", index, launch.size(),
                                    t.columns.size()));
  }
  std::string cells;
  for (const std::string& c : t.columns) {
    const auto it = launch.find(c);
    if (it == launch.end()) throw bad(t.source, fmt::format("launch {} has no '{}'", index, c));
    add_cell(cells, *it, t, index);
  }
  t.rows.add(cells);
  check_row(t, t.rows[t.rows.size() - 1].cells(), fmt::format("launch {}", index));
}

RunTable json_table(RunBytes& bytes) {
  RunTable t;
  t.source = bytes.source();
  const ordered_json meta =
      stream_run_json(bytes, [&](std::string_view array, const ordered_json& row, std::size_t i) {
        if (array != "launches") {
          throw bad(t.source, "is kernel_runner's JSON: merge takes oaprof's outputs");
        }
        add_json_row(t, row, i);
      });
  if (meta.contains("results")) {
    throw bad(t.source, "is kernel_runner's JSON: merge takes oaprof's outputs");
  }
  if (!meta.contains("launches") || !meta["launches"].is_array()) {
    throw bad(t.source, "is not oaprof's JSON (no \"launches\"): merge takes oaprof's outputs");
  }
  require_schema_version(meta, t.source);
  t.metric_set = cell_text(meta.value("metric_set", ordered_json()));
  t.format = cell_text(meta.value("format", ordered_json()));
  if (t.columns.empty()) throw bad(t.source, "has no launches to merge");
  return t;
}

RunTable run_table(RunBytes& bytes) {
  const std::string_view start = bytes.peek();
  const auto first = start.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && start[first] == '{') return json_table(bytes);
  return csv_table(bytes);
}

}  // namespace

std::string_view CellRows::Row::operator[](std::size_t i) const {
  std::size_t at = 0;
  for (; i > 0; --i) at = text_.find('\0', at) + 1;
  return text_.substr(at, text_.find('\0', at) - at);
}

std::vector<std::string_view> CellRows::Row::cells() const {
  std::vector<std::string_view> out;
  out.reserve(width_);
  for (std::size_t at = 0; at < text_.size();) {
    const std::size_t end = text_.find('\0', at);
    out.push_back(text_.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

void CellRows::add(std::string_view cells_with_nuls) {
  starts_.push_back(text_.size());
  text_ += cells_with_nuls;
}

void CellRows::append(CellRows&& other) {
  for (const std::size_t start : other.starts_) starts_.push_back(text_.size() + start);
  text_ += other.text_;
  other = CellRows(other.width_);
}

CellRows::Row CellRows::operator[](std::size_t i) const {
  const std::size_t end = i + 1 < starts_.size() ? starts_[i + 1] : text_.size();
  return Row(std::string_view(text_).substr(starts_[i], end - starts_[i]), width_);
}

RunTable parse_run_csv(std::string_view text, const std::string& source) {
  RunBytes bytes(text, source);
  return csv_table(bytes);
}

RunTable parse_run_table_json(std::string_view text, const std::string& source) {
  RunBytes bytes(text, source);
  return json_table(bytes);
}

RunTable parse_run_table(std::string_view text, const std::string& source) {
  RunBytes bytes(text, source);
  return run_table(bytes);
}

RunTable read_run_table(const std::string& path) {
  RunBytes bytes = RunBytes::open_file(path);
  return run_table(bytes);
}

namespace {

void require_same_columns(const RunTable& first, const RunTable& t) {
  if (t.columns == first.columns) return;
  std::size_t i = 0;
  while (i < t.columns.size() && i < first.columns.size() && t.columns[i] == first.columns[i]) ++i;
  throw RunInputError(fmt::format(
      "{} and {} have other columns (from column {}: '{}' against '{}'): runs with other metric "
      "sets or oaprof versions cannot be merged",
      first.source, t.source, i + 1, i < first.columns.size() ? first.columns[i] : "",
      i < t.columns.size() ? t.columns[i] : ""));
}

void require_same_metadata(const RunTable& first, const RunTable& t) {
  for (const auto& [what, a, b] : {std::tuple{"metric set", first.metric_set, t.metric_set},
                                   std::tuple{"format", first.format, t.format}}) {
    if (!a.empty() && !b.empty() && a != b) {
      throw RunInputError(fmt::format("{} has {} {}, {} has {}: they cannot be merged",
                                      first.source, what, a, t.source, b));
    }
  }
}

// Each row's run, named once: (host, rank), or (host, file) outside a job.
class RunIndex {
 public:
  RunIndex(MergedRuns& m, std::size_t host, std::size_t rank) : m_(m), host_(host), rank_(rank) {}

  void add_rows_of(const RunTable& t) {
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      const auto row = t.rows[i];
      const std::string host(row[host_]), rank(row[rank_]);
      if (!rank.empty()) {
        const auto [it, fresh] = file_of_.emplace(std::pair{host, rank}, t.source);
        if (!fresh && it->second != t.source) {
          throw RunInputError(
              fmt::format("{} and {} both hold rows of host '{}' rank '{}': the same run twice?",
                          it->second, t.source, host, rank));
        }
      }
      const std::string name = host + "\n" + (rank.empty() ? t.source : rank);
      const auto [it, fresh] = index_.emplace(name, static_cast<std::uint32_t>(index_.size()));
      if (fresh) m_.run_names.push_back(name);
      m_.run_of_row.push_back(it->second);
    }
  }

 private:
  MergedRuns& m_;
  std::size_t host_, rank_;
  std::map<std::pair<std::string, std::string>, std::string> file_of_;  // (host, rank) -> file
  std::map<std::string, std::uint32_t> index_;
};

}  // namespace

MergedRuns merge_runs(std::vector<RunTable> tables) {
  if (tables.empty()) throw RunInputError("nothing to merge: name the files");
  MergedRuns m;
  const RunTable& first = tables.front();
  m.columns = first.columns;
  m.rows = CellRows(m.columns.size());
  RunIndex runs(m, column_index(m.columns, "host"), column_index(m.columns, "rank"));
  for (RunTable& t : tables) {
    require_same_columns(first, t);
    require_same_metadata(first, t);
    runs.add_rows_of(t);
    if (std::find(m.sources.begin(), m.sources.end(), t.source) != m.sources.end()) {
      throw RunInputError(fmt::format("{} is named twice", t.source));
    }
    m.sources.push_back(t.source);
    m.rows.append(std::move(t.rows));  // each table's rows are freed as they move
  }
  return m;
}

std::vector<KernelAcrossRuns> kernels_across_runs(const MergedRuns& m) {
  const std::size_t kernel = column_index(m.columns, "kernel"),
                    gpu = column_index(m.columns, "gpu_time_ns");
  // kernel -> run -> (launches, GPU ns)
  std::map<std::string, std::map<std::uint32_t, std::pair<std::uint64_t, double>>> per_run;
  for (std::size_t i = 0; i < m.rows.size(); ++i) {
    const auto cells = m.rows[i].cells();
    auto& cell = per_run[std::string(cells[kernel])][m.run_of_row[i]];
    cell.first += 1;
    const std::string ns_text(cells[gpu]);
    char* end = nullptr;
    const double ns = std::strtod(ns_text.c_str(), &end);
    if (end != ns_text.c_str() && ns >= 0) cell.second += ns;
  }
  std::vector<KernelAcrossRuns> out;
  for (const auto& [name, runs] : per_run) {
    KernelAcrossRuns k;
    k.kernel = name;
    k.runs = runs.size();
    std::vector<double> totals;
    for (const auto& [run, v] : runs) {
      k.launches += v.first;
      totals.push_back(v.second);
    }
    std::sort(totals.begin(), totals.end());
    k.gpu_ns_min = totals.front();
    k.gpu_ns_max = totals.back();
    const std::size_t n = totals.size();
    k.gpu_ns_median = n % 2 ? totals[n / 2] : (totals[n / 2 - 1] + totals[n / 2]) / 2;
    out.push_back(std::move(k));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.gpu_ns_median * static_cast<double>(a.runs) >
           b.gpu_ns_median * static_cast<double>(b.runs);
  });
  return out;
}

// The inputs' cells came back as text: a number is written as it was read (a negative figure
// stays a number), anything else as text, neutralised as every oaprof CSV's text is.
void write_merged_csv(std::ostream& out, const MergedRuns& m) {
  out << csv_text_line(m.columns) << "\n";
  for (std::size_t r = 0; r < m.rows.size(); ++r) {
    const auto row = m.rows[r].cells();
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool number = !text_column(m.columns[i]) && csv_number_text(row[i]);
      out << (i ? "," : "") << (number ? std::string(row[i]) : csv_text(row[i]));
    }
    out << "\n";
  }
}

void write_merged_json(std::ostream& out, const MergedRuns& m,
                       const std::vector<KernelAcrossRuns>& kernels) {
  ordered_json doc;
  doc["merged_from"] = m.sources;
  doc["launches"] = ordered_json::array();
  for (std::size_t r = 0; r < m.rows.size(); ++r) {
    const auto row = m.rows[r].cells();
    ordered_json launch = ordered_json::object();
    for (std::size_t i = 0; i < m.columns.size(); ++i) {
      const std::string v(row[i]);
      char* end = nullptr;
      const double d = std::strtod(v.c_str(), &end);
      const bool number = !v.empty() && end == v.c_str() + v.size() && !text_column(m.columns[i]);
      launch[m.columns[i]] = v.empty() ? ordered_json()
                             : number  ? ordered_json(d)
                                       : ordered_json(v);
    }
    doc["launches"].push_back(std::move(launch));
  }
  doc["kernels"] = ordered_json::array();
  for (const auto& k : kernels) {
    doc["kernels"].push_back({{"kernel", k.kernel},
                              {"launches", k.launches},
                              {"runs", k.runs},
                              {"gpu_ns_min", k.gpu_ns_min},
                              {"gpu_ns_median", k.gpu_ns_median},
                              {"gpu_ns_max", k.gpu_ns_max}});
  }
  out << json_text(doc, 1) << "\n";
}

void write_kernels_table(std::ostream& out, const std::vector<KernelAcrossRuns>& kernels,
                         std::size_t runs) {
  out << fmt::format("{:<32} {:>9} {:>6} {:>14} {:>14} {:>14}\n", "kernel", "launches",
                     fmt::format("runs/{}", runs), "gpu_ms_min", "gpu_ms_median", "gpu_ms_max");
  for (const auto& k : kernels) {
    // The kernel's name came from a program through a file: its control bytes are shown.
    out << fmt::format("{:<32} {:>9} {:>6} {:>14.3f} {:>14.3f} {:>14.3f}\n",
                       visible_text(k.kernel.substr(0, 32)), k.launches, k.runs, k.gpu_ns_min / 1e6,
                       k.gpu_ns_median / 1e6, k.gpu_ns_max / 1e6);
  }
}

}  // namespace oaprof::report
