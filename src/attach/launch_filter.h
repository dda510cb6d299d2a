// Which launches oaprof measures, as Nsight Compute selects them: a kernel-name filter (exact name
// or `regex:RE`), then `skip` matching launches, then at most `count` of them. Launches that are
// not selected run untouched. The selection reaches the layer in its LayerConfig
// (attach/layer_config.h).
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <string>

namespace oaprof::attach {

class LaunchFilter {
 public:
  // `name`: empty (every kernel), an exact kernel name, or "regex:RE" (ECMAScript, whole name).
  // Throws std::invalid_argument on a bad regular expression.
  LaunchFilter(const std::string& name, std::uint64_t skip, std::optional<std::uint64_t> count);
  LaunchFilter() : LaunchFilter("", 0, std::nullopt) {}

  // Decides for the next launch of `kernel_name`; counts it when it matches the name.
  bool select(const std::string& kernel_name);

  // The selection as constructed, for oaprof to hand to the layer.
  const std::string& name() const { return name_; }
  std::uint64_t skip() const { return skip_; }
  std::optional<std::uint64_t> count() const { return count_; }

 private:
  std::string name_;
  std::optional<std::regex> regex_;
  std::uint64_t skip_;
  std::optional<std::uint64_t> count_;
  std::uint64_t matched_ = 0;
};

}  // namespace oaprof::attach
