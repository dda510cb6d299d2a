// The fields of one launch row, in output order, with their types: the single definition that the
// CSV and JSON reporters both write, so the two formats cannot drift apart.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "oa/launch_record.h"
#include "report/reporter.h"

namespace oaprof::report {

// The flag on every row of a run whose topology is the platform table's, not the device's.
inline constexpr const char* kTopologyFromTableFlag = "topology_from_table";

// Empty (std::monostate) means "not measured": an empty CSV cell, a JSON null.
using FieldValue = std::variant<std::monostate, std::uint64_t, double, std::string>;

struct Field {
  std::string name;  // with its unit, e.g. kernel_ns
  FieldValue value;
  int decimals = 0;  // for doubles in text formats
};

// A cell as a row hands it to a RowSink: FieldValue's alternatives in the same order, its text
// borrowed for the call only.
using CellValue = std::variant<std::monostate, std::uint64_t, double, std::string_view>;

// Where a row's cells go, in output order: kept as Fields (launch_fields), or written straight
// out by a format that needs neither names nor owned copies (the CSV reporter), which spares
// every row a hundred strings.
class RowSink {
 public:
  virtual ~RowSink() = default;
  // `name` (with its unit) and the cell; `decimals` for doubles in text formats.
  virtual void cell(std::string_view name, const CellValue& value, int decimals) = 0;
  void add(std::string_view name, const CellValue& value, int decimals = 0) {
    cell(name, value, decimals);
  }
  // A run of integer cells, `names[i]` holding `values[i]`, empty where `present[i]` is false
  // (every one present when `present` is empty): the raw counters, some fifty a row. The default
  // hands them to cell() one by one; a sink that writes them in one go (CSV) overrides it.
  virtual void integer_cells(std::span<const std::string> names,
                             std::span<const std::uint64_t> values,
                             std::span<const bool> present = {});
  // The derived metrics' cells, `decimals` for doubles: each empty where the device does not
  // have it (`available`) or its equation divided by zero. The default hands them to cell().
  virtual void metric_cells(std::span<const std::string> names,
                            std::span<const oa::EquationValue> values,
                            const std::vector<bool>& available, int decimals);
  // The derived metrics' values, kept between rows so that a row allocates none.
  std::vector<oa::EquationValue> metric_values;
};

// Hands the row of `record` to `sink`, cell by cell: the one definition of a row, which
// launch_fields and every reporter go through.
void write_launch_row(const oa::LaunchRecord& record, const RowEnergy& energy, const RunInfo& info,
                      RowSink& sink);

// The row's `launch`: the program's own index of the launch (--launch-skip N starts at N), or
// for a row that is no launch of a program (an interval, the whole application) its sequence
// number in the run.
std::uint64_t launch_ordinal(const oa::LaunchRecord& record);

std::vector<Field> launch_fields(const oa::LaunchRecord& record, const RowEnergy& energy,
                                 const RunInfo& info);

// Works out `info`'s metric columns once (RunInfo::metric_columns), for a reporter's begin():
// every row of the run then reuses them.
void prepare_row_columns(RunInfo& info);

// The column names, the same for every row of a run.
std::vector<std::string> launch_field_names(const RunInfo& info = {});

// The names of the derived metrics' columns among them (the set's counters), in order.
std::vector<std::string> metric_field_names(const RunInfo& info);

// A metric's column: its symbol and unit, without the characters a CSV header or a JSON key
// would trip on ("Fpu0Active_percent").
std::string metric_column(const oa::MetricCounter& c);

// One CSV line of `fields` (no newline): numbers as they are, text through csv_text
// (report/csv.h); an empty cell is not measured.
std::string csv_line(const std::vector<Field>& fields);

// The energy of one row: the window between `begin` and `end` (when both were read), judged by
// the run's options with the row's busy time and average GPU clock; without them, a window
// without figures that says `no_energy_reason`. Never throws: readings that cannot make a window
// give a flagged one (power::make_energy_window), so one bad row never stops the rows after it.
// The row's energy by `model`: over its measured window where that is long enough to be trusted
// (and then compared with the measurement), else over its counters' window.
ModelledEnergy modelled_energy(const oa::LaunchRecord& record, const power::EnergyWindow& window,
                               const RunInfo& info, const model::EnergyModel& model);

RowEnergy row_energy(const oa::LaunchRecord& record, const power::EnergyReading* begin,
                     const power::EnergyReading* end, const RunInfo& info,
                     const std::string& no_energy_reason);

}  // namespace oaprof::report
