#include "report/merge.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/csv.h"
#include "report/json_text.h"
#include "report/text_escape.h"

namespace oaprof::report {
namespace {

using ordered_json = nlohmann::ordered_json;

RunInputError bad(const std::string& source, const std::string& why) {
  return RunInputError(fmt::format("{}: {}", source, why));
}

// Splits RFC 4180 text into records of cells, within the bounds of run_input.h; a quoted cell's
// text is read back through csv_text_read, which removes the single quote oaprof's writers put
// before a text a spreadsheet would take for a formula.
std::vector<std::vector<std::string>> csv_records(std::string_view text,
                                                  const std::string& source) {
  if (text.size() > kMaxRunInputBytes) {
    throw bad(source, fmt::format("larger than {} MiB", kMaxRunInputBytes >> 20));
  }
  if (text.find('\0') != std::string_view::npos) throw bad(source, "holds a NUL byte: not a CSV");
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string cell;
  bool quoted = false, cell_started = false, cell_quoted = false;
  std::size_t line = 1;
  const auto end_cell = [&] {
    if (cell.size() > kMaxRunText) {
      throw bad(source, fmt::format("line {}: a cell longer than {} bytes", line, kMaxRunText));
    }
    record.push_back(csv_text_read(cell, cell_quoted));
    cell.clear();
    cell_started = cell_quoted = false;
    if (record.size() > kMaxRunFields) {
      throw bad(source, fmt::format("line {}: more than {} cells", line, kMaxRunFields));
    }
  };
  const auto end_record = [&] {
    end_cell();
    records.push_back(std::move(record));
    record.clear();
    if (records.size() > kMaxRunRows + 1) {
      throw bad(source, fmt::format("more than {} rows", kMaxRunRows));
    }
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        cell += c;
        if (cell.size() > kMaxRunText) {
          throw bad(source, fmt::format("line {}: a cell longer than {} bytes", line, kMaxRunText));
        }
      }
      continue;
    }
    if (c == '"' && !cell_started) {
      quoted = cell_started = cell_quoted = true;
    } else if (c == ',') {
      end_cell();
    } else if (c == '\n') {
      end_record();
      ++line;
    } else if (c != '\r') {
      cell += c;
      cell_started = true;
    }
  }
  if (quoted) throw bad(source, fmt::format("line {}: a quote is never closed (cut short?)", line));
  if (!cell.empty() || !record.empty()) end_record();  // a last line without its newline
  return records;
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

}  // namespace

RunTable parse_run_csv(std::string_view text, const std::string& source) {
  auto records = csv_records(text, source);
  if (records.empty() || records[0].empty() || records[0][0].empty()) {
    throw bad(source, "empty: no header line");
  }
  RunTable t;
  t.source = source;
  t.columns = std::move(records[0]);
  std::set<std::string> seen;
  for (const auto& c : t.columns) {
    if (!seen.insert(c).second) throw bad(source, fmt::format("column '{}' appears twice", c));
  }
  require_join_columns(t);
  for (std::size_t i = 1; i < records.size(); ++i) {
    if (records[i].size() != t.columns.size()) {
      throw bad(source, fmt::format("row {} has {} cells, the header {} (a file cut short, or "
                                    "rows from another oaprof)",
                                    i, records[i].size(), t.columns.size()));
    }
    t.rows.push_back(std::move(records[i]));
  }
  return t;
}

RunTable parse_run_table_json(std::string_view text, const std::string& source) {
  const RunInput checked = parse_run_json(text, source);  // bounds, nesting, field types
  if (!std::holds_alternative<OaprofRun>(checked)) {
    throw bad(source, "is kernel_runner's JSON: merge takes oaprof's outputs");
  }
  const ordered_json doc = ordered_json::parse(text);
  RunTable t;
  t.source = source;
  t.metric_set = cell_text(doc.value("metric_set", ordered_json()));
  t.format = cell_text(doc.value("format", ordered_json()));
  const ordered_json& launches = doc.at("launches");
  for (const auto& launch : launches) {
    if (!launch.is_object()) throw bad(source, "a launch that is not an object");
    if (t.columns.empty()) {
      for (const auto& [key, value] : launch.items()) t.columns.push_back(key);
      require_join_columns(t);
    }
    if (launch.size() != t.columns.size()) {
      throw bad(source, fmt::format("launch {} has {} fields, the first {}", t.rows.size(),
                                    launch.size(), t.columns.size()));
    }
    std::vector<std::string> row;
    for (const std::string& c : t.columns) {
      const auto it = launch.find(c);
      if (it == launch.end()) {
        throw bad(source, fmt::format("launch {} has no '{}'", t.rows.size(), c));
      }
      row.push_back(cell_text(*it));
    }
    t.rows.push_back(std::move(row));
  }
  if (t.columns.empty()) throw bad(source, "has no launches to merge");
  return t;
}

RunTable parse_run_table(std::string_view text, const std::string& source) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{')
    return parse_run_table_json(text, source);
  return parse_run_csv(text, source);
}

MergedRuns merge_runs(const std::vector<RunTable>& tables) {
  if (tables.empty()) throw RunInputError("nothing to merge: name the files");
  MergedRuns m;
  const RunTable& first = tables.front();
  m.columns = first.columns;
  const std::size_t host = column_index(m.columns, "host"), rank = column_index(m.columns, "rank");
  std::map<std::pair<std::string, std::string>, std::string> run_of;  // (host, rank) -> file
  for (const RunTable& t : tables) {
    if (t.columns != first.columns) {
      std::size_t i = 0;
      while (i < t.columns.size() && i < first.columns.size() && t.columns[i] == first.columns[i])
        ++i;
      throw RunInputError(fmt::format(
          "{} and {} have other columns (from column {}: '{}' against '{}'): runs with other "
          "metric "
          "sets or oaprof versions cannot be merged",
          first.source, t.source, i + 1, i < first.columns.size() ? first.columns[i] : "",
          i < t.columns.size() ? t.columns[i] : ""));
    }
    for (const auto& [what, a, b] : {std::tuple{"metric set", first.metric_set, t.metric_set},
                                     std::tuple{"format", first.format, t.format}}) {
      if (!a.empty() && !b.empty() && a != b) {
        throw RunInputError(fmt::format("{} has {} {}, {} has {}: they cannot be merged",
                                        first.source, what, a, t.source, b));
      }
    }
    for (const auto& row : t.rows) {
      if (row[rank].empty()) {
        m.run_of_row.push_back(row[host] + "\n" + t.source);
        continue;
      }
      const auto [it, fresh] = run_of.emplace(std::pair{row[host], row[rank]}, t.source);
      if (!fresh && it->second != t.source) {
        throw RunInputError(
            fmt::format("{} and {} both hold rows of host '{}' rank '{}': the same run twice?",
                        it->second, t.source, row[host], row[rank]));
      }
      m.run_of_row.push_back(row[host] + "\n" + row[rank]);
    }
    if (std::find(m.sources.begin(), m.sources.end(), t.source) != m.sources.end()) {
      throw RunInputError(fmt::format("{} is named twice", t.source));
    }
    m.sources.push_back(t.source);
    m.rows.insert(m.rows.end(), t.rows.begin(), t.rows.end());
  }
  return m;
}

std::size_t MergedRuns::runs() const {
  return std::set<std::string>(run_of_row.begin(), run_of_row.end()).size();
}

std::vector<KernelAcrossRuns> kernels_across_runs(const MergedRuns& m) {
  const std::size_t kernel = column_index(m.columns, "kernel"),
                    gpu = column_index(m.columns, "gpu_time_ns");
  // kernel -> run -> (launches, GPU ns)
  std::map<std::string, std::map<std::string, std::pair<std::uint64_t, double>>> per_run;
  for (std::size_t i = 0; i < m.rows.size(); ++i) {
    const auto& row = m.rows[i];
    auto& cell = per_run[row[kernel]][m.run_of_row[i]];
    cell.first += 1;
    char* end = nullptr;
    const double ns = std::strtod(row[gpu].c_str(), &end);
    if (end != row[gpu].c_str() && ns >= 0) cell.second += ns;
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
  for (const auto& row : m.rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool number = !text_column(m.columns[i]) && csv_number_text(row[i]);
      out << (i ? "," : "") << (number ? row[i] : csv_text(row[i]));
    }
    out << "\n";
  }
}

void write_merged_json(std::ostream& out, const MergedRuns& m,
                       const std::vector<KernelAcrossRuns>& kernels) {
  ordered_json doc;
  doc["merged_from"] = m.sources;
  doc["launches"] = ordered_json::array();
  for (const auto& row : m.rows) {
    ordered_json launch = ordered_json::object();
    for (std::size_t i = 0; i < m.columns.size(); ++i) {
      const std::string& v = row[i];
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
