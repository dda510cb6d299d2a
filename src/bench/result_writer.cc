#include "bench/result_writer.h"

#include <cmath>

#include <fmt/format.h>

namespace oaprof::bench {
namespace {

double rel_stderr_percent(const Stats& s) { return s.mean > 0 ? 100 * s.stderr_ / s.mean : 0.0; }

// JSON has no NaN or infinity; a figure that is not finite is written as null.
std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "null"; }

}  // namespace

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

ResultWriter::ResultWriter(std::ostream& out, OutputFormat format, std::string device_name)
    : out_(out), format_(format), device_name_(std::move(device_name)) {}

void ResultWriter::row(const RunResult& r, bool fills_hw_threads) {
  const Stats& s = r.stats;
  switch (format_) {
    case OutputFormat::kTable:
      if (!header_written_) {
        out_ << fmt::format("device: {}\n", device_name_);
        out_ << fmt::format("{:<22} {:>9} {:>6} {:>6} {:>8} {:>11} {:>11} {:>10} {:>9} {:>11} {:<9} {}\n",
                            "kernel", "global", "local", "iter", "repeats", "median_us",
                            "mean_us", "stddev_us", "stderr_%", "rate", "unit", "fill");
        header_written_ = true;
      }
      out_ << fmt::format("{:<22} {:>9} {:>6} {:>6} {:>8} {:>11.3f} {:>11.3f} {:>10.3f} {:>9.2f} {:>11.4g} {:<9} {}\n",
                          r.spec.name, r.global_size, r.local_size, r.iterations, s.count,
                          s.median / 1e3, s.mean / 1e3, s.stddev / 1e3, rel_stderr_percent(s),
                          r.rate(), unit_name(r.unit), fills_hw_threads ? "*" : "");
      break;
    case OutputFormat::kCsv:
      if (!header_written_) {
        out_ << "kernel,variant,device,global,local,iterations,outer,size_bytes,repeats,median_ns,"
                "mean_ns,stddev_ns,stderr_ns,min_ns,max_ns,rate,unit,verified,fills_hw_threads\n";
        header_written_ = true;
      }
      out_ << fmt::format("{},{},\"{}\",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                          r.spec.name, variant_name(r.variant), device_name_, r.global_size,
                          r.local_size, r.iterations, r.outer, r.size_bytes, s.count, s.median,
                          s.mean, s.stddev, s.stderr_, s.min, s.max, r.rate(), unit_name(r.unit),
                          r.verified, fills_hw_threads ? 1 : 0);
      break;
    case OutputFormat::kJson: {
      std::string samples;
      for (double v : r.kernel_ns) samples += (samples.empty() ? "" : ",") + json_number(v);
      json_rows_.push_back(fmt::format(
          "{{\"kernel\":{},\"variant\":{},\"global\":{},\"local\":{},\"iterations\":{},"
          "\"outer\":{},\"size_bytes\":{},\"repeats\":{},\"median_ns\":{},\"mean_ns\":{},"
          "\"stddev_ns\":{},\"stderr_ns\":{},\"min_ns\":{},\"max_ns\":{},\"work\":{},\"rate\":{},"
          "\"unit\":{},\"verified\":{},\"fills_hw_threads\":{},\"samples_ns\":[{}]}}",
          json_quote(r.spec.name), json_quote(variant_name(r.variant)), r.global_size,
          r.local_size, r.iterations, r.outer, r.size_bytes, s.count, json_number(s.median),
          json_number(s.mean), json_number(s.stddev), json_number(s.stderr_), json_number(s.min),
          json_number(s.max), json_number(r.work), json_number(r.rate()),
          json_quote(unit_name(r.unit)), r.verified, fills_hw_threads, samples));
      break;
    }
  }
  out_.flush();
}

void ResultWriter::skipped(std::string_view kernel, std::string_view reason) {
  switch (format_) {
    case OutputFormat::kTable: out_ << reason << "\n"; break;
    case OutputFormat::kCsv: break;  // a CSV holds measured rows only; the reason goes to stderr
    case OutputFormat::kJson:
      json_skipped_.push_back(
          fmt::format("{{\"kernel\":{},\"reason\":{}}}", json_quote(kernel), json_quote(reason)));
      break;
  }
}

void ResultWriter::finish() {
  if (format_ != OutputFormat::kJson) return;
  std::string rows, skipped;
  for (const auto& r : json_rows_) rows += (rows.empty() ? "\n  " : ",\n  ") + r;
  for (const auto& r : json_skipped_) skipped += (skipped.empty() ? "" : ",") + r;
  out_ << fmt::format("{{\"device\":{},\"results\":[{}\n],\"skipped\":[{}]}}\n",
                      json_quote(device_name_), rows, skipped);
  out_.flush();
}

}  // namespace oaprof::bench
