#include "attach/launch_filter.h"

#include <stdexcept>

namespace oaprof::attach {
namespace {

constexpr std::string_view kRegexPrefix = "regex:";

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
  const bool match =
      name_.empty() || (regex_ ? std::regex_match(kernel_name, *regex_) : kernel_name == name_);
  if (!match) return false;
  const std::uint64_t ordinal = matched_++;
  if (ordinal < skip_) return false;
  return !count_ || ordinal - skip_ < *count_;
}

}  // namespace oaprof::attach
