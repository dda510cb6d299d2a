#include "bench/sweep.h"

#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::bench {
namespace {

constexpr std::size_t kMaxSweepSteps = 1 << 20;

std::size_t parse_count(std::string_view text, std::string_view what) {
  std::size_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    throw std::invalid_argument(fmt::format("{} '{}' is not a whole number", what, text));
  }
  return v;
}

}  // namespace

std::string_view sweep_param_name(SweepParam p) {
  switch (p) {
    case SweepParam::kWorkGroups:
      return "wg";
    case SweepParam::kWorkItems:
      return "wi";
    case SweepParam::kSize:
      return "size";
  }
  return "?";
}

std::size_t parse_byte_size(std::string_view text) {
  std::size_t mult = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K':
      case 'k':
        mult = std::size_t{1} << 10;
        break;
      case 'M':
      case 'm':
        mult = std::size_t{1} << 20;
        break;
      case 'G':
      case 'g':
        mult = std::size_t{1} << 30;
        break;
      default:
        break;
    }
    if (mult != 1) text.remove_suffix(1);
  }
  const std::size_t v = parse_count(text, "size");
  if (v > SIZE_MAX / mult) throw std::invalid_argument(fmt::format("size '{}' is too large", text));
  return v * mult;
}

Sweep parse_sweep(std::string_view text) {
  const std::string usage =
      "use --sweep wg=FROM:TO[:STEP], wi=FROM:TO[:STEP] or size=FROM:TO[:STEP], STEP an "
      "increment or xN (e.g. wg=1:512, size=4K:64M:x2)";
  const auto eq = text.find('=');
  if (eq == std::string_view::npos) {
    throw std::invalid_argument(fmt::format("--sweep '{}' names no parameter; {}", text, usage));
  }
  Sweep s;
  const std::string_view key = text.substr(0, eq);
  if (key == "wg")
    s.param = SweepParam::kWorkGroups;
  else if (key == "wi")
    s.param = SweepParam::kWorkItems;
  else if (key == "size")
    s.param = SweepParam::kSize;
  else
    throw std::invalid_argument(fmt::format("--sweep: unknown parameter '{}'; {}", key, usage));

  std::vector<std::string_view> parts;
  std::string_view rest = text.substr(eq + 1);
  for (std::size_t colon; (colon = rest.find(':')) != std::string_view::npos;) {
    parts.push_back(rest.substr(0, colon));
    rest = rest.substr(colon + 1);
  }
  parts.push_back(rest);
  if (parts.size() < 2 || parts.size() > 3) {
    throw std::invalid_argument(fmt::format("--sweep '{}': {}", text, usage));
  }
  auto value = [&](std::string_view v) {
    return s.param == SweepParam::kSize ? parse_byte_size(v) : parse_count(v, key);
  };
  const std::size_t from = value(parts[0]), to = value(parts[1]);
  if (from == 0 || from > to) {
    throw std::invalid_argument(
        fmt::format("--sweep '{}': need 1 <= FROM <= TO (got {} and {})", text, from, to));
  }
  bool geometric = false;
  std::size_t step = 1;
  if (parts.size() == 3) {
    std::string_view st = parts[2];
    if (!st.empty() && (st.front() == 'x' || st.front() == '*')) {
      geometric = true;
      st.remove_prefix(1);
      step = parse_count(st, "step");
      if (step < 2) throw std::invalid_argument(fmt::format("--sweep '{}': xN needs N >= 2", text));
    } else {
      step = s.param == SweepParam::kSize ? parse_byte_size(st) : parse_count(st, "step");
      if (step == 0) throw std::invalid_argument(fmt::format("--sweep '{}': step 0", text));
    }
  }
  for (std::size_t v = from; v <= to;) {
    s.values.push_back(v);
    if (s.values.size() > kMaxSweepSteps) {
      throw std::invalid_argument(fmt::format(
          "--sweep '{}' has more than {} steps; use a larger step", text, kMaxSweepSteps));
    }
    const std::size_t next = geometric ? v * step : v + step;
    if (next <= v) break;  // overflow
    v = next;
  }
  return s;
}

ProgressBar::ProgressBar(std::ostream& out, std::size_t total, bool enabled)
    : out_(out), total_(total), enabled_(enabled && total > 0) {}

void ProgressBar::update(std::size_t done, std::string_view label) {
  if (!enabled_) return;
  constexpr std::size_t kWidth = 30;
  const std::size_t filled = done * kWidth / total_;
  out_ << fmt::format("\r[{}{}] {}/{} {}\x1b[K", std::string(filled, '#'),
                      std::string(kWidth - filled, ' '), done, total_, label)
       << std::flush;
}

void ProgressBar::finish() {
  if (enabled_) out_ << "\r\x1b[K" << std::flush;
}

}  // namespace oaprof::bench
