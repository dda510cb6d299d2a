// The mmio read-out: reads the counter registers one by one and lays them out as the hardware
// would have written a report of the selected format, so everything downstream decodes one thing.
#include <optional>

#include "gpu/counter_source.h"
#include "mmio/registers.h"
#include "mmio/saved_registers.h"

namespace oaprof::gpu {
namespace {

class MmioCounterSource final : public CounterSource {
 public:
  explicit MmioCounterSource(Device& device) : device_(device), saved_(*device.mmio) {}
  ~MmioCounterSource() override { stop(); }

  std::string_view name() const override { return "mmio"; }

  void start(oa::ReportFormat format) override {
    format_ = format;
    const auto& layout = oa::layout_of(format);
    saved_.write(mmio::reg::kOaControl,
                 (static_cast<std::uint32_t>(layout.select_code) << mmio::reg::kOaControlSelectShift) |
                     mmio::reg::kOaControlEnable);
  }

  oa::RawReport snapshot(std::uint32_t report_id) override {
    mmio::Mmio& m = *device_.mmio;
    const auto& l = oa::layout_of(format_);
    oa::Report r;
    r.rpt_id = report_id;
    r.timestamp = m.read32(mmio::reg::kRingTimestamp);
    r.gpu_ticks = m.read32(mmio::reg::kGpuTicks);
    for (int i = 0; i < l.a_count; ++i) {
      const int idx = l.a_first + i;
      r.a[idx] = idx < oa::kNumA40 ? read40(m, idx) : m.read32(mmio::reg::a32(idx));
    }
    for (int i = 0; i < l.a32_count; ++i) {
      const int idx = l.a_first + l.a_count + i;
      r.a[idx] = m.read32(mmio::reg::a32(idx));
    }
    for (int i = 0; i < l.b_count; ++i) r.b[i] = m.read32(mmio::reg::b(i));
    for (int i = 0; i < l.c_count; ++i) r.c[i] = m.read32(mmio::reg::c(i));
    return oa::encode(format_, r);
  }

  void stop() override { saved_.restore(); }

  void kernel_running(bool running) override {
    if (device_.sim != nullptr) device_.sim->set_kernel_running(running);
  }

 private:
  // The two halves of a 40-bit counter are separate reads: read high, low, high again and retry
  // the low half when a carry crossed between them, so a snapshot never tears.
  static std::uint64_t read40(mmio::Mmio& m, int i) {
    std::uint32_t hi = m.read32(mmio::reg::a_high(i)) & 0xFF;
    std::uint32_t lo = m.read32(mmio::reg::a_low(i));
    const std::uint32_t hi2 = m.read32(mmio::reg::a_high(i)) & 0xFF;
    if (hi2 != hi) {
      hi = hi2;
      lo = m.read32(mmio::reg::a_low(i));
    }
    return (static_cast<std::uint64_t>(hi) << 32) | lo;
  }

  Device& device_;
  mmio::SavedRegisters saved_;
  oa::ReportFormat format_ = oa::ReportFormat::kA32u40_A4u32_B8_C8;
};

}  // namespace

std::unique_ptr<CounterSource> make_mmio_source(Device& device) {
  return std::make_unique<MmioCounterSource>(device);
}

}  // namespace oaprof::gpu
