#include "report/row.h"

#include <cmath>

#include <fmt/format.h>

namespace oaprof::report {

std::vector<Field> launch_fields(const oa::LaunchRecord& r, const RowEnergy& energy,
                                 const RunInfo& info) {
  const auto& l = r.launch;
  std::vector<Field> f;
  f.reserve(80);
  const double kns = kernel_time_ns(r);
  f.push_back({"launch", r.index});
  f.push_back({"pid", std::uint64_t{r.pid}});
  f.push_back({"tid", std::uint64_t{l.tid}});
  f.push_back({"kernel", l.kernel_name});
  f.push_back({"api", std::string(l.api == oa::wire::LaunchApi::kTask ? "task" : "ndrange")});
  f.push_back({"work_dim", std::uint64_t{l.work_dim}});
  f.push_back({"global_size", dims(l.global, l.work_dim)});
  f.push_back({"local_size", l.local[0] == 0 ? FieldValue{} : FieldValue{dims(l.local, l.work_dim)}});
  f.push_back({"global_offset", dims(l.offset, l.work_dim)});
  f.push_back({"queue", l.queue ? FieldValue{fmt::format("0x{:x}", l.queue)} : FieldValue{}});
  f.push_back({"device_handle", l.device ? FieldValue{fmt::format("0x{:x}", l.device)} : FieldValue{}});
  f.push_back({"api_ns", l.api_ns ? FieldValue{l.api_ns} : FieldValue{}});
  f.push_back({"kernel_ns", std::isnan(kns) ? FieldValue{} : FieldValue{kns}});
  // Kernel replay: kernel_ns above is the first pass alone; the counters below sum every pass;
  // the restores between passes are outside the counters but inside the energy window.
  f.push_back({"replay_passes", std::uint64_t{l.passes}});
  f.push_back({"restore_bytes", l.restore_bytes});
  f.push_back({"restore_ns", l.restore_ns});
  f.push_back({"gpu_time_ns", oa::gpu_time_ns(r.deltas, info.timestamp_hz)});
  f.push_back({"gpu_ticks", r.deltas.has_gpu_ticks ? FieldValue{r.deltas.gpu_ticks} : FieldValue{}});
  const double freq = oa::average_frequency_mhz(r.deltas, info.timestamp_hz);
  f.push_back({"avg_freq_mhz", r.deltas.has_gpu_ticks && r.deltas.timestamp ? FieldValue{freq} : FieldValue{}, 1});
  for (int i = 0; i < oa::kNumA; ++i) {
    f.push_back({fmt::format("A{}", i), r.deltas.a_present[i] ? FieldValue{r.deltas.a[i]} : FieldValue{}});
  }
  for (int i = 0; i < oa::kNumB; ++i) f.push_back({fmt::format("B{}", i), r.deltas.b[i]});
  for (int i = 0; i < oa::kNumC; ++i) f.push_back({fmt::format("C{}", i), r.deltas.c[i]});
  // Energy of this row's own window: empty cells, with the reason in the flags, when it could not
  // be measured; never zeros presented as measurements.
  const power::EnergyWindow& w = energy.window;
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
  // Derived metrics of the set, after the raw counters: named by symbol and unit.
  if (info.metrics != nullptr) {
    const auto& counters = info.metrics->counters();
    const std::vector<oa::EquationValue> values =
        info.metrics->evaluate(r.deltas, info.device_variables);  // division by zero gives 0
    for (std::size_t i = 0; i < counters.size(); ++i) {
      const auto& c = counters[i];
      std::string name = c.units.empty() ? c.symbol : fmt::format("{}_{}", c.symbol, c.units);
      for (char& ch : name) {
        if (ch == ' ' || ch == ',' || ch == '/') ch = '_';
      }
      const bool available = info.metrics->available(static_cast<int>(i), info.device_variables);
      f.push_back({name, !available          ? FieldValue{}
                         : values[i].is_float ? FieldValue{values[i].f}
                                              : FieldValue{values[i].u},
                   3});
    }
  }
  f.push_back({"device", info.device});
  std::string flags;
  if (l.passes > 1) flags = "replayed";
  for (const auto& flag : r.flags) flags += (flags.empty() ? "" : ";") + flag;
  // The equations and EU figures used the platform table's EU count, which a fused part lacks.
  if (info.facts && info.facts->topology_from_table()) {
    flags += std::string(flags.empty() ? "" : ";") + kTopologyFromTableFlag;
  }
  for (const auto& flag : w.flags()) flags += (flags.empty() ? "" : ";") + flag;
  f.push_back({"flags", flags});
  return f;
}

std::vector<std::string> launch_field_names(const RunInfo& info) {
  std::vector<std::string> names;
  for (const auto& f : launch_fields(oa::LaunchRecord{}, RowEnergy{}, info)) {
    names.push_back(f.name);
  }
  return names;
}

}  // namespace oaprof::report
