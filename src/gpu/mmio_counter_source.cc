// The mmio read-out: reads the counter registers one by one and lays them out as the hardware
// would have written a report of the selected format, so everything downstream decodes one thing.
#include <stdexcept>

#include <fmt/format.h>

#include "gpu/counter_source.h"
#include "gpu/programmed_source.h"
#include "mmio/counter_registers.h"

namespace oaprof::gpu {
namespace {

class MmioCounterSource final : public ProgrammedSource {
 public:
  MmioCounterSource(Device& device, std::string_view name)
      : ProgrammedSource(device), name_(name) {}
  ~MmioCounterSource() override { stop(); }

  std::string_view name() const override { return name_; }

  oa::RawReport snapshot(std::uint32_t report_id) override {
    require_started();
    check_context_registers();
    mmio::Mmio& m = *device_.mmio;
    oa::Report r = mmio::read_counter_registers(
        format_, [&m](std::uint32_t offset) { return m.read32(offset); });
    r.rpt_id = report_id;
    return oa::encode(format_, r);
  }

 private:
  std::string_view name_;
};

}  // namespace

std::unique_ptr<CounterSource> make_mmio_source(Device& device) {
  return std::make_unique<MmioCounterSource>(device, "mmio");
}

std::unique_ptr<CounterSource> make_sim_source(Device& device) {
  if (!device.simulated()) {
    throw std::invalid_argument(fmt::format(
        "--access sim reads the simulator, but the device is {}; use --device sim, or --access "
        "mmio for this device", device.label()));
  }
  return std::make_unique<MmioCounterSource>(device, "sim");
}

}  // namespace oaprof::gpu
