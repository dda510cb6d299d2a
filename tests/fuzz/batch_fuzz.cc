// Fuzzes SimGpu's batch interpreter: any dwords must either run to MI_BATCH_BUFFER_END or be
// refused with std::invalid_argument, never crash or write outside the buffers bound to it.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "mmio/registers.h"
#include "mmio/sim_gpu.h"

namespace {

using namespace oaprof;

class Buffer final : public mmio::GpuAddressSpace {
 public:
  static constexpr std::uint64_t kBase = 0x10000;
  std::uint8_t* resolve(std::uint64_t address, std::size_t size) override {
    if (address < kBase || size > bytes.size() || address - kBase > bytes.size() - size) {
      throw std::invalid_argument("unmapped");
    }
    return bytes.data() + (address - kBase);
  }
  std::vector<std::uint8_t> bytes = std::vector<std::uint8_t>(4096);
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::uint32_t> batch(size / 4);
  if (!batch.empty()) std::memcpy(batch.data(), data, batch.size() * 4);
  // One simulator for all inputs: building its 2 MiB register file per input is most of the cost.
  static mmio::ManualClock clock;
  static mmio::SimGpu sim(mmio::SimConfig{}, clock);
  clock.advance_ns(1000);
  sim.write32(mmio::reg::kOaControl, (5u << mmio::reg::kOaControlSelectShift) | 1u);
  Buffer memory;
  try {
    sim.execute_batch(batch, memory);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
