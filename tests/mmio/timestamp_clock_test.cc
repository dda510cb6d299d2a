// The timestamp frequency from the clock registers, against values worked out by hand from
// linux gt/intel_gt_clock_utils.c read_clock_frequency() (torvalds/linux
// 0d6419e9c855dea476300e2bb81d29105fe76d38) and the field layout in gt/intel_gt_regs.h.
#include "mmio/timestamp_clock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mmio/registers.h"
#include "mmio/sim_gpu.h"

namespace oaprof::mmio {
namespace {

oa::Platform clock_platform_of(std::uint16_t pci_id) {
  const auto p = oa::platform_for_pci_id(pci_id);
  if (!p) ADD_FAILURE() << "no platform for PCI id " << std::hex << pci_id;
  return p.value_or(oa::simulated_platform());
}

std::uint32_t rpm_config0(std::uint32_t crystal, std::uint32_t shift) {
  return (crystal << 3) | (shift << 1);
}

double hz_of(const oa::Platform& p, const TimestampRegisters& r) {
  const auto got = decode_timestamp_frequency(p, r);
  return got ? got->hz : -1;
}

// Gen11/12: RPM_CONFIG0 bits 5:3 pick the crystal (0 24 MHz, 1 19.2, 2 38.4, 3 25), bits 2:1
// the shift; the timestamp ticks at crystal >> (3 - shift).
TEST(TimestampClockTest, EveryGen11CrystalAndShift) {
  struct Case {
    std::uint32_t crystal, shift;
    double hz;
  };
  const Case cases[] = {
      {0, 3, 24e6},  {0, 2, 12e6},   {0, 1, 6e6},    {0, 0, 3e6},     {1, 3, 19.2e6}, {1, 2, 9.6e6},
      {1, 1, 4.8e6}, {1, 0, 2.4e6},  {2, 3, 38.4e6}, {2, 2, 19.2e6},  {2, 1, 9.6e6},  {2, 0, 4.8e6},
      {3, 3, 25e6},  {3, 2, 12.5e6}, {3, 1, 6.25e6}, {3, 0, 3.125e6},
  };
  for (const std::uint16_t id : {std::uint16_t{0x8A52}, std::uint16_t{0x9A49}}) {  // ICL, TGL
    const oa::Platform p = clock_platform_of(id);
    for (const Case& c : cases) {
      TimestampRegisters r;
      r.rpm_config0 = rpm_config0(c.crystal, c.shift);
      EXPECT_EQ(hz_of(p, r), c.hz)
          << p.codename << " crystal " << c.crystal << " shift " << c.shift;
      // The CTC_MODE shift field is Gen9's; on Gen11+ only RPM_CONFIG0's counts.
      r.ctc_mode = 0x6;
      EXPECT_EQ(hz_of(p, r), c.hz);
    }
    TimestampRegisters unknown;
    unknown.rpm_config0 = rpm_config0(4, 3);  // the kernel's MISSING_CASE: no frequency
    EXPECT_FALSE(decode_timestamp_frequency(p, unknown));
  }
}

// Gen9: CTC_MODE's shift of a 24 MHz crystal (19.2 MHz on the LP parts BXT and GLK).
TEST(TimestampClockTest, Gen9ShiftsItsCrystalByCtcMode) {
  const oa::Platform skl = clock_platform_of(0x1916), bxt = clock_platform_of(0x5A84);
  TimestampRegisters r;
  r.ctc_mode = 2u << 1;
  EXPECT_EQ(hz_of(skl, r), 12e6);  // the 12 MHz of every big-core Gen9
  r.ctc_mode = 3u << 1;
  EXPECT_EQ(hz_of(skl, r), 24e6);
  EXPECT_EQ(hz_of(bxt, r), 19.2e6);
  r.ctc_mode = 0;
  EXPECT_EQ(hz_of(bxt, r), 2.4e6);
  r.rpm_config0 = rpm_config0(2, 3);  // not read on Gen9
  EXPECT_EQ(hz_of(bxt, r), 2.4e6);
}

// CTC_MODE bit 0 selects divide logic: (divider + 1) MHz + 1 MHz / (denominator + 1) from
// TIMESTAMP_OVERRIDE (bits 9:0 and 15:12), on Gen9 and Gen11+ alike.
TEST(TimestampClockTest, DivideLogicReadsTimestampOverride) {
  TimestampRegisters r;
  r.ctc_mode = reg::kCtcSourceDivideLogic;
  r.timestamp_override = (4u << 12) | 18u;  // 19 MHz + 1/5 MHz
  r.rpm_config0 = rpm_config0(2, 3);        // ignored
  for (const std::uint16_t id :
       {std::uint16_t{0x1916}, std::uint16_t{0x8A52}, std::uint16_t{0x9A49}}) {
    EXPECT_EQ(hz_of(clock_platform_of(id), r), 19.2e6) << std::hex << id;
  }
  r.timestamp_override = 23u;  // 24 MHz + 1 MHz / 1
  EXPECT_EQ(hz_of(clock_platform_of(0x8A52), r), 25e6);
}

TEST(TimestampClockTest, Gen8HasNoClockRegister) {
  TimestampRegisters r;
  r.ctc_mode = 3u << 1;
  EXPECT_FALSE(decode_timestamp_frequency(clock_platform_of(0x1616), r));
  EXPECT_FALSE(decode_timestamp_frequency(clock_platform_of(0x0412), r));
}

// Through the registers of a simulated part, as the device reads them without i915.
TEST(TimestampClockTest, ReadsTheSimulatorsRegisters) {
  ManualClock clock;
  SimConfig config;
  config.platform = clock_platform_of(0x8A52);
  config.timestamp_registers = TimestampRegisters{0, rpm_config0(2, 2), 0};  // 38.4 MHz >> 1
  SimGpu icl(config, clock);
  const auto got = read_timestamp_frequency(icl, config.platform);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->hz, 19.2e6);
  EXPECT_THAT(got->how, ::testing::HasSubstr("38.4 MHz crystal"));
  // By default the simulator's registers give its platform's frequency.
  SimGpu kbl(SimConfig{}, clock);
  EXPECT_EQ(read_timestamp_frequency(kbl, oa::simulated_platform())->hz, 12e6);
  EXPECT_EQ(kbl.read32(reg::kCtcMode), 2u << 1);
}

}  // namespace
}  // namespace oaprof::mmio
