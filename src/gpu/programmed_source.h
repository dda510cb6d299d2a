// What the mmio and rpc read-outs share: they program the OA unit over MMIO themselves, so they
// save and restore every register, and they must watch the context-saved registers that a
// context switch reloads on Gen8–11. Private to src/gpu.
#pragma once

#include <string_view>

#include "gpu/counter_source.h"
#include "mmio/oa_programmer.h"

namespace oaprof::gpu {

class ProgrammedSource : public CounterSource {
 public:
  explicit ProgrammedSource(Device& device);

  void start(oa::ReportFormat format) override;
  void start(oa::ReportFormat format, const mmio::OaConfig& config) override;
  void stop() override;
  bool config_lost() const override { return config_lost_; }
  std::optional<double> gpu_freq_mhz() override { return read_gpu_freq_mhz(device_); }

 protected:
  void signal_kernel(bool running, const oa::KernelWork* work) override;
  // Call at the top of every snapshot: flags and repairs lost context-saved registers.
  void check_context_registers();
  void require_started() const;

  Device& device_;
  mmio::OaProgrammer programmer_;
  oa::ReportFormat format_ = oa::ReportFormat::kA32u40_A4u32_B8_C8;
  bool started_ = false;
  bool config_lost_ = false;
};

}  // namespace oaprof::gpu
