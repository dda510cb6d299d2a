// kernel_runner's output: one row per run as a terminal table, CSV or JSON. The table's first
// columns (kernel, global, local, iterations, repeats) are a stable shape that oaprof's pipeline
// test and scripts parse; CSV and JSON carry every statistic and, in JSON, every raw sample.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/runner.h"

namespace oaprof::bench {

enum class OutputFormat { kTable, kCsv, kJson };

class ResultWriter {
 public:
  ResultWriter(std::ostream& out, OutputFormat format, std::string device_name);
  ResultWriter(const ResultWriter&) = delete;
  ResultWriter& operator=(const ResultWriter&) = delete;

  // `fills_hw_threads`: this row's launch fills every hardware thread (sweeps mark it).
  void row(const RunResult& r, bool fills_hw_threads = false);
  void skipped(std::string_view kernel, std::string_view reason);
  // Writes what JSON holds back until the end; a table and CSV are written as rows come.
  void finish();

 private:
  void table_row(const RunResult& r, bool fills_hw_threads);
  void csv_row(const RunResult& r, bool fills_hw_threads);

  std::ostream& out_;
  OutputFormat format_;
  std::string device_name_;
  bool header_written_ = false;
  // JSON is one document, written by finish(); ordered, so fields keep the documented order.
  nlohmann::ordered_json json_results_ = nlohmann::ordered_json::array();
  nlohmann::ordered_json json_skipped_ = nlohmann::ordered_json::array();
};

}  // namespace oaprof::bench
