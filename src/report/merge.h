// `oaprof merge`: the outputs of many runs of one job (a file per rank or host, oaprof -o
// out-%h-%r.csv) as one table, and per-kernel figures across the runs. The inputs are the user's
// files and untrusted: each is read as a stream of rows against the bounds of run_input.h into a
// RunTable that holds its rows' text and little else (memory follows the merged output, not the
// inputs' size; an empty or degenerate row is refused where it stands), and files that do not
// belong together (other columns, another metric set or format) are refused with the file and
// the difference named.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "report/run_input.h"

namespace oaprof::report {

// Rows of cells as text ("" for an empty cell or null), all in one block: each cell's bytes and
// a NUL after it (the readers refuse cells that hold a NUL), so a row costs its text and a byte
// per cell, as it does in the merged file.
class CellRows {
 public:
  class Row {
   public:
    Row(std::string_view text, std::size_t width) : text_(text), width_(width) {}
    std::size_t size() const { return width_; }
    std::string_view operator[](std::size_t i) const;
    std::vector<std::string_view> cells() const;

   private:
    std::string_view text_;
    std::size_t width_;
  };

  explicit CellRows(std::size_t width = 0) : width_(width) {}
  // A row of width() cells, each followed by its NUL.
  void add(std::string_view cells_with_nuls);
  // Every row of `other` (of the same width) after these; `other` is left empty.
  void append(CellRows&& other);
  std::size_t size() const { return starts_.size(); }
  std::size_t width() const { return width_; }
  Row operator[](std::size_t i) const;
  bool operator==(const CellRows&) const = default;

 private:
  std::size_t width_;
  std::string text_;
  std::vector<std::size_t> starts_;
};

// One input: its columns (as the CSV header or the JSON document names them) and its rows.
struct RunTable {
  std::string source;
  std::vector<std::string> columns;
  CellRows rows;
  // From a JSON document's metadata; empty for CSV, whose columns say which set it holds.
  std::string metric_set;
  std::string format;
};

// An oaprof CSV (RFC 4180, as the CSV reporter writes it). Throws RunInputError naming `source`,
// the line and what is wrong: no header, a row with another number of cells, a row of empty
// cells (only commas) or without a kernel, an unterminated quote, a NUL byte, a file past the
// bounds, no host/rank columns.
RunTable parse_run_csv(std::string_view text, const std::string& source);

// An oaprof JSON document (--json, schema_version 1 to 3), with the bounds and checks of
// parse_run_json. Throws RunInputError.
RunTable parse_run_table_json(std::string_view text, const std::string& source);

// CSV or JSON, by the first byte that is not white space ('{': JSON).
RunTable parse_run_table(std::string_view text, const std::string& source);
// The same from the regular file at `path`, read a chunk at a time.
RunTable read_run_table(const std::string& path);

struct MergedRuns {
  std::vector<std::string> sources;
  std::vector<std::string> columns;
  CellRows rows;
  // Which run each row is from, an index into `run_names`: its host and rank, or (no rank: runs
  // outside a job) its host and file.
  std::vector<std::uint32_t> run_of_row;
  std::vector<std::string> run_names;
  std::size_t runs() const { return run_names.size(); }
};

// Every row of every table, in input order; the tables' rows move into the result. Throws
// RunInputError when two tables have other columns, metric sets or formats, or when two files
// hold rows of the same host and rank.
MergedRuns merge_runs(std::vector<RunTable> tables);

// One kernel across the runs (a run: one host and rank) that launched it.
struct KernelAcrossRuns {
  std::string kernel;
  std::uint64_t launches = 0;
  std::size_t runs = 0;
  // The run's total GPU time of the kernel, ns: the least, the median and the most of the runs.
  double gpu_ns_min = 0;
  double gpu_ns_median = 0;
  double gpu_ns_max = 0;
};

// The most total GPU time first.
std::vector<KernelAcrossRuns> kernels_across_runs(const MergedRuns& merged);

void write_merged_csv(std::ostream& out, const MergedRuns& merged);
void write_merged_json(std::ostream& out, const MergedRuns& merged,
                       const std::vector<KernelAcrossRuns>& kernels);
// The per-kernel table for a terminal.
void write_kernels_table(std::ostream& out, const std::vector<KernelAcrossRuns>& kernels,
                         std::size_t runs);

}  // namespace oaprof::report
