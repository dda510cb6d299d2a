#include "report/run_input.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/run_bytes.h"
#include "report/run_json_stream.h"

namespace oaprof::report {
namespace {

using ordered_json = nlohmann::ordered_json;

class Reader {
 public:
  Reader(const ordered_json& j, const std::string& source, std::string where)
      : j_(j), source_(source), where_(std::move(where)) {}

  const ordered_json* find(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string text(const char* key, bool required = false) const {
    const ordered_json* v = find(key);
    if (!v) {
      if (required) missing(key);
      return {};
    }
    if (!v->is_string()) wrong(key, "a string");
    const auto& s = v->get_ref<const std::string&>();
    if (s.size() > kMaxRunText) wrong(key, fmt::format("at most {} characters", kMaxRunText));
    return s;
  }
  std::optional<double> number(const char* key, bool required = false) const {
    const ordered_json* v = find(key);
    if (!v) {
      if (required) missing(key);
      return std::nullopt;
    }
    if (!v->is_number()) wrong(key, "a number");
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < 0) wrong(key, "a finite number, not negative");
    return d;
  }
  bool flag(const char* key) const {
    const ordered_json* v = find(key);
    if (!v) return false;
    if (!v->is_boolean()) wrong(key, "true or false");
    return v->get<bool>();
  }
  [[noreturn]] void missing(const char* key) const {
    fail_input(source_, fmt::format("{} has no \"{}\"", where_, key));
  }
  [[noreturn]] void wrong(const char* key, const std::string& want) const {
    fail_input(source_, fmt::format("{}: \"{}\" must be {}", where_, key, want));
  }

 private:
  const ordered_json& j_;
  const std::string& source_;
  std::string where_;
};

void require_array(const ordered_json& doc, const char* key, const std::string& source) {
  const auto it = doc.find(key);
  if (it == doc.end() || !it->is_array())
    fail_input(source, fmt::format("\"{}\" must be an array", key));
}

int small_int(const Reader& r, const char* key, int max) {
  const auto v = r.number(key);
  if (!v) return 0;
  if (*v > max || *v != std::floor(*v)) r.wrong(key, fmt::format("a whole number up to {}", max));
  return static_cast<int>(*v);
}

OaprofLaunch parse_launch(const ordered_json& row, const std::string& source, std::size_t i) {
  const std::string where = fmt::format("launch {}", i);
  const Reader r(row, source, where);
  OaprofLaunch l;
  l.kernel = r.text("kernel", true);
  l.global_size = r.text("global_size");
  l.local_size = r.text("local_size");
  l.kernel_ns = r.number("kernel_ns");
  l.gpu_time_ns = r.number("gpu_time_ns");
  l.igpu_power_w = r.number("igpu_power_w");
  l.energy_model_j = r.number("energy_model_j");
  l.window_ns = r.number("window_ns");
  l.flags = r.text("flags");
  for (const auto& [key, value] : row.items()) {
    if (!value.is_number() || !roofline_number(key)) continue;
    const double d = value.get<double>();
    if (std::isfinite(d)) l.numbers[key] = d;
  }
  return l;
}

// The run's metadata into `run`, whose launches were read as the document went by.
void parse_oaprof(const ordered_json& doc, const std::string& source, OaprofRun& run) {
  const Reader r(doc, source, "the run");
  require_schema_version(doc, source);
  require_array(doc, "launches", source);
  run.source = source;
  run.oaprof_version = r.text("oaprof_version");
  run.device = r.text("device", true);
  run.device_detail = r.text("device_detail");
  run.platform = r.text("platform");
  run.mode = r.text("mode");
  run.access = r.text("access");
  run.metric_set = r.text("metric_set");
  run.energy_backend = r.text("energy_backend");
  run.eus = small_int(r, "eus", 4096);
  run.max_freq_mhz = r.number("max_freq_mhz").value_or(0);
  run.min_freq_mhz = r.number("min_freq_mhz").value_or(0);
  run.start_freq_mhz = r.number("start_freq_mhz");
  run.timestamp_hz = r.number("timestamp_hz").value_or(0);
  if (const ordered_json* t = r.find("topology")) {
    if (!t->is_object()) r.wrong("topology", "an object");
    const Reader tr(*t, source, "the run's topology");
    if (tr.find("subslices")) run.subslices = small_int(tr, "subslices", 4096);
  }
}

RunnerResult parse_result(const ordered_json& row, const std::string& source, std::size_t i) {
  const Reader rr(row, source, fmt::format("result {}", i));
  RunnerResult res;
  res.kernel = rr.text("kernel", true);
  res.variant = rr.text("variant");
  res.global = rr.number("global", true).value();
  res.local = rr.number("local", true).value();
  res.size_bytes = rr.number("size_bytes").value_or(0);
  res.median_ns = rr.number("median_ns").value_or(0);
  res.work = rr.number("work").value_or(0);
  res.rate = rr.number("rate").value_or(0);
  res.unit = rr.text("unit", true);
  res.fills_hw_threads = rr.flag("fills_hw_threads");
  return res;
}

// Each row becomes a launch or a result as it is read; the rest of the document is metadata.
RunInput parse_run_bytes(RunBytes& bytes) {
  const std::string& source = bytes.source();
  OaprofRun run;
  RunnerRun runner;
  const ordered_json meta =
      stream_run_json(bytes, [&](std::string_view array, const ordered_json& row, std::size_t i) {
        if (array == "launches") {
          run.launches.push_back(parse_launch(row, source, i));
        } else {
          runner.results.push_back(parse_result(row, source, i));
        }
      });
  if (meta.contains("launches")) {
    parse_oaprof(meta, source, run);
    return run;
  }
  if (meta.contains("results")) {
    require_array(meta, "results", source);
    runner.source = source;
    runner.device = Reader(meta, source, "the document").text("device", true);
    return runner;
  }
  fail_input(source,
             "is neither oaprof's JSON (--json: \"launches\") nor kernel_runner's (--json: "
             "\"results\")");
}

}  // namespace

void fail_input(const std::string& source, const std::string& what) {
  throw RunInputError(fmt::format("{}: {}", source, what));
}

bool roofline_number(std::string_view column) {
  return column == "GpuCoreClocks_cycles" || column == "Fpu0Active_percent" ||
         column == "Fpu1Active_percent" || column == "ShaderMemoryAccesses_messages" ||
         (column.starts_with("Gti") && column.ends_with("_bytes"));
}

RunInput parse_run_json(std::string_view text, const std::string& source) {
  RunBytes bytes(text, source);
  return parse_run_bytes(bytes);
}

RunInput read_run_input(const std::string& path) {
  RunBytes bytes = RunBytes::open_file(path);
  return parse_run_bytes(bytes);
}

}  // namespace oaprof::report
