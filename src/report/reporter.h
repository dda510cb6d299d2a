// Output formats are one Reporter interface with one implementation per format, as in Google
// Benchmark. Reporters receive rows as launches complete and are flushed as soon as no further
// row waits, so files are complete up to the last finished launch even when the profiled program
// crashes.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oa/device_facts.h"
#include "oa/equation.h"
#include "oa/launch_record.h"
#include "oa/metric_program.h"
#include "oa/metric_set.h"
#include "power/energy_source.h"
#include "power/energy_window.h"
#include "report/selftest_flags.h"

namespace oaprof::model {
struct EnergyModel;
}  // namespace oaprof::model

namespace oaprof::report {

// Bumped whenever a JSON field changes meaning or disappears; adding fields keeps it. 2: rows
// are lists of values named by the header's "columns" (1: rows are objects); readers take both.
inline constexpr int kJsonSchemaVersion = 3;  // 3: `api` names the API, `call` the call

// What every row of a run shares about its derived metrics: their column names and which of
// them the device's variables make available. Worked out once per run (prepare_row_columns in
// report/row.h) instead of once per row, where it cost more than the equations themselves.
struct MetricColumns {
  const oa::MetricSet* metrics = nullptr;  // the set they were worked out for
  std::vector<std::string> names;
  std::vector<bool> available;
  // The set's equations compiled for the run's device: what each row evaluates.
  oa::MetricProgram program;
};

struct RunInfo {
  std::string oaprof_version;
  std::string mode = "kernel";  // kernel | app | system-wide
  // kernel mode: bracketed (snapshots around each launch) or sampled (the growth of periodic
  // reads over each launch's window); a sampled run's rows have two more columns.
  std::string attribution = "bracketed";
  std::string metric_set;      // empty: raw counters only
  std::string energy_backend;  // empty: none
  // The energy backend is the simulated RAPL tree: its figures are a model, and every row that
  // carries them is flagged energy_simulated.
  bool energy_simulated = false;
  std::string device;         // "simulated" or the PCI address
  std::string device_detail;  // "simulated KBL GT2 (24 EUs, 1150 MHz)"
  std::string platform;       // "kblgt2"
  std::string format;         // "A32u40_A4u32_B8_C8"
  std::string access;         // "mmio"
  std::string driver;         // "i915" or "xe": the kernel driver of the device; empty: offline
  int eus = 0;                // the device's (its topology), not necessarily the table's
  // The device's topology and timestamp frequency and where they came from; every row of a run
  // whose topology is the platform table's is flagged topology_from_table. Absent: no device
  // (offline work), no flag.
  std::optional<oa::DeviceFacts> facts;
  double max_freq_mhz = 0;  // the platform's nominal range
  double min_freq_mhz = 0;
  std::optional<double> start_freq_mhz;  // RPSTAT as the run began; unknown through oaprofd
  double timestamp_hz = 0;
  std::vector<std::string> command;
  // Where the run was, among the runs of a job (oaprof merge joins on them): the short host name,
  // and the MPI or Slurm rank (empty when none).
  std::string host;
  std::string rank;
  // Derived metrics: every counter of this set is evaluated on each row's deltas (null: none).
  const oa::MetricSet* metrics = nullptr;
  oa::DeviceVariables device_variables;
  // `metrics`' columns, when a reporter prepared them; rows work them out themselves otherwise.
  std::shared_ptr<const MetricColumns> metric_columns;
  // How energy windows are judged: --min-window, --igpu-power, the idle baseline.
  power::WindowOptions energy_options;
  // The checks the device's last `oaprof selftest` failed, with what each covers: rows that report
  // it are flagged selftest_failed:<check> (run/selftest_result.h). Empty: none, or no result.
  std::vector<SelftestFailure> selftest_failed;
  // --energy-model: every row also gets the energy this model gives its counters, with an error
  // bar (null: no model, no such columns).
  std::shared_ptr<const model::EnergyModel> energy_model;
};

// A row's energy by the energy model (model/energy_model.h), and how it compares with the row's
// measured energy where the row has a window long enough to be trusted.
struct ModelledEnergy {
  double energy_j = 0;
  double error_j = 0;
  double duration_s =
      0;  // the window it covers: the measured one where trusted, else the counters'

  // Why the figure is extrapolated (model::Prediction's reasons); empty: it is not.
  std::vector<std::string> extrapolated;
  // The measured energy of the same window and its error (RAPL's update period's worth of the
  // window's power); nullopt where the row has no measured window of at least --min-window.
  std::optional<double> measured_j;
  double measured_error_j = 0;
  // |measured − modelled| exceeds the two errors combined in quadrature.
  bool disagrees = false;
};

// The energy of a row's own window (possibly unavailable, with the reason), and the readings
// that bracket it, for reporters that join consecutive windows (the table's per-kernel window).
struct RowEnergy {
  power::EnergyWindow window;
  std::optional<power::EnergyReading> begin;
  std::optional<power::EnergyReading> end;
  // With RunInfo::energy_model: the row's modelled energy; nullopt without a model.
  std::optional<ModelledEnergy> modelled;
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void begin(const RunInfo& info) = 0;
  virtual void add(const oa::LaunchRecord& record, const RowEnergy& energy) = 0;
  // Pushes the rows added so far out to their file, valid as it stands; throws std::runtime_error
  // when writing failed (a full disk), so no row is lost unsaid. The profiler flushes whenever it
  // has no further row waiting.
  virtual void flush() {}
  virtual void end() = 0;
};

// Derived figures shared by every format.
double kernel_time_ns(const oa::LaunchRecord& r);  // OpenCL profiling; NaN when not profiled
std::string dims(const std::array<std::uint64_t, 3>& v, std::uint32_t work_dim);
// Flushes `out`; throws std::runtime_error naming the `what` file when the stream has failed.
void flush_or_throw(std::ostream& out, std::string_view what);

std::unique_ptr<Reporter> make_csv_reporter(std::ostream& out);
std::unique_ptr<Reporter> make_table_reporter(std::ostream& out);
// Test seam: how many durations a table from make_table_reporter keeps for its medians, all
// kernels together (one per distinct duration, however many launches came).
std::size_t table_durations_kept(const Reporter& table);
// Sends every call to each of `reporters`, in order.
std::unique_ptr<Reporter> make_tee_reporter(std::vector<std::unique_ptr<Reporter>> reporters);
// On a stream that can seek (a file) the document is valid after every row; on one that cannot (a
// pipe, FIFO or terminal: tellp() fails) it is one valid document once end() has been called.
std::unique_ptr<Reporter> make_json_reporter(std::ostream& out);
// A Perfetto trace (TrackEvent packets, docs/report.md), each row's packets whole when add()
// returns; thread and process names are read from `proc_root`/<pid>/task/<tid>/comm.
std::unique_ptr<Reporter> make_perfetto_trace_reporter(std::ostream& out,
                                                       std::string proc_root = "/proc");

}  // namespace oaprof::report
