#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "gpu/counter_source.h"
#include "mmio/registers.h"
#include "mmio/sim_gpu.h"
#include "oa/delta.h"

namespace oaprof::gpu {
namespace {

using ::testing::HasSubstr;

Device sim_device(mmio::ManualClock*& clock, const mmio::SimConfig& cfg = {}) {
  auto c = std::make_unique<mmio::ManualClock>();
  clock = c.get();
  return make_sim_device(std::move(c), cfg);
}

TEST(MmioCounterSourceTest, SnapshotsAroundAKernelGiveTheModelsDeltas) {
  mmio::ManualClock* clock = nullptr;
  Device d = sim_device(clock);
  auto src = make_counter_source("mmio", d);
  src->start(oa::ReportFormat::kA32u40_A4u32_B8_C8);
  EXPECT_EQ(d.mmio->read32(mmio::reg::kOaControl), (5u << 2) | 1u);
  const auto r0 = src->snapshot(1);
  src->kernel_running(true);
  clock->advance_ns(1'000'000);
  src->kernel_running(false);
  const auto r1 = src->snapshot(2);
  EXPECT_EQ(r1.size, 256);
  EXPECT_EQ(r1.dword(0), 2u);  // RPT_ID carries the report id
  const auto fmt = oa::ReportFormat::kA32u40_A4u32_B8_C8;
  const auto delta = oa::compute_deltas(oa::decode(fmt, r0.bytes), oa::decode(fmt, r1.bytes));
  EXPECT_EQ(delta.timestamp, 12'000u);
  EXPECT_EQ(delta.gpu_ticks, 1'150'000u);
  EXPECT_EQ(delta.a[0], 1'150'000u);
  EXPECT_NEAR(static_cast<double>(delta.a[7]), 1'150'000.0 * 24 * 0.85, 1.0);
}

TEST(MmioCounterSourceTest, StopRestoresOaControl) {
  mmio::ManualClock* clock = nullptr;
  Device d = sim_device(clock);
  d.mmio->write32(mmio::reg::kOaControl, 0x40);  // whatever was there before
  auto src = make_counter_source("mmio", d);
  src->start(oa::ReportFormat::kC4_B8);
  EXPECT_EQ(d.mmio->read32(mmio::reg::kOaControl), (7u << 2) | 1u);
  src->stop();
  EXPECT_EQ(d.mmio->read32(mmio::reg::kOaControl), 0x40u);
}

TEST(MmioCounterSourceTest, FortyBitReadsDoNotTearAcrossACarry) {
  // 40-bit counters about to carry into the high byte: reading low then high separately while
  // the clock moves between reads would pair an old low with a new high without the re-read.
  class CarryMmio final : public mmio::Mmio {
   public:
    std::uint32_t read32(std::uint32_t offset) override {
      if (offset == mmio::reg::a_high(0)) {
        return high_reads_++ == 0 ? 0 : 1;  // the carry lands between the two high reads
      }
      if (offset == mmio::reg::a_low(0)) return low_reads_++ == 0 ? 0xFFFFFFFFu : 5u;
      return 0;
    }
    void write32(std::uint32_t, std::uint32_t) override {}
    std::string describe() const override { return "carry"; }
    int high_reads_ = 0, low_reads_ = 0;
  };
  Device d;
  d.platform = oa::simulated_platform();
  d.mmio = std::make_unique<CarryMmio>();
  auto src = make_counter_source("mmio", d);
  src->start(oa::ReportFormat::kA32u40_A4u32_B8_C8);
  const auto r = oa::decode(oa::ReportFormat::kA32u40_A4u32_B8_C8, src->snapshot(1).bytes);
  EXPECT_EQ(r.a[0], (std::uint64_t{1} << 32) | 5u);
}

// The simulator's registers, with a thread preemption that can be armed: the next
// `preempt_times` GPU_TICKS reads (the second of a read-out, just after RING_TIMESTAMP) first let
// the clock run on.
class PreemptedMmio final : public mmio::Mmio {
 public:
  PreemptedMmio(std::unique_ptr<mmio::Mmio> sim, mmio::ManualClock& clock)
      : sim_(std::move(sim)), clock_(clock) {}
  std::uint32_t read32(std::uint32_t offset) override {
    if (offset == mmio::reg::kRingTimestamp) ++timestamp_reads;
    if (offset == mmio::reg::kGpuTicks && preempt_times > 0) {
      --preempt_times;
      clock_.advance_ns(preempt_ns);
    }
    return sim_->read32(offset);
  }
  void write32(std::uint32_t offset, std::uint32_t value) override { sim_->write32(offset, value); }
  std::string describe() const override { return sim_->describe(); }
  std::uint64_t preempt_ns = 0;
  int preempt_times = 0;
  int timestamp_reads = 0;

 private:
  std::unique_ptr<mmio::Mmio> sim_;
  mmio::ManualClock& clock_;
};

// The mmio read-out, started, over a PreemptedMmio.
struct PreemptedFixture {
  static constexpr oa::ReportFormat kFormat = oa::ReportFormat::kA32u40_A4u32_B8_C8;
  PreemptedFixture() : device(sim_device(clock)) {
    auto preempted = std::make_unique<PreemptedMmio>(std::move(device.mmio), *clock);
    mmio = preempted.get();
    device.mmio = std::move(preempted);
    source = make_counter_source("mmio", device);
    source->start(kFormat);
  }
  mmio::ManualClock* clock = nullptr;
  Device device;
  PreemptedMmio* mmio = nullptr;
  std::unique_ptr<CounterSource> source;
};

TEST(MmioCounterSourceTest, AReadOutInterruptedBetweenItsRegistersIsTakenAgain) {
  PreemptedFixture f;
  PreemptedMmio& m = *f.mmio;
  mmio::ManualClock* clock = f.clock;
  CounterSource* src = f.source.get();
  const auto fmt = PreemptedFixture::kFormat;
  m.timestamp_reads = 0;
  const oa::Report r0 = oa::decode(fmt, src->snapshot(1).bytes);
  EXPECT_EQ(m.timestamp_reads, 2) << "an undisturbed read-out is read once, bracketed";
  clock->advance_ns(2'000'000);
  m.preempt_ns = 1'000'000;  // 1 ms between reading RING_TIMESTAMP and GPU_TICKS
  m.preempt_times = 1;
  m.timestamp_reads = 0;
  const oa::Report r1 = oa::decode(fmt, src->snapshot(2).bytes);
  EXPECT_EQ(m.timestamp_reads, 4) << "the interrupted read-out is read again";
  EXPECT_FALSE(src->readout_interrupted()) << "the second read-out was tight";
  // Taken once, the GPU clocks would cover 3 ms and the timestamps 2 ms: 1725 MHz, not 1150.
  const oa::CounterDeltas delta = oa::compute_deltas(r0, r1);
  EXPECT_EQ(delta.timestamp, 36'000u);
  EXPECT_EQ(delta.gpu_ticks, 3'450'000u);
}

// Interrupted on every attempt, the read-out keeps its tightest one and says so; the next
// undisturbed snapshot no longer does.
TEST(MmioCounterSourceTest, AReadOutInterruptedOnEveryAttemptIsFlagged) {
  PreemptedFixture f;
  PreemptedMmio& m = *f.mmio;
  CounterSource* src = f.source.get();
  (void)src->snapshot(1);
  EXPECT_FALSE(src->readout_interrupted());
  m.preempt_ns = 50'000;  // 50 µs, five times the read-out's floor, on every attempt
  m.preempt_times = 1000;
  m.timestamp_reads = 0;
  (void)src->snapshot(2);
  EXPECT_TRUE(src->readout_interrupted());
  const int attempts = m.timestamp_reads / 2;
  EXPECT_GT(attempts, 1) << "it was read again before giving up";
  EXPECT_EQ(m.preempt_times, 1000 - attempts) << "every attempt was interrupted";
  m.preempt_times = 0;
  (void)src->snapshot(3);
  EXPECT_FALSE(src->readout_interrupted());
}

// The run's skew names the widest read-out kept unflagged (what bounds a row's counts per time),
// not the interrupted ones it read again or flagged, and counts those.
TEST(MmioCounterSourceTest, ItsSkewIsTheWidestReadOutKeptAndCountsTheInterruptedOnes) {
  PreemptedFixture f;
  PreemptedMmio& m = *f.mmio;
  CounterSource* src = f.source.get();
  (void)src->snapshot(1);
  m.preempt_ns = 5'000;  // half the read-out's floor: kept at once
  m.preempt_times = 1;
  (void)src->snapshot(2);
  m.preempt_ns = 1'000'000;  // read again, then tight
  m.preempt_times = 1;
  (void)src->snapshot(3);
  m.preempt_ns = 50'000;  // interrupted on every attempt: flagged
  m.preempt_times = 1000;
  (void)src->snapshot(4);
  ASSERT_TRUE(src->readout_interrupted());
  const std::optional<ReadoutSkew> skew = src->readout_skew();
  ASSERT_TRUE(skew);
  EXPECT_EQ(skew->snapshots, 4u);
  EXPECT_EQ(skew->read_again, 2u);
  EXPECT_EQ(skew->interrupted, 1u);
  EXPECT_DOUBLE_EQ(skew->widest_kept_ns, 5'000.0);
  EXPECT_DOUBLE_EQ(skew->fastest_ns, 0.0) << "the manual clock stands still between reads";
  const std::string note = readout_skew_note(*skew);
  EXPECT_THAT(note, HasSubstr("4 snapshots"));
  EXPECT_THAT(note, HasSubstr("within 5.0 µs of its timestamp"));
  EXPECT_THAT(note, HasSubstr("2 read again after an interruption, 1 flagged readout_interrupted"));
}

TEST(MmioCounterSourceTest, ReportsWrittenAtOnceHaveNoSkewAndNoSnapshotsNoNote) {
  mmio::ManualClock* clock = nullptr;
  Device d = sim_device(clock);
  EXPECT_FALSE(make_counter_source("rpc", d)->readout_skew());
  EXPECT_EQ(readout_skew_note(ReadoutSkew{}), "");
}

TEST(CounterSourceRegistryTest, UnknownNameListsTheValidOnes) {
  mmio::ManualClock* clock = nullptr;
  Device d = sim_device(clock);
  try {
    make_counter_source("carrier-pigeon", d);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("carrier-pigeon"));
    EXPECT_THAT(e.what(), HasSubstr("mmio"));
  }
}

TEST(DeviceTest, TheGpuClockIsReadFromRpstat) {
  DeviceOptions opt;
  opt.spec = oaprof::gpu::DeviceSpec::sim();
  opt.sim.freq_mhz = 900.0;  // 54 units of 50/3 MHz
  Device d = open_device(opt);
  const auto mhz = read_gpu_freq_mhz(d);
  ASSERT_TRUE(mhz.has_value());
  EXPECT_DOUBLE_EQ(*mhz, 900.0);
  d.platform.gen = oa::Generation::kGen8;  // RPSTAT is Gen9's
  EXPECT_EQ(read_gpu_freq_mhz(d), std::nullopt);
  Device none;
  EXPECT_EQ(read_gpu_freq_mhz(none), std::nullopt);
}

// Gen12 reads GEN12_RPSTAT1 (0x1381B4, CAGF bits 19:11), Xe-LPG MTL_MIRROR_TARGET_WP1 (0xC60,
// bits 8:0); Gen9's register holds nothing there.
TEST(DeviceTest, Gen12AndXeLpgReadTheirOwnFrequencyRegister) {
  for (const char* name : {"tglgt2", "mtlgt2"}) {
    DeviceOptions opt;
    opt.spec = oaprof::gpu::DeviceSpec::sim();
    opt.sim.platform = mmio::sim_platform_by_name(name);
    opt.sim.freq_mhz = 1300.0;  // 78 units
    Device d = open_device(opt);
    EXPECT_EQ(d.pci_id, std::string_view(name) == "tglgt2" ? 0x9A49 : 0x7D45);
    EXPECT_EQ(d.mmio->read32(mmio::reg::kRpStat), 0u) << name;
    const std::uint32_t at = std::string_view(name) == "tglgt2" ? 0x1381B4u : 0xC60u;
    const int shift = std::string_view(name) == "tglgt2" ? 11 : 0;
    EXPECT_EQ(d.mmio->read32(at), 78u << shift) << name;
    const auto mhz = read_gpu_freq_mhz(d);
    ASSERT_TRUE(mhz.has_value()) << name;
    EXPECT_DOUBLE_EQ(*mhz, 1300.0);
  }
}

TEST(DeviceTest, SimDeviceIsLabelledSimulated) {
  DeviceOptions opt;
  opt.spec = oaprof::gpu::DeviceSpec::sim();
  Device d = open_device(opt);
  EXPECT_TRUE(d.simulated());
  EXPECT_EQ(d.label(), "simulated");
  EXPECT_THAT(d.mmio->describe(), HasSubstr("simulated KBL"));
}

}  // namespace
}  // namespace oaprof::gpu
