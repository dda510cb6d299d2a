// The inputs of `oaprof report`: JSON documents written by `oaprof --json` and by
// `kernel_runner --json`. They come from the user and are untrusted: a document is read as a
// stream of rows, validated once against bounds, and handed back as plain values the report code
// trusts; a row keeps only the figures the report draws, so memory follows the report, not the
// file.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace oaprof::report {

// What failed, where (the file and the field) and what to do.
class RunInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// Throws RunInputError saying "<source>: <what>".
[[noreturn]] void fail_input(const std::string& source, const std::string& what);

inline constexpr std::size_t kMaxRunInputBytes = std::size_t{256} << 20;
inline constexpr std::size_t kMaxRunRows = 1'000'000;
inline constexpr std::size_t kMaxRunFields = 1024;      // per row
inline constexpr std::size_t kMaxRunRowValues = 4096;   // per JSON row, nested values included
inline constexpr std::size_t kMaxRunMetaValues = 4096;  // in a JSON document outside its rows
inline constexpr std::size_t kMaxRunText = 4096;        // per string
inline constexpr int kMaxRunNesting = 32;

// Whether the roofline reads this numeric column of a launch (roofline_model.cc: FPU activity
// and clocks for FLOPs, GTI bytes or shader messages for bytes); a launch keeps only these.
bool roofline_number(std::string_view column);

// One row of oaprof's JSON: the fields the report reads by name, and the numeric fields the
// roofline reads (roofline_number), by column name.
struct OaprofLaunch {
  std::string kernel;
  std::string global_size;
  std::string local_size;
  std::optional<double> kernel_ns;
  std::optional<double> gpu_time_ns;
  std::optional<double> igpu_power_w;
  std::optional<double> energy_model_j;  // --energy-model's figure for the row
  std::optional<double> window_ns;
  std::string flags;
  std::map<std::string, double> numbers;
};

struct OaprofRun {
  std::string source;
  std::string oaprof_version;
  std::string device;  // "simulated" or a PCI address
  std::string device_detail;
  std::string platform;
  std::string mode;
  std::string access;
  std::string metric_set;
  std::string energy_backend;
  int eus = 0;
  std::optional<int> subslices;  // from the device's topology, when the run had one
  double max_freq_mhz = 0;
  double min_freq_mhz = 0;
  std::optional<double> start_freq_mhz;
  double timestamp_hz = 0;
  std::vector<OaprofLaunch> launches;
  bool simulated() const { return device == "simulated"; }
};

// One row of kernel_runner's JSON.
struct RunnerResult {
  std::string kernel;
  std::string variant;
  double global = 0;
  double local = 0;
  double size_bytes = 0;
  double median_ns = 0;
  double work = 0;  // operations, or bytes moved, or accesses
  double rate = 0;  // in `unit`
  std::string unit;
  bool fills_hw_threads = false;
};

struct RunnerRun {
  std::string source;
  std::string device;
  std::vector<RunnerResult> results;
};

using RunInput = std::variant<OaprofRun, RunnerRun>;

// Reads schema_version 1 (rows as objects) and 2 or 3 (a "columns" list and rows as lists of
// values). Throws RunInputError naming `source` and the offending row and field.
RunInput parse_run_json(std::string_view text, const std::string& source);

// The same from the regular file at `path`, read a chunk at a time, at most kMaxRunInputBytes;
// throws RunInputError saying why not (missing, a FIFO or device, unreadable, invalid).
RunInput read_run_input(const std::string& path);

}  // namespace oaprof::report
