#include "report/row.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "model/energy_model.h"
#include "oa/platform.h"
#include "oa/report_format.h"

namespace oaprof::report {

std::string metric_column(const oa::MetricCounter& c) {
  std::string name = c.units.empty() ? c.symbol : fmt::format("{}_{}", c.symbol, c.units);
  for (char& ch : name) {
    if (ch == ' ' || ch == ',' || ch == '/') ch = '_';
  }
  return name;
}

namespace {

// Derived metrics of the set, after the raw counters: named by symbol and unit. A metric whose
// equation divided by zero is left empty and named in a metric_div_zero flag: IGT's code gives
// such a metric 0 (lib/i915/perf-configs/codegen.py, emit_udiv/emit_fdiv), which would read as a
// measured zero.
MetricColumns make_metric_columns(const RunInfo& info) {
  MetricColumns columns;
  columns.metrics = info.metrics;
  if (info.metrics == nullptr) return columns;
  for (const auto& c : info.metrics->counters()) columns.names.push_back(metric_column(c));
  columns.available = info.metrics->available_counters(info.device_variables);
  columns.program = oa::MetricProgram(*info.metrics, info.device_variables);
  return columns;
}

void add_metric_fields(const oa::LaunchRecord& r, const RunInfo& info, RowSink& sink,
                       std::vector<std::string>& flags) {
  if (info.metrics == nullptr) return;
  const bool prepared = info.metric_columns && info.metric_columns->metrics == info.metrics;
  const MetricColumns own = prepared ? MetricColumns{} : make_metric_columns(info);
  const MetricColumns& columns = prepared ? *info.metric_columns : own;
  const auto& counters = info.metrics->counters();
  std::vector<oa::EquationValue>& values = sink.metric_values;
  columns.program.evaluate_into(r.deltas, values);
  for (std::size_t i = 0; i < counters.size(); ++i) {
    if (columns.available[i] && values[i].div_by_zero) {
      flags.push_back("metric_div_zero:" + counters[i].symbol);
    }
  }
  sink.metric_cells(columns.names, values, columns.available, 3);
}

// "A0", "B3", ...: the raw counters' column names, made once (before main, so that a row's
// lookup is a plain index with no guard) rather than formatted per row.
const std::array<std::vector<std::string>, 3> kCounterColumns = [] {
  std::array<std::vector<std::string>, 3> all;
  for (int i = 0; i < 64; ++i) {
    for (int b = 0; b < 3; ++b) all[b].push_back(fmt::format("{}{}", "ABC"[b], i));
  }
  return all;
}();

const std::vector<std::string>& counter_columns(char bank) {
  return kCounterColumns[static_cast<std::size_t>(bank - 'A')];
}

// A0..A35 for every A/B/C format; Xe2's PEC64u64 holds its 64 PEC counters as A0..A63, and a
// run in that format has a column for each.
int a_columns(const RunInfo& info) {
  int n = oa::kNumA;
  for (const oa::FormatLayout& l : oa::all_formats()) {
    if (l.name == info.format) n = std::max(n, l.a_end());
  }
  return n;
}

// A run through xe's observation stream: each snapshot is the first periodic report after it was
// asked for, so a row's interval reaches up to one period past the kernel on each side. xe's
// stream is the only read-out a part bound to xe has (gpu::open_device refuses the others), so
// the run's driver decides; rows without a run (decode) have none.
bool xe_periodic(const RunInfo& info) { return info.driver == "xe"; }

}  // namespace

namespace {

// What was launched, where and when, as the program's OpenCL calls said.
void add_launch_fields(const oa::LaunchRecord& r, RowSink& sink) {
  const auto& l = r.launch;
  const double kns = kernel_time_ns(r);
  sink.add("launch", launch_ordinal(r));
  sink.add("pid", std::uint64_t{r.pid});
  sink.add("tid", std::uint64_t{l.tid});
  sink.add("kernel", l.kernel_name);
  // `api` says which API (opencl, level-zero); `call` which of its launch calls (what `api` held
  // before Level Zero came: ndrange or task).
  sink.add("api", oa::launch_api_family(l.api));
  sink.add("call", oa::launch_call_name(l.api));
  sink.add("work_dim", std::uint64_t{l.work_dim});
  sink.add("global_size", dims(l.global, l.work_dim));
  sink.add("local_size", l.local[0] == 0 ? CellValue{} : CellValue{dims(l.local, l.work_dim)});
  sink.add("global_offset", dims(l.offset, l.work_dim));
  sink.add("queue", l.queue ? CellValue{fmt::format("0x{:x}", l.queue)} : CellValue{});
  sink.add("device_handle", l.device ? CellValue{fmt::format("0x{:x}", l.device)} : CellValue{});
  sink.add("api_ns", l.api_ns ? CellValue{l.api_ns} : CellValue{});
  sink.add("kernel_ns", std::isnan(kns) ? CellValue{} : CellValue{kns});
  // Kernel replay: kernel_ns above is the first pass alone; the counters below sum every pass;
  // the restores between passes are outside the counters but inside the energy window.
  sink.add("replay_passes", std::uint64_t{l.passes});
  sink.add("restore_bytes", l.restore_bytes);
  sink.add("restore_ns", l.restore_ns);
}

// The counters' window and the raw A/B/C deltas.
void add_counter_fields(const oa::LaunchRecord& r, const RunInfo& info, RowSink& sink) {
  if (info.attribution == "sampled") {
    // How far the counters may be from a bracketed read's, and how much of the window other
    // launches shared (their counts are in this row too): docs/attach.md.
    const auto& s = r.sampled;
    sink.add("attribution_error", s ? CellValue{s->error_bound} : CellValue{}, 4);
    sink.add("overlap_share", s ? CellValue{s->overlap_share} : CellValue{}, 4);
  }
  sink.add("gpu_time_ns", oa::gpu_time_ns(r.deltas, info.timestamp_hz));
  sink.add("gpu_ticks", r.deltas.has_gpu_ticks ? CellValue{r.deltas.gpu_ticks} : CellValue{});
  const double freq = oa::average_frequency_mhz(r.deltas, info.timestamp_hz);
  sink.add("avg_freq_mhz",
           r.deltas.has_gpu_ticks && r.deltas.timestamp ? CellValue{freq} : CellValue{}, 1);
  // Counters that went down between two reads and were counted as one wrap each.
  sink.add("wraps_corrected", static_cast<std::uint64_t>(r.deltas.wraps_corrected));
  const auto a_end = static_cast<std::size_t>(a_columns(info));
  sink.integer_cells(std::span(counter_columns('A')).first(a_end),
                     std::span(r.deltas.a).first(a_end),
                     std::span(r.deltas.a_present).first(a_end));
  sink.integer_cells(std::span(counter_columns('B')).first(oa::kNumB), r.deltas.b);
  sink.integer_cells(std::span(counter_columns('C')).first(oa::kNumC), r.deltas.c);
}

// "gpu_energy_uj", ...: each energy plane's column, named once rather than per row.
std::string_view energy_column(power::Domain d) {
  static const auto names = [] {
    std::vector<std::pair<power::Domain, std::string>> all;
    for (power::Domain domain : power::kAllDomains) {
      all.emplace_back(domain, fmt::format("{}_energy_uj", power::domain_name(domain)));
    }
    return all;
  }();
  for (const auto& [domain, name] : names) {
    if (domain == d) return name;
  }
  return {};
}

// Energy of this row's own window: empty cells, with the reason in the flags, when it could not
// be measured; never zeros presented as measurements.
void add_energy_fields(const power::EnergyWindow& w, const RunInfo& info, RowSink& sink) {
  const bool measured = w.measured();
  auto opt = [&](std::optional<double> v) { return measured && v ? CellValue{*v} : CellValue{}; };
  sink.add("window_ns", w.duration_ns ? CellValue{w.duration_ns} : CellValue{});
  for (power::Domain d : power::kAllDomains) {
    auto it = w.energy_uj.find(d);
    sink.add(energy_column(d),
             measured && it != w.energy_uj.end() ? CellValue{it->second} : CellValue{});
  }
  sink.add("igpu_power_w", opt(w.igpu_w()), 3);
  sink.add("igpu_dynamic_power_w", opt(w.igpu_dynamic_w()), 3);
  sink.add("igpu_formula", power::formula_name(w.formula));
  sink.add("energy_source",
           info.energy_backend.empty() ? CellValue{} : CellValue{info.energy_backend});
}

// With --energy-model: the row's modelled energy and its error bar, and why it is extrapolated
// (each reason separated by "; "); no columns without a model.
void add_model_fields(const std::optional<ModelledEnergy>& m, const RunInfo& info, RowSink& sink) {
  if (!info.energy_model) return;
  sink.add("energy_model_j", m ? CellValue{m->energy_j} : CellValue{}, 9);
  sink.add("energy_model_err_j", m ? CellValue{m->error_j} : CellValue{}, 9);
  std::string why;
  for (const std::string& reason : m ? m->extrapolated : std::vector<std::string>{}) {
    why += (why.empty() ? "" : "; ") + reason;
  }
  sink.add("energy_model_extrapolated_why", why.empty() ? CellValue{} : CellValue{why});
}

// The row's flags, `;`-separated: what makes its figures other than a plain measurement.
std::string row_flags(const oa::LaunchRecord& r, const RowEnergy& e, const RunInfo& info,
                      const std::vector<std::string>& metric_flags) {
  const power::EnergyWindow& w = e.window;
  std::string flags;
  auto add_flag = [&](const std::string& flag) { flags += (flags.empty() ? "" : ";") + flag; };
  if (r.launch.passes > 1) add_flag("replayed");
  // xe: the counters run between the periodic reports nearest the boundaries (docs/xe.md).
  if (xe_periodic(info)) add_flag("xe_periodic");
  for (const auto& flag : r.flags) add_flag(flag);
  // The equations and EU figures used the platform table's EU count, which a fused part lacks.
  if (info.facts && info.facts->topology_from_table()) add_flag(kTopologyFromTableFlag);
  for (const auto& flag : w.flags()) add_flag(flag);
  // Figures from the simulated RAPL tree are a model: said on every row that carries them.
  if (info.energy_simulated && w.unavailable_reason.empty()) add_flag("energy_simulated");
  for (const auto& flag : metric_flags) add_flag(flag);
  if (e.modelled && !e.modelled->extrapolated.empty()) add_flag("energy_model_extrapolated");
  if (e.modelled && e.modelled->disagrees) add_flag("energy_model_disagrees");
  add_selftest_flags(r, w, info, add_flag);
  return flags;
}

}  // namespace

void RowSink::integer_cells(std::span<const std::string> names,
                            std::span<const std::uint64_t> values, std::span<const bool> present) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    cell(names[i], present.empty() || present[i] ? CellValue{values[i]} : CellValue{}, 0);
  }
}

void RowSink::metric_cells(std::span<const std::string> names,
                           std::span<const oa::EquationValue> values,
                           const std::vector<bool>& available, int decimals) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    const oa::EquationValue& v = values[i];
    cell(names[i],
         !available[i] || v.div_by_zero ? CellValue{}
         : v.is_float                   ? CellValue{v.f}
                                        : CellValue{v.u},
         decimals);
  }
}

std::uint64_t launch_ordinal(const oa::LaunchRecord& r) {
  return r.program_launch.value_or(r.index);
}

void write_launch_row(const oa::LaunchRecord& r, const RowEnergy& energy, const RunInfo& info,
                      RowSink& sink) {
  add_launch_fields(r, sink);
  add_counter_fields(r, info, sink);
  add_energy_fields(energy.window, info, sink);
  add_model_fields(energy.modelled, info, sink);
  std::vector<std::string> metric_flags;
  add_metric_fields(r, info, sink, metric_flags);
  sink.add("device", info.device);
  sink.add("host", info.host);
  sink.add("rank", info.rank.empty() ? CellValue{} : CellValue{info.rank});
  sink.add("flags", row_flags(r, energy, info, metric_flags));
}

namespace {

// Keeps each cell as a Field, names and text copied.
class FieldCollector final : public RowSink {
 public:
  explicit FieldCollector(std::vector<Field>& fields) : fields_(fields) {}
  void cell(std::string_view name, const CellValue& value, int decimals) override {
    fields_.push_back({std::string(name), owned(value), decimals});
  }

 private:
  struct Owned {
    FieldValue operator()(std::monostate) const { return {}; }
    FieldValue operator()(std::uint64_t v) const { return v; }
    FieldValue operator()(double v) const { return v; }
    FieldValue operator()(std::string_view v) const { return std::string(v); }
  };
  static FieldValue owned(const CellValue& value) { return std::visit(Owned{}, value); }
  std::vector<Field>& fields_;
};

}  // namespace

std::vector<Field> launch_fields(const oa::LaunchRecord& r, const RowEnergy& energy,
                                 const RunInfo& info) {
  std::vector<Field> f;
  // Every field without a move of the others: a growing vector moved each row's fields twice.
  f.reserve(64 + static_cast<std::size_t>(a_columns(info) + oa::kNumB + oa::kNumC) +
            (info.metrics ? info.metrics->counters().size() : 0));
  FieldCollector collector(f);
  write_launch_row(r, energy, info, collector);
  return f;
}

void prepare_row_columns(RunInfo& info) {
  info.metric_columns = std::make_shared<const MetricColumns>(make_metric_columns(info));
}

std::vector<std::string> metric_field_names(const RunInfo& info) {
  std::vector<std::string> names;
  if (info.metrics == nullptr) return names;
  for (const auto& c : info.metrics->counters()) names.push_back(metric_column(c));
  return names;
}

std::vector<std::string> launch_field_names(const RunInfo& info) {
  std::vector<std::string> names;
  for (const auto& f : launch_fields(oa::LaunchRecord{}, RowEnergy{}, info)) {
    names.push_back(f.name);
  }
  return names;
}

namespace {

// RAPL's counters move about once a millisecond, so a window's measured energy is uncertain by
// about that much of its power (2 % of a 50 ms window: docs/energy.md).
constexpr double kRaplUpdateS = 1e-3;

// The row's measured energy where its window is long enough to be trusted, with that error.
void compare_with_measured(const power::EnergyWindow& w, ModelledEnergy& m) {
  const std::optional<double> watts = w.igpu_w();
  if (!w.measured() || w.shorter_than_min_window || !watts || w.duration_ns == 0) return;
  m.measured_j = *watts * static_cast<double>(w.duration_ns) / 1e9;
  m.measured_error_j = std::abs(*watts) * kRaplUpdateS;
  m.disagrees = std::abs(*m.measured_j - m.energy_j) > std::hypot(m.error_j, m.measured_error_j);
}

}  // namespace

ModelledEnergy modelled_energy(const oa::LaunchRecord& r, const power::EnergyWindow& w,
                               const RunInfo& info, const model::EnergyModel& model) {
  // Over the measured window where there is one, so that both figures cover the same time (the
  // fit paired a window's energy with its length the same way); else over the counters' window.
  const bool trusted_window = w.measured() && !w.shorter_than_min_window && w.duration_ns > 0;
  const double duration_s = trusted_window ? static_cast<double>(w.duration_ns) / 1e9
                                           : oa::gpu_time_ns(r.deltas, info.timestamp_hz) / 1e9;
  const bool clock_known = r.deltas.has_gpu_ticks && r.deltas.timestamp > 0;
  const double freq_mhz =
      clock_known ? oa::average_frequency_mhz(r.deltas, info.timestamp_hz) : std::nan("");
  model::Prediction p = model::predict(model, r.deltas, duration_s, freq_mhz, info.metric_set);
  if (!clock_known) p.extrapolated.push_back("the GPU clock is unknown (no GPU_TICKS delta)");
  ModelledEnergy m{p.energy_j,   p.error_j, duration_s, std::move(p.extrapolated),
                   std::nullopt, 0,         false};
  compare_with_measured(w, m);
  return m;
}

RowEnergy row_energy(const oa::LaunchRecord& r, const power::EnergyReading* begin,
                     const power::EnergyReading* end, const RunInfo& info,
                     const std::string& no_energy_reason) {
  RowEnergy e;
  if (begin == nullptr || end == nullptr) {
    e.window = power::unavailable_energy_window(no_energy_reason);
    if (info.energy_model) e.modelled = modelled_energy(r, e.window, info, *info.energy_model);
    return e;
  }
  power::WindowOptions wo = info.energy_options;
  wo.busy_ns = oa::gpu_busy_ns(r.deltas, info.timestamp_hz);
  wo.gpu_freq_mhz = oa::average_frequency_mhz(r.deltas, info.timestamp_hz);
  e.window = power::make_energy_window(*begin, *end, wo);
  // Readings that went backwards are no edge of a window, for the table's per-kernel window
  // either.
  if (!e.window.went_backwards) {
    e.begin = *begin;
    e.end = *end;
  }
  if (info.energy_model) e.modelled = modelled_energy(r, e.window, info, *info.energy_model);
  return e;
}

}  // namespace oaprof::report
