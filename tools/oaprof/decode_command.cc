// `oaprof decode`: turns a file of raw OA reports, or of i915 perf records, into CSV or JSON rows
// (one per pair of consecutive reports: raw deltas and every counter of a metric set), so captures
// from any tool can be read with oaprof's formats and equations.
#include <cmath>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/cli.h"
#include "oa/builtin_metric_set.h"
#include "oa/device_facts.h"
#include "oa/report_format.h"
#include "oa/report_stream.h"
#include "oa/topology.h"
#include "report/csv.h"
#include "report/json_text.h"
#include "session/metric_source.h"
#include "tools/oaprof/commands.h"

namespace oaprof::tools {
namespace {

namespace fs = std::filesystem;

constexpr std::uintmax_t kMaxInputBytes = 1u << 30;

struct DecodeOptions {
  std::string platform;
  std::string format;       // empty: the metric set's format, else the platform's 256-byte one
  double timestamp_hz = 0;  // 0: the platform's
  std::string metric_set;
  std::string metrics_xml;
  std::string input = "auto";
  std::string output = "-";
  bool json = false;
  int eus = 0;        // --eus: the capturing part's EUs (0: the platform table's)
  int subslices = 0;  // --subslices
  std::string file;
};

constexpr std::size_t kPieceBytes = 1u << 20;

// The capture a MiB at a time, so that memory does not grow with the file: a hostile file of
// millions of records costs what a short one does (docs/cli.md, decode).
void read_pieces(const std::string& path,
                 const std::function<void(std::span<const std::uint8_t>)>& piece) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot read {}: {}", path, ec.message()));
  if (size > kMaxInputBytes) {
    throw std::runtime_error(fmt::format("{} is {} bytes; decode reads at most 1 GiB", path, size));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot open {}", path));
  std::vector<std::uint8_t> buffer(kPieceBytes);
  std::uintmax_t total = 0;
  while (in) {
    in.read(reinterpret_cast<char*>(buffer.data()), static_cast<std::streamsize>(buffer.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    total += n;
    if (total > kMaxInputBytes) {  // it grew after the check
      throw std::runtime_error(fmt::format("{} grew past 1 GiB while being read", path));
    }
    if (n > 0) piece(std::span<const std::uint8_t>(buffer.data(), n));
  }
  if (in.bad()) throw std::runtime_error(fmt::format("reading {} failed", path));
}

// A value a division by zero went into is empty (docs/metrics.md: IGT prints 0 there).
std::string value_text(const oa::EquationValue& v) {
  if (v.div_by_zero) return {};
  return v.is_float ? fmt::format("{:.6g}", v.f) : fmt::format("{}", v.u);
}

// The header: its names, and the metric set's symbols (from a file the user chose), go through
// report's CSV quoting like every cell of text.
std::vector<std::string> csv_columns(const oa::FormatLayout& layout, const oa::MetricSet* set) {
  std::vector<std::string> columns{
      "row",    "lost",      "begin_offset", "end_offset",      "reasons",          "ctx_valid",
      "ctx_id", "timestamp", "gpu_ticks",    "wraps_corrected", "interval_too_long"};
  for (int i = layout.a_begin(); i < layout.a_end(); ++i) columns.push_back(fmt::format("A{}", i));
  for (int i = 0; i < layout.b_count; ++i) columns.push_back(fmt::format("B{}", i));
  for (int i = 0; i < layout.c_count; ++i) columns.push_back(fmt::format("C{}", i));
  if (set != nullptr) {
    for (const oa::MetricCounter& c : set->counters()) columns.push_back(c.symbol);
  }
  return columns;
}

std::string csv_row(const oa::DecodedRow& r, const oa::FormatLayout& layout) {
  if (r.lost) {
    return fmt::format("{},{},{},{}", r.index,
                       report::csv_text(oa::perf_record_type_name(r.lost_type)), r.begin_offset,
                       r.end_offset);
  }
  std::string line = fmt::format(
      "{},,{},{},{},{},{},{},{},{},{}", r.index, r.begin_offset, r.end_offset,
      report::csv_text(oa::report_reason_names(r.end_reasons)), r.context_valid ? 1 : 0, r.ctx_id,
      r.deltas.timestamp, r.deltas.has_gpu_ticks ? fmt::format("{}", r.deltas.gpu_ticks) : "",
      r.deltas.wraps_corrected, r.deltas.interval_too_long ? 1 : 0);
  for (int i = layout.a_begin(); i < layout.a_end(); ++i) line += fmt::format(",{}", r.deltas.a[i]);
  for (int i = 0; i < layout.b_count; ++i) line += fmt::format(",{}", r.deltas.b[i]);
  for (int i = 0; i < layout.c_count; ++i) line += fmt::format(",{}", r.deltas.c[i]);
  for (const oa::EquationValue& v : r.metrics) line += "," + value_text(v);
  return line;
}

nlohmann::json json_row(const oa::DecodedRow& r, const oa::FormatLayout& layout,
                        const oa::MetricSet* set) {
  nlohmann::json row{
      {"row", r.index}, {"begin_offset", r.begin_offset}, {"end_offset", r.end_offset}};
  if (r.lost) {
    row["lost"] = oa::perf_record_type_name(r.lost_type);
    return row;
  }
  row["reasons"] = oa::report_reason_names(r.end_reasons);
  row["ctx_valid"] = r.context_valid;
  row["ctx_id"] = r.ctx_id;
  row["timestamp"] = r.deltas.timestamp;
  if (r.deltas.has_gpu_ticks) row["gpu_ticks"] = r.deltas.gpu_ticks;
  row["wraps_corrected"] = r.deltas.wraps_corrected;
  row["interval_too_long"] = r.deltas.interval_too_long;
  nlohmann::json raw;
  for (int i = layout.a_begin(); i < layout.a_end(); ++i)
    raw[fmt::format("A{}", i)] = r.deltas.a[i];
  for (int i = 0; i < layout.b_count; ++i) raw[fmt::format("B{}", i)] = r.deltas.b[i];
  for (int i = 0; i < layout.c_count; ++i) raw[fmt::format("C{}", i)] = r.deltas.c[i];
  row["deltas"] = raw;
  if (set != nullptr) {
    nlohmann::json metrics;
    for (std::size_t i = 0; i < r.metrics.size(); ++i) {
      const oa::EquationValue& v = r.metrics[i];
      nlohmann::json& value = metrics[set->counters()[i].symbol];
      if (v.div_by_zero) {
        value = nullptr;
      } else if (v.is_float) {
        value = v.f;
      } else {
        value = v.u;
      }
    }
    row["metrics"] = metrics;
  }
  return row;
}

// The JSON document up to its rows: what the capture is and how it was read.
nlohmann::json json_head(const oa::FormatLayout& layout, const oa::MetricSet* set,
                         const oa::Platform& platform, const oa::DeviceFacts& facts) {
  nlohmann::json doc;
  doc["platform"] = platform.metrics_file;
  doc["topology_source"] = std::string(oa::topology_source_name(facts.topology_source));
  doc["topology"] = {{"eus", facts.topology.eus},
                     {"subslices", facts.topology.subslices},
                     {"slices", facts.topology.slices}};
  doc["format"] = layout.name;
  doc["metric_set"] = set != nullptr ? set->symbol() : "";
  nlohmann::json counters = nlohmann::json::array();
  if (set != nullptr) {
    for (const oa::MetricCounter& c : set->counters()) {
      counters.push_back({{"symbol", c.symbol}, {"name", c.name}, {"units", c.units}});
    }
  }
  doc["counters"] = counters;
  return doc;
}

// Writes each row as it is decoded, never holding them all: the CSV header or the JSON
// document's head first, the rows, then the document's end.
class RowWriter {
 public:
  RowWriter(std::ostream& out, bool json, const oa::FormatLayout& layout, const oa::MetricSet* set)
      : out_(out), json_(json), layout_(layout), set_(set) {}

  void begin(const oa::Platform& platform, const oa::DeviceFacts& facts) {
    if (!json_) {
      out_ << report::csv_text_line(csv_columns(layout_, set_)) << '\n';
      return;
    }
    std::string head = report::json_text(json_head(layout_, set_, platform, facts), 2);
    head.resize(head.size() - 2);  // "\n}": the rows come last
    out_ << head << ",\n  \"rows\": [";
  }

  void row(const oa::DecodedRow& r) {
    if (!json_) {
      out_ << csv_row(r, layout_) << '\n';
      return;
    }
    // One row pretty-printed at the depth of the rows array (JSON strings hold no raw newline).
    std::string text = report::json_text(json_row(r, layout_, set_), 2);
    std::string indented;
    for (char c : text) indented += c == '\n' ? std::string("\n    ") : std::string(1, c);
    out_ << (rows_++ == 0 ? "\n    " : ",\n    ") << indented;
  }

  void end() {
    if (json_) out_ << (rows_ == 0 ? "]\n}\n" : "\n  ]\n}\n");
  }

 private:
  std::ostream& out_;
  bool json_;
  const oa::FormatLayout& layout_;
  const oa::MetricSet* set_;
  std::size_t rows_ = 0;
};

// The set's report format (IGT's oa_format attribute) when it names one, checked against
// --format when that is given too; else --format; else the platform's 256-byte format.
oa::ReportFormat decode_format(const DecodeOptions& opt, const oa::Platform& platform,
                               const oa::MetricSet* set) {
  std::optional<oa::ReportFormat> from_set;
  std::string_view igt_name;
  if (set != nullptr) {
    igt_name = set->attribute("oa_format");
    from_set = oa::format_from_igt_name(igt_name, platform.gen);
    if (!from_set) {
      throw std::invalid_argument(fmt::format(
          "metric set {} is computed from '{}' reports, which oaprof cannot read on {}; give "
          "another set",
          set->symbol(), igt_name, oa::generation_name(platform.gen)));
    }
  }
  if (opt.format.empty()) return from_set.value_or(oa::default_format(platform.gen));
  const oa::ReportFormat given = oa::parse_format(opt.format, platform.gen);
  if (from_set && !igt_name.empty() && *from_set != given) {
    throw std::invalid_argument(fmt::format(
        "metric set {} is computed from {} reports (oa_format {}), not {}; drop --format or give "
        "--format {}",
        set->symbol(), oa::layout_of(*from_set).name, igt_name, oa::layout_of(given).name,
        oa::layout_of(*from_set).name));
  }
  return given;
}

int run_decode(const DecodeOptions& opt) {
  oa::Platform platform = oa::simulated_platform();
  oa::DeviceFacts facts;
  oa::ReportFormat format{};
  std::unique_ptr<oa::MetricSet> set;
  // Bad options or input exit 2, an unreadable file 3: base::run_command says why.
  platform =
      opt.platform.empty() ? oa::simulated_platform() : oa::require_platform_by_name(opt.platform);
  if (opt.timestamp_hz < 0 || !std::isfinite(opt.timestamp_hz)) {
    throw std::invalid_argument(fmt::format(
        "--timestamp-frequency {} is not a frequency in Hz; give the part's (OA) timestamp "
        "frequency, e.g. 19200000",
        opt.timestamp_hz));
  }
  // Offline there is no device to ask: the capturing part's topology and timestamp frequency
  // come from the options.
  facts = oa::facts_from_options(platform, opt.eus, opt.subslices);
  if (opt.timestamp_hz > 0) {
    // The OA unit's rate, as the kernel gives it (param 57, xe's oa_timestamp_freq); the
    // decoded delta is shifted on Xe-LPG.
    facts.timestamp_hz = oa::report_timestamp_hz(platform.gen, opt.timestamp_hz);
    facts.timestamp_note = "--timestamp-frequency";
  }
  platform = oa::apply_facts(platform, facts);
  std::string symbol = opt.metric_set;
  if (symbol.empty() && opt.metrics_xml.empty() && oa::has_builtin_metric_set(platform)) {
    symbol = oa::kBuiltinMetricSetSymbol;
  }
  if (!opt.metrics_xml.empty() && symbol.empty()) {
    throw std::invalid_argument("--metrics-xml needs --metric-set SET (see oaprof metrics list)");
  }
  if (!symbol.empty()) {
    set = std::make_unique<oa::MetricSet>(
        session::load_metric_set(platform, symbol, opt.metrics_xml));
  }
  format = decode_format(opt, platform, set.get());
  const oa::PieceSource input = [&opt](const auto& piece) { read_pieces(opt.file, piece); };
  const oa::StreamKind kind = opt.input == "auto" ? oa::detect_stream_kind(input, format)
                                                  : oa::parse_stream_kind(opt.input);
  // A capture that does not decode is refused before anything is written: a first pass checks
  // it whole (detection has checked perf records already).
  if (opt.input != "auto" || kind == oa::StreamKind::kRawReports) {
    oa::read_report_stream(input, format, kind, [](const oa::StreamEntry&) {});
  }
  const oa::FormatLayout& layout = oa::layout_of(format);
  oa::DecodeOptions options;
  options.gen = platform.gen;
  options.timestamp_hz = platform.timestamp_hz;
  options.max_interval_ns =
      oa::max_safe_read_interval_ns(platform.max_freq_mhz, platform.eus, platform.timestamp_hz,
                                    layout.header_bits() - layout.timestamp_shift);
  options.metric_set = set.get();
  options.vars = oa::device_variables(platform, facts);
  std::ofstream file;
  std::ostream* out = &std::cout;
  if (opt.output != "-") {
    file.open(opt.output);
    if (!file) {
      std::cerr << fmt::format("oaprof decode: cannot write {}\n", opt.output);
      return base::kExitOutput;
    }
    out = &file;
  }
  RowWriter writer(*out, opt.json, layout, set.get());
  writer.begin(platform, facts);
  oa::RowDecoder decoder(options);
  oa::read_report_stream(input, format, kind, [&](const oa::StreamEntry& entry) {
    if (const auto row = decoder.next(entry)) writer.row(*row);
  });
  writer.end();
  out->flush();
  if (!*out) {
    std::cerr << fmt::format("oaprof decode: writing {} failed\n", opt.output);
    return base::kExitOutput;
  }
  return 0;
}

std::pair<CLI::App*, Action> add_decode_command(CLI::App& app) {
  auto opt = std::make_shared<DecodeOptions>();
  CLI::App* sub =
      app.add_subcommand("decode", "raw OA reports or i915 perf records as CSV or JSON rows");
  sub->add_option("FILE", opt->file, "the capture")->required();
  sub->add_option("--platform", opt->platform,
                  "the platform (IGT codename) that wrote it (default: kblgt2)");
  sub->add_option("--format", opt->format,
                  "report format: a select code (101, 5) or a name (default: the set's)");
  sub->add_option("--timestamp-frequency", opt->timestamp_hz,
                  "OA timestamp Hz, as i915/xe give it (default: platform's)");
  sub->add_option("--metric-set", opt->metric_set,
                  "metric set symbol (default: Builtin; `oaprof metrics list`)");
  sub->add_option("--metrics-xml", opt->metrics_xml, "IGT metric file to take the set from");
  sub->add_option("--input", opt->input,
                  "auto, raw (reports back to back) or perf (i915 perf records)")
      ->capture_default_str();
  sub->add_option("-o,--output", opt->output, "output file, - for stdout")
      ->check(base::cli::output_file())
      ->capture_default_str();
  sub->add_flag("--json", opt->json, "write JSON instead of CSV");
  sub->add_option("--eus", opt->eus,
                  "EUs of the part that wrote it (default: the platform table's)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--subslices", opt->subslices,
                  "subslices of the part that wrote it (default: the table's)")
      ->check(CLI::PositiveNumber);
  sub->footer(
      "Exit status:\n  0  decoded\n  2  bad options or a capture that does not decode\n"
      "  3  the capture or the metric file cannot be read\n  4  the output cannot be written");
  return {sub, [opt] {
            // Nothing here needs root: under sudo it reads and writes as the user.
            if (const int rc = become_sudo_user("decode"); rc != 0) return rc;
            return run_decode(*opt);
          }};
}

}  // namespace

OAPROF_REGISTER_SUBCOMMAND(decode, add_decode_command);

}  // namespace oaprof::tools
