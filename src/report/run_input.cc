#include "report/run_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace oaprof::report {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw RunInputError(fmt::format("{}: {}", source, what));
}

// Nesting is checked before parsing so that no document can exhaust the stack or the heap
// through depth alone.
void check_nesting(std::string_view text, const std::string& source) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxRunNesting) {
        fail(source, fmt::format("nested deeper than {} levels; not an oaprof or kernel_runner "
                                 "JSON document",
                                 kMaxRunNesting));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

class Reader {
 public:
  Reader(const json& j, const std::string& source, std::string where)
      : j_(j), source_(source), where_(std::move(where)) {}

  const json* find(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string text(const char* key, bool required = false) const {
    const json* v = find(key);
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
    const json* v = find(key);
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
    const json* v = find(key);
    if (!v) return false;
    if (!v->is_boolean()) wrong(key, "true or false");
    return v->get<bool>();
  }
  [[noreturn]] void missing(const char* key) const {
    fail(source_, fmt::format("{} has no \"{}\"", where_, key));
  }
  [[noreturn]] void wrong(const char* key, const std::string& want) const {
    fail(source_, fmt::format("{}: \"{}\" must be {}", where_, key, want));
  }

 private:
  const json& j_;
  const std::string& source_;
  std::string where_;
};

const json& array_of(const json& doc, const char* key, const std::string& source) {
  const auto it = doc.find(key);
  if (it == doc.end() || !it->is_array()) fail(source, fmt::format("\"{}\" must be an array", key));
  if (it->size() > kMaxRunRows) {
    fail(source, fmt::format("more than {} entries in \"{}\"", kMaxRunRows, key));
  }
  return *it;
}

int small_int(const Reader& r, const char* key, int max) {
  const auto v = r.number(key);
  if (!v) return 0;
  if (*v > max || *v != std::floor(*v)) r.wrong(key, fmt::format("a whole number up to {}", max));
  return static_cast<int>(*v);
}

OaprofLaunch parse_launch(const json& row, const std::string& source, std::size_t i) {
  const std::string where = fmt::format("launch {}", i);
  if (!row.is_object()) fail(source, where + " is not an object");
  if (row.size() > kMaxRunFields)
    fail(source, fmt::format("{} has more than {} fields", where, kMaxRunFields));
  const Reader r(row, source, where);
  OaprofLaunch l;
  l.kernel = r.text("kernel", true);
  l.global_size = r.text("global_size");
  l.local_size = r.text("local_size");
  l.kernel_ns = r.number("kernel_ns");
  l.gpu_time_ns = r.number("gpu_time_ns");
  l.igpu_power_w = r.number("igpu_power_w");
  l.window_ns = r.number("window_ns");
  l.flags = r.text("flags");
  for (const auto& [key, value] : row.items()) {
    if (!value.is_number()) continue;
    const double d = value.get<double>();
    if (std::isfinite(d)) l.numbers[key] = d;
  }
  return l;
}

OaprofRun parse_oaprof(const json& doc, const std::string& source) {
  const Reader r(doc, source, "the run");
  const auto version = r.number("schema_version", true);
  if (*version != 1) {
    fail(source, fmt::format("schema_version {} is not one this oaprof reads (1); write it again "
                             "with this oaprof's --json",
                             *version));
  }
  OaprofRun run;
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
  if (const json* t = r.find("topology")) {
    if (!t->is_object()) r.wrong("topology", "an object");
    const Reader tr(*t, source, "the run's topology");
    if (tr.find("subslices")) run.subslices = small_int(tr, "subslices", 4096);
  }
  const json& launches = array_of(doc, "launches", source);
  run.launches.reserve(launches.size());
  for (std::size_t i = 0; i < launches.size(); ++i)
    run.launches.push_back(parse_launch(launches[i], source, i));
  return run;
}

RunnerRun parse_runner(const json& doc, const std::string& source) {
  const Reader r(doc, source, "the document");
  RunnerRun run;
  run.source = source;
  run.device = r.text("device", true);
  const json& results = array_of(doc, "results", source);
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string where = fmt::format("result {}", i);
    if (!results[i].is_object()) fail(source, where + " is not an object");
    const Reader rr(results[i], source, where);
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
    run.results.push_back(std::move(res));
  }
  return run;
}

}  // namespace

RunInput parse_run_json(std::string_view text, const std::string& source) {
  if (text.size() > kMaxRunInputBytes) {
    fail(source,
         fmt::format("larger than {} MiB; give the report fewer rows", kMaxRunInputBytes >> 20));
  }
  check_nesting(text, source);
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    fail(source,
         "is not valid JSON (a run still being written, or not a JSON file?); give the "
         "file oaprof --json or kernel_runner --json wrote");
  }
  if (!doc.is_object()) fail(source, "is not a JSON object");
  if (doc.contains("launches")) return parse_oaprof(doc, source);
  if (doc.contains("results")) return parse_runner(doc, source);
  fail(source,
       "is neither oaprof's JSON (--json: \"launches\") nor kernel_runner's (--json: "
       "\"results\")");
}

std::string read_run_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) throw RunInputError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw RunInputError(fmt::format("{}: not a regular file; give oaprof's output file", path));
  }
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxRunInputBytes) break;  // the parsers name the bound
  }
  ::close(fd);
  return text;
}

}  // namespace oaprof::report
