// JSON: one document with the run's metadata and the same rows as the CSV. A run may hold
// hundreds of thousands of launches, so a row is written compact (schema_version 2 and later): the
// header's "columns" names each value once, and a row is the list of its values in that order
// (null: not measured); doubles carry nine significant digits; the row's energy object (its last
// column) leaves out what says nothing (null fields, iGPU formulas of a window not measured).
// Readers take version 1 too, whose rows are objects.
//
// In a file the document is kept valid on disk at every flush: each row is written over the
// document's closing brackets, which are then written again, so a crash of the profiled program
// leaves a complete document. A pipe, FIFO or terminal cannot be written over: there the rows
// follow one another and the closing brackets come once, at the end, so the reader gets one
// valid document.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/energy_model.h"
#include "report/field_json.h"
#include "report/json_text.h"
#include "report/reporter.h"
#include "report/row.h"

namespace oaprof::report {
namespace {

using nlohmann::json;

// Nine significant digits: finer than any counter, clock or energy reading here resolves, and
// about half the text of the shortest exact form.
json value(const Field& f) {
  const auto* d = std::get_if<double>(&f.value);
  if (d == nullptr || !std::isfinite(*d)) return field_json(f);
  return std::strtod(fmt::format("{:.9g}", *d).c_str(), nullptr);
}

// The row's energy window as power::to_json writes it, less what says nothing: its null and
// empty fields, and the iGPU formulas when not one of them has a figure (a window not measured has
// four, all null). A measured window keeps every formula, null where a plane it needs is missing.
json compact_energy(json energy) {
  for (const char* key : {"igpu", "igpu_dynamic"}) {
    const auto it = energy.find(key);
    if (it == energy.end() || !it->is_array()) continue;
    const bool any = std::any_of(it->begin(), it->end(), [](const json& formula) {
      return formula.contains("power_w") && !formula["power_w"].is_null();
    });
    if (!any) energy.erase(it);
  }
  for (auto it = energy.begin(); it != energy.end();) {
    const bool empty = it->is_null() || (it->is_structured() && it->empty());
    it = empty ? energy.erase(it) : std::next(it);
  }
  return energy;
}

// The model a run's energy_model_* columns come from: what it was calibrated on and how well it
// predicts a kernel it has not seen.
json model_meta(const model::EnergyModel& m) {
  return {{"device", m.device},
          {"platform", m.platform},
          {"driver", m.driver},
          {"metric_set", m.metric_set},
          {"energy", m.energy},
          {"frequency_mhz", {{"min", m.freq_min_mhz}, {"max", m.freq_max_mhz}}},
          {"leave_one_kernel_out_rms_relative", m.loo_rms_relative}};
}

// The row's modelled energy beside the measured window: the figure, its error, the reasons it
// is extrapolated (a list, where the CSV joins them) and the comparison with the measurement.
json modelled_json(const ModelledEnergy& m) {
  json out{{"energy_j", m.energy_j},
           {"error_j", m.error_j},
           {"extrapolated", m.extrapolated},
           {"disagrees", m.disagrees}};
  if (m.measured_j) {
    out["measured_j"] = *m.measured_j;
    out["measured_error_j"] = m.measured_error_j;
  }
  return out;
}

constexpr const char* kTail = "\n]}\n";

// Where the device's topology and timestamp frequency came from, with what was read.
void add_facts(json& meta, const oa::DeviceFacts& f) {
  const oa::Topology& t = f.topology;
  meta["topology_source"] = std::string(oa::topology_source_name(f.topology_source));
  meta["topology"] = {
      {"slices", t.slices},         {"subslices", t.subslices},         {"eus", t.eus},
      {"slice_mask", t.slice_mask}, {"subslice_mask", t.subslice_mask}, {"note", f.topology_note}};
  meta["timestamp_source"] = std::string(oa::timestamp_source_name(f.timestamp_source));
  meta["timestamp_note"] = f.timestamp_note;
}

class JsonReporter final : public Reporter {
 public:
  explicit JsonReporter(std::ostream& out) : out_(out) {}

  void begin(const RunInfo& info) override {
    info_ = info;
    prepare_row_columns(info_);
    json meta{
        {"schema_version", kJsonSchemaVersion},
        {"oaprof_version", info.oaprof_version},
        {"device", info.device},
        {"device_detail", info.device_detail},
        {"platform", info.platform},
        {"format", info.format},
        {"access", info.access},
        {"driver", info.driver.empty() ? json(nullptr) : json(info.driver)},
        {"metric_set", info.metric_set.empty() ? json(nullptr) : json(info.metric_set)},
        {"energy_backend", info.energy_backend.empty() ? json(nullptr) : json(info.energy_backend)},
        {"energy_simulated", info.energy_simulated},
        {"mode", info.mode},
        {"eus", info.eus},
        {"max_freq_mhz", info.max_freq_mhz},
        {"min_freq_mhz", info.min_freq_mhz},
        {"start_freq_mhz", info.start_freq_mhz ? json(*info.start_freq_mhz) : json(nullptr)},
        {"timestamp_hz", info.timestamp_hz},
        {"command", info.command},
        {"host", info.host},
        {"rank", info.rank.empty() ? json(nullptr) : json(info.rank)}};
    if (info.facts) add_facts(meta, *info.facts);
    if (info.energy_model) meta["energy_model"] = model_meta(*info.energy_model);
    json columns = launch_field_names(info);
    columns.push_back("energy");
    meta["columns"] = std::move(columns);
    std::string head = json_text(meta, 1);
    head.pop_back();  // reopen the object to append the launches array
    out_ << head << ",\n \"launches\": [";
    // Where the tail would go: -1 on a stream that cannot seek (a pipe, FIFO or terminal).
    tail_pos_ = out_.tellp();
    if (seekable()) out_ << kTail;
    out_.flush();  // a file is valid on disk before the first row
  }

  void add(const oa::LaunchRecord& r, const RowEnergy& energy) override {
    json row = json::array();
    for (const auto& f : launch_fields(r, energy, info_)) row.push_back(value(f));
    json window = compact_energy(power::to_json(energy.window));  // each figure labelled
    if (energy.modelled) window["model"] = modelled_json(*energy.modelled);
    row.push_back(std::move(window));
    if (seekable()) out_.seekp(tail_pos_);
    out_ << (rows_++ ? ",\n  " : "\n  ") << json_text(row);
    if (seekable()) {
      tail_pos_ = out_.tellp();
      out_ << kTail;
    }
  }

  void flush() override { flush_or_throw(out_, "JSON"); }
  void end() override {
    if (!seekable() && !ended_) out_ << kTail;
    ended_ = true;
    out_.flush();
  }

 private:
  bool seekable() const { return tail_pos_ != std::streampos(-1); }

  std::ostream& out_;
  RunInfo info_;
  std::streampos tail_pos_ = -1;
  std::uint64_t rows_ = 0;
  bool ended_ = false;
};

}  // namespace

std::unique_ptr<Reporter> make_json_reporter(std::ostream& out) {
  return std::make_unique<JsonReporter>(out);
}

}  // namespace oaprof::report
