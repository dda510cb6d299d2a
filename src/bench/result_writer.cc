#include "bench/result_writer.h"

#include <fmt/format.h>

#include "report/csv.h"
#include "report/json_text.h"

namespace oaprof::bench {
namespace {

using nlohmann::ordered_json;

double rel_stderr_percent(const Stats& s) { return s.mean > 0 ? 100 * s.stderr_ / s.mean : 0.0; }

// One result as JSON; a figure that is not finite becomes null (nlohmann writes NaN and infinity
// so, since JSON has neither).
ordered_json json_result(const RunResult& r, bool fills_hw_threads) {
  const Stats& s = r.stats;
  return {{"kernel", r.spec.name},
          {"variant", variant_name(r.variant)},
          {"global", r.global_size},
          {"local", r.local_size},
          {"iterations", r.iterations},
          {"outer", r.outer},
          {"size_bytes", r.size_bytes},
          {"repeats", s.count},
          {"median_ns", s.median},
          {"mean_ns", s.mean},
          {"stddev_ns", s.stddev},
          {"stderr_ns", s.stderr_},
          {"min_ns", s.min},
          {"max_ns", s.max},
          {"work", r.work},
          {"rate", r.rate()},
          {"unit", unit_name(r.unit)},
          {"verified", r.verified},
          {"fills_hw_threads", fills_hw_threads},
          {"samples_ns", r.kernel_ns}};
}

}  // namespace

ResultWriter::ResultWriter(std::ostream& out, OutputFormat format, std::string device_name)
    : out_(out), format_(format), device_name_(std::move(device_name)) {}

void ResultWriter::row(const RunResult& r, bool fills_hw_threads) {
  switch (format_) {
    case OutputFormat::kTable:
      table_row(r, fills_hw_threads);
      break;
    case OutputFormat::kCsv:
      csv_row(r, fills_hw_threads);
      break;
    case OutputFormat::kJson:
      json_results_.push_back(json_result(r, fills_hw_threads));
      break;
  }
  out_.flush();
}

void ResultWriter::table_row(const RunResult& r, bool fills_hw_threads) {
  const Stats& s = r.stats;
  if (!header_written_) {
    out_ << fmt::format("device: {}\n", device_name_);
    out_ << fmt::format(
        "{:<22} {:>9} {:>6} {:>6} {:>8} {:>11} {:>11} {:>10} {:>9} {:>11} {:<9} {}\n", "kernel",
        "global", "local", "iter", "repeats", "median_us", "mean_us", "stddev_us", "stderr_%",
        "rate", "unit", "fill");
    header_written_ = true;
  }
  out_ << fmt::format(
      "{:<22} {:>9} {:>6} {:>6} {:>8} {:>11.3f} {:>11.3f} {:>10.3f} {:>9.2f} {:>11.4g} {:<9} {}\n",
      r.spec.name, r.global_size, r.local_size, r.iterations, s.count, s.median / 1e3, s.mean / 1e3,
      s.stddev / 1e3, rel_stderr_percent(s), r.rate(), unit_name(r.unit),
      fills_hw_threads ? "*" : "");
}

// Text cells (names, the device, the unit) go through report's CSV quoting, numbers as fmt
// writes them.
void ResultWriter::csv_row(const RunResult& r, bool fills_hw_threads) {
  const Stats& s = r.stats;
  if (!header_written_) {
    out_ << report::csv_text_line({"kernel", "variant", "device", "global", "local", "iterations",
                                   "outer", "size_bytes", "repeats", "median_ns", "mean_ns",
                                   "stddev_ns", "stderr_ns", "min_ns", "max_ns", "rate", "unit",
                                   "verified", "fills_hw_threads"})
         << '\n';
    header_written_ = true;
  }
  out_ << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                      report::csv_text(r.spec.name), report::csv_text(variant_name(r.variant)),
                      report::csv_text(device_name_), r.global_size, r.local_size, r.iterations,
                      r.outer, r.size_bytes, s.count, s.median, s.mean, s.stddev, s.stderr_, s.min,
                      s.max, r.rate(), report::csv_text(unit_name(r.unit)), r.verified,
                      fills_hw_threads ? 1 : 0);
}

void ResultWriter::skipped(std::string_view kernel, std::string_view reason) {
  switch (format_) {
    case OutputFormat::kTable:
      out_ << reason << "\n";
      break;
    case OutputFormat::kCsv:
      break;  // a CSV holds measured rows only; the reason goes to stderr
    case OutputFormat::kJson:
      json_skipped_.push_back({{"kernel", kernel}, {"reason", reason}});
      break;
  }
}

void ResultWriter::finish() {
  if (format_ != OutputFormat::kJson) return;
  const ordered_json doc{
      {"device", device_name_}, {"results", json_results_}, {"skipped", json_skipped_}};
  out_ << report::json_text(doc) << '\n';
  out_.flush();
}

}  // namespace oaprof::bench
