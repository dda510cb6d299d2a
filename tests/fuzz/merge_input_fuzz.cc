// Fuzzes `oaprof merge`'s inputs (CSV and JSON files the user hands it): any input must parse or
// be refused with RunInputError, never crash; whatever parses must merge with itself under
// another name (or be refused as the same run twice), and go through the per-kernel figures and
// both writers.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string_view>

#include "report/merge.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace oaprof::report;
  try {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    RunTable a = parse_run_table(text, "a.csv");
    RunTable b = a;
    b.source = "b.csv";
    const MergedRuns m = merge_runs({a, b});
    const auto kernels = kernels_across_runs(m);
    std::ostringstream csv, json;
    write_merged_csv(csv, m);
    write_merged_json(json, m, kernels);
    write_kernels_table(csv, kernels, m.runs());
  } catch (const RunInputError&) {
  }
  return 0;
}
