#include "attach/launch_filter.h"

#include <cerrno>
#include <cstdlib>
#include <stdexcept>

namespace oaprof::attach {
namespace {

constexpr std::string_view kRegexPrefix = "regex:";

std::uint64_t parse_u64(const char* var, const char* text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno != 0 || *text == '-') {
    throw std::invalid_argument(std::string(var) + "='" + text + "' is not a whole number");
  }
  return v;
}

}  // namespace

LaunchFilter::LaunchFilter(const std::string& name, std::uint64_t skip,
                           std::optional<std::uint64_t> count)
    : name_(name), skip_(skip), count_(count) {
  if (name_.rfind(kRegexPrefix, 0) == 0) {
    try {
      regex_.emplace(name_.substr(kRegexPrefix.size()), std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("kernel-name filter '" + name_ +
                                  "' is not a valid regular expression: " + e.what());
    }
  }
}

bool LaunchFilter::select(const std::string& kernel_name) {
  const bool match = name_.empty() || (regex_ ? std::regex_match(kernel_name, *regex_)
                                              : kernel_name == name_);
  if (!match) return false;
  const std::uint64_t ordinal = matched_++;
  if (ordinal < skip_) return false;
  return !count_ || ordinal - skip_ < *count_;
}

std::map<std::string, std::string> LaunchFilter::to_env() const {
  std::map<std::string, std::string> env;
  if (!name_.empty()) env["OAPROF_KERNEL_NAME"] = name_;
  if (skip_ > 0) env["OAPROF_LAUNCH_SKIP"] = std::to_string(skip_);
  if (count_) env["OAPROF_LAUNCH_COUNT"] = std::to_string(*count_);
  return env;
}

LaunchFilter LaunchFilter::from_env(const char* (*getenv_fn)(const char*)) {
  const char* name = getenv_fn("OAPROF_KERNEL_NAME");
  const char* skip = getenv_fn("OAPROF_LAUNCH_SKIP");
  const char* count = getenv_fn("OAPROF_LAUNCH_COUNT");
  return LaunchFilter(name ? name : "", skip ? parse_u64("OAPROF_LAUNCH_SKIP", skip) : 0,
                      count ? std::optional(parse_u64("OAPROF_LAUNCH_COUNT", count))
                            : std::nullopt);
}

}  // namespace oaprof::attach
