// `oaprof merge`: the outputs of many runs of one job (a file per rank or host, oaprof -o
// out-%h-%r.csv) as one table, and per-kernel figures across the runs. The inputs are the user's
// files and untrusted: each is parsed once against the bounds of run_input.h into a RunTable, and
// files that do not belong together (other columns, another metric set or format) are refused
// with the file and the difference named.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "report/run_input.h"

namespace oaprof::report {

// One input: its columns (as the CSV header or the JSON rows name them) and its rows' cells, as
// text ("" for an empty cell or null).
struct RunTable {
  std::string source;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  // From a JSON document's metadata; empty for CSV, whose columns say which set it holds.
  std::string metric_set;
  std::string format;
};

// An oaprof CSV (RFC 4180, as the CSV reporter writes it). Throws RunInputError naming `source`,
// the line and what is wrong: no header, a row with another number of cells, an unterminated
// quote, a NUL byte, a file past the bounds, no host/rank columns.
RunTable parse_run_csv(std::string_view text, const std::string& source);

// An oaprof JSON document (--json), validated by parse_run_json first. Throws RunInputError.
RunTable parse_run_table_json(std::string_view text, const std::string& source);

// CSV or JSON, by the first byte that is not white space ('{': JSON).
RunTable parse_run_table(std::string_view text, const std::string& source);

struct MergedRuns {
  std::vector<std::string> sources;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  // Which run each row is from: its host and rank, or (no rank: runs outside a job) its host and
  // file.
  std::vector<std::string> run_of_row;
  std::size_t runs() const;
};

// Every row of every table, in input order. Throws RunInputError when two tables have other
// columns, metric sets or formats, or when two files hold rows of the same host and rank.
MergedRuns merge_runs(const std::vector<RunTable>& tables);

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
