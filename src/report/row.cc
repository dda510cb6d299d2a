#include "report/row.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "model/energy_model.h"
#include "oa/platform.h"
#include "oa/report_format.h"

namespace oaprof::report {

namespace {

// A metric's column: its symbol and unit, without the characters a CSV header or a JSON key
// would trip on.
std::string metric_column(const oa::MetricCounter& c) {
  std::string name = c.units.empty() ? c.symbol : fmt::format("{}_{}", c.symbol, c.units);
  for (char& ch : name) {
    if (ch == ' ' || ch == ',' || ch == '/') ch = '_';
  }
  return name;
}

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
  return columns;
}

void add_metric_fields(const oa::LaunchRecord& r, const RunInfo& info, std::vector<Field>& f,
                       std::vector<std::string>& flags) {
  if (info.metrics == nullptr) return;
  const bool prepared = info.metric_columns && info.metric_columns->metrics == info.metrics;
  const MetricColumns own = prepared ? MetricColumns{} : make_metric_columns(info);
  const MetricColumns& columns = prepared ? *info.metric_columns : own;
  const auto& counters = info.metrics->counters();
  const std::vector<oa::EquationValue> values =
      info.metrics->evaluate(r.deltas, info.device_variables);
  for (std::size_t i = 0; i < counters.size(); ++i) {
    const auto& c = counters[i];
    const bool available = columns.available[i];
    const oa::EquationValue& v = values[i];
    if (available && v.div_by_zero) flags.push_back("metric_div_zero:" + c.symbol);
    f.push_back({columns.names[i],
                 !available || v.div_by_zero ? FieldValue{}
                 : v.is_float                ? FieldValue{v.f}
                                             : FieldValue{v.u},
                 3});
  }
}

// "A0", "B3", ...: the raw counters' column names, made once rather than formatted per row.
const std::string& counter_column(char bank, int index) {
  static const auto names = [] {
    std::array<std::vector<std::string>, 3> all;
    for (int i = 0; i < 64; ++i) {
      for (int b = 0; b < 3; ++b) all[b].push_back(fmt::format("{}{}", "ABC"[b], i));
    }
    return all;
  }();
  return names[static_cast<std::size_t>(bank - 'A')].at(static_cast<std::size_t>(index));
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
void add_launch_fields(const oa::LaunchRecord& r, std::vector<Field>& f) {
  const auto& l = r.launch;
  const double kns = kernel_time_ns(r);
  f.push_back({"launch", launch_ordinal(r)});
  f.push_back({"pid", std::uint64_t{r.pid}});
  f.push_back({"tid", std::uint64_t{l.tid}});
  f.push_back({"kernel", l.kernel_name});
  // `api` says which API (opencl, level-zero); `call` which of its launch calls (what `api` held
  // before Level Zero came: ndrange or task).
  f.push_back({"api", std::string(oa::launch_api_family(l.api))});
  f.push_back({"call", std::string(oa::launch_call_name(l.api))});
  f.push_back({"work_dim", std::uint64_t{l.work_dim}});
  f.push_back({"global_size", dims(l.global, l.work_dim)});
  f.push_back(
      {"local_size", l.local[0] == 0 ? FieldValue{} : FieldValue{dims(l.local, l.work_dim)}});
  f.push_back({"global_offset", dims(l.offset, l.work_dim)});
  f.push_back({"queue", l.queue ? FieldValue{fmt::format("0x{:x}", l.queue)} : FieldValue{}});
  f.push_back(
      {"device_handle", l.device ? FieldValue{fmt::format("0x{:x}", l.device)} : FieldValue{}});
  f.push_back({"api_ns", l.api_ns ? FieldValue{l.api_ns} : FieldValue{}});
  f.push_back({"kernel_ns", std::isnan(kns) ? FieldValue{} : FieldValue{kns}});
  // Kernel replay: kernel_ns above is the first pass alone; the counters below sum every pass;
  // the restores between passes are outside the counters but inside the energy window.
  f.push_back({"replay_passes", std::uint64_t{l.passes}});
  f.push_back({"restore_bytes", l.restore_bytes});
  f.push_back({"restore_ns", l.restore_ns});
}

// The counters' window and the raw A/B/C deltas.
void add_counter_fields(const oa::LaunchRecord& r, const RunInfo& info, std::vector<Field>& f) {
  if (info.attribution == "sampled") {
    // How far the counters may be from a bracketed read's, and how much of the window other
    // launches shared (their counts are in this row too): docs/attach.md.
    const auto& s = r.sampled;
    f.push_back({"attribution_error", s ? FieldValue{s->error_bound} : FieldValue{}, 4});
    f.push_back({"overlap_share", s ? FieldValue{s->overlap_share} : FieldValue{}, 4});
  }
  f.push_back({"gpu_time_ns", oa::gpu_time_ns(r.deltas, info.timestamp_hz)});
  f.push_back(
      {"gpu_ticks", r.deltas.has_gpu_ticks ? FieldValue{r.deltas.gpu_ticks} : FieldValue{}});
  const double freq = oa::average_frequency_mhz(r.deltas, info.timestamp_hz);
  f.push_back({"avg_freq_mhz",
               r.deltas.has_gpu_ticks && r.deltas.timestamp ? FieldValue{freq} : FieldValue{}, 1});
  // Counters that went down between two reads and were counted as one wrap each.
  f.push_back({"wraps_corrected", static_cast<std::uint64_t>(r.deltas.wraps_corrected)});
  for (int i = 0; i < a_columns(info); ++i) {
    f.push_back(
        {counter_column('A', i), r.deltas.a_present[i] ? FieldValue{r.deltas.a[i]} : FieldValue{}});
  }
  for (int i = 0; i < oa::kNumB; ++i) f.push_back({counter_column('B', i), r.deltas.b[i]});
  for (int i = 0; i < oa::kNumC; ++i) f.push_back({counter_column('C', i), r.deltas.c[i]});
}

// Energy of this row's own window: empty cells, with the reason in the flags, when it could not
// be measured; never zeros presented as measurements.
void add_energy_fields(const power::EnergyWindow& w, const RunInfo& info, std::vector<Field>& f) {
  const bool measured = w.measured();
  auto opt = [&](std::optional<double> v) { return measured && v ? FieldValue{*v} : FieldValue{}; };
  f.push_back({"window_ns", w.duration_ns ? FieldValue{w.duration_ns} : FieldValue{}});
  for (power::Domain d : power::kAllDomains) {
    auto it = w.energy_uj.find(d);
    f.push_back({fmt::format("{}_energy_uj", power::domain_name(d)),
                 measured && it != w.energy_uj.end() ? FieldValue{it->second} : FieldValue{}});
  }
  f.push_back({"igpu_power_w", opt(w.igpu_w()), 3});
  f.push_back({"igpu_dynamic_power_w", opt(w.igpu_dynamic_w()), 3});
  f.push_back({"igpu_formula", std::string(power::formula_name(w.formula))});
  f.push_back({"energy_source",
               info.energy_backend.empty() ? FieldValue{} : FieldValue{info.energy_backend}});
}

// With --energy-model: the row's modelled energy and its error bar, and why it is extrapolated
// (each reason separated by "; "); no columns without a model.
void add_model_fields(const std::optional<ModelledEnergy>& m, const RunInfo& info,
                      std::vector<Field>& f) {
  if (!info.energy_model) return;
  f.push_back({"energy_model_j", m ? FieldValue{m->energy_j} : FieldValue{}, 9});
  f.push_back({"energy_model_err_j", m ? FieldValue{m->error_j} : FieldValue{}, 9});
  std::string why;
  for (const std::string& reason : m ? m->extrapolated : std::vector<std::string>{}) {
    why += (why.empty() ? "" : "; ") + reason;
  }
  f.push_back({"energy_model_extrapolated_why", why.empty() ? FieldValue{} : FieldValue{why}});
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

std::uint64_t launch_ordinal(const oa::LaunchRecord& r) {
  return r.program_launch.value_or(r.index);
}

std::vector<Field> launch_fields(const oa::LaunchRecord& r, const RowEnergy& energy,
                                 const RunInfo& info) {
  std::vector<Field> f;
  // Every field without a move of the others: a growing vector moved each row's fields twice.
  f.reserve(64 + static_cast<std::size_t>(a_columns(info) + oa::kNumB + oa::kNumC) +
            (info.metrics ? info.metrics->counters().size() : 0));
  add_launch_fields(r, f);
  add_counter_fields(r, info, f);
  add_energy_fields(energy.window, info, f);
  add_model_fields(energy.modelled, info, f);
  std::vector<std::string> metric_flags;
  add_metric_fields(r, info, f, metric_flags);
  f.push_back({"device", info.device});
  f.push_back({"host", info.host});
  f.push_back({"rank", info.rank.empty() ? FieldValue{} : FieldValue{info.rank}});
  f.push_back({"flags", row_flags(r, energy, info, metric_flags)});
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
  wo.busy_ns = static_cast<std::uint64_t>(oa::gpu_time_ns(r.deltas, info.timestamp_hz));
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
