// The mmio read-out: reads the counter registers one by one and lays them out as the hardware
// would have written a report of the selected format, so everything downstream decodes one thing.
#include <algorithm>
#include <cstdint>
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
  bool readout_interrupted() const override { return interrupted_; }
  std::optional<ReadoutSkew> readout_skew() const override {
    const double ns_per_tick = 1e9 / device_.platform.timestamp_hz;
    ReadoutSkew skew = skew_;
    skew.fastest_ns = skew.snapshots == 0 ? 0 : fastest_span_ * ns_per_tick;
    skew.widest_kept_ns = widest_kept_span_ * ns_per_tick;
    return skew;
  }

  oa::RawReport snapshot(std::uint32_t report_id) override {
    require_started();
    check_context_registers();
    oa::Report r = read_out();
    r.rpt_id = report_id;
    return oa::encode(format_, r);
  }

 private:
  static constexpr int kAttempts = 8;

  // The read-out is fifty-odd separate register reads, not one report written at once: a thread
  // preempted between them pairs values of different instants, and with RING_TIMESTAMP read
  // first, GPU_TICKS (say) then runs ahead of the time it is divided by, by the length of the
  // preemption. RING_TIMESTAMP read again after the rest brackets the read-out. When the bracket
  // is longer than twice the shortest one seen so far (and than a floor of 10 µs, so that jitter
  // is not chased), something interrupted it, and it is read again, up to kAttempts times; the
  // tightest is kept, and when even that one is over the tolerance the snapshot says so
  // (readout_interrupted) rather than pass its skew off as counts.
  oa::Report read_out() {
    mmio::Mmio& m = *device_.mmio;
    const mmio::reg::OaRegisterBlock& block = mmio::reg::oa_block(device_.platform.gen);
    auto read = [&m](std::uint32_t offset) { return m.read32(offset); };
    const auto floor_ticks = static_cast<std::uint32_t>(device_.platform.timestamp_hz * 10e-6);
    oa::Report best;
    std::uint32_t best_span = UINT32_MAX;
    int attempts = 0;
    while (attempts < kAttempts) {
      ++attempts;
      const int oa_cs_shift = device_.facts.oa_cs_shift;
      oa::Report r = mmio::read_counter_registers(block, format_, oa_cs_shift, read);
      const auto first_ts = static_cast<std::uint32_t>(r.timestamp >> oa_cs_shift);
      const std::uint32_t span = m.read32(mmio::reg::kRingTimestamp) - first_ts;
      if (span < best_span) {
        best = r;
        best_span = span;
      }
      fastest_span_ = std::min(fastest_span_, span);
      if (span <= tolerance(floor_ticks)) break;
    }
    interrupted_ = best_span > tolerance(floor_ticks);
    count(best_span, attempts);
    return best;
  }
  std::uint32_t tolerance(std::uint32_t floor_ticks) const {
    return std::max(floor_ticks, 2 * fastest_span_);
  }
  void count(std::uint32_t kept_span, int attempts) {
    ++skew_.snapshots;
    if (attempts > 1) ++skew_.read_again;
    if (interrupted_) {
      ++skew_.interrupted;
    } else {
      widest_kept_span_ = std::max(widest_kept_span_, kept_span);
    }
  }

  std::string_view name_;
  std::uint32_t fastest_span_ = UINT32_MAX / 2;  // in timestamp ticks
  bool interrupted_ = false;
  ReadoutSkew skew_;
  std::uint32_t widest_kept_span_ = 0;  // in timestamp ticks
};

}  // namespace

std::unique_ptr<CounterSource> make_mmio_source(Device& device) {
  return std::make_unique<MmioCounterSource>(device, "mmio");
}

std::unique_ptr<CounterSource> make_sim_source(Device& device) {
  if (!device.simulated()) {
    throw std::invalid_argument(fmt::format(
        "--access sim reads the simulator, but the device is {}; use --device sim, or --access "
        "mmio for this device",
        device.label()));
  }
  return std::make_unique<MmioCounterSource>(device, "sim");
}

}  // namespace oaprof::gpu
