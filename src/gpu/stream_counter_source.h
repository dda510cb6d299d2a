// What the two kernel-stream read-outs (--access perf: i915's perf stream in i915/, xe's
// observation stream in xe/) share: the stream holds a metric set's register configuration, so a
// set without one (oaprof's built-in set) is refused before anything opens, and a start that
// fails half-way closes what it opened.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "gpu/counter_source.h"

namespace oaprof::gpu {

class StreamCounterSource : public CounterSource {
 public:
  std::string_view name() const final { return "perf"; }

  void start(oa::ReportFormat format) final { start(format, mmio::OaConfig{}); }

  void start(oa::ReportFormat format, const mmio::OaConfig& config) final {
    stop();
    if (config.guid.empty()) throw std::invalid_argument(no_configuration_message());
    try {
      open(format, config);
    } catch (...) {
      stop();
      throw;
    }
  }

 protected:
  // Why the driver cannot stream a set without registers, and what to choose instead.
  virtual std::string no_configuration_message() const = 0;
  // Adds the configuration and opens the stream; stop() undoes whatever part of it was done.
  virtual void open(oa::ReportFormat format, const mmio::OaConfig& config) = 0;
};

}  // namespace oaprof::gpu
