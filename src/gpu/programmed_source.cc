#include "gpu/programmed_source.h"

#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::gpu {

void CounterSource::start(oa::ReportFormat format, const mmio::OaConfig& config) {
  if (!config.mux.empty() || !config.boolean.empty() || !config.flex.empty()) {
    throw std::invalid_argument(fmt::format(
        "--access {} cannot program a metric set's registers; use --access mmio, rpc or perf",
        name()));
  }
  start(format);
}

ProgrammedSource::ProgrammedSource(Device& device) : device_(device), programmer_(*device.mmio) {}

void ProgrammedSource::start(oa::ReportFormat format) { start(format, mmio::OaConfig{}); }

void ProgrammedSource::start(oa::ReportFormat format, const mmio::OaConfig& config) {
  programmer_.program(mmio::plan_oa_programming(device_.platform, format, config));
  format_ = format;
  started_ = true;
  config_lost_ = false;
}

void ProgrammedSource::stop() {
  programmer_.restore();
  started_ = false;
}

void ProgrammedSource::signal_kernel(bool running, const oa::KernelWork* work) {
  if (device_.sim != nullptr) device_.sim->set_kernel_running(running, work);
}

void ProgrammedSource::check_context_registers() {
  config_lost_ = !programmer_.lost_watched_registers().empty();
  if (config_lost_) programmer_.reprogram_watched_registers();
}

void ProgrammedSource::require_started() const {
  if (!started_) {
    throw std::logic_error(fmt::format("{} read-out: snapshot before start()", name()));
  }
}

}  // namespace oaprof::gpu
