#include "mmio/timestamp_clock.h"

#include <cmath>

#include <fmt/format.h>

#include "mmio/registers.h"

namespace oaprof::mmio {
namespace {

bool is_gen9_lp(const oa::Platform& p) { return p.codename == "BXT" || p.codename == "GLK"; }

// TIMESTAMP_OVERRIDE: (divider + 1) MHz plus 1 MHz / (denominator + 1), as read_reference_ts_freq.
TimestampReading divide_logic(std::uint32_t override_value) {
  const std::uint32_t divider = (override_value & reg::kTimestampOverrideDividerMask) + 1;
  const std::uint32_t denominator =
      (override_value >> reg::kTimestampOverrideDenominatorShift) & 0xF;
  const std::uint32_t hz = divider * 1'000'000u + 1'000'000u / (denominator + 1);
  return {static_cast<double>(hz),
          fmt::format("TIMESTAMP_OVERRIDE 0x{:X} (CTC_MODE: divide logic)", override_value)};
}

int shift_of(std::uint32_t value, std::uint32_t mask) {
  return static_cast<int>((value & mask) >> 1);  // both shift fields are bits 2:1
}

std::optional<std::uint32_t> gen11_crystal_hz(std::uint32_t rpm_config0) {
  switch ((rpm_config0 >> reg::kRpmConfig0CrystalShift) & 0x7) {
    case 0:
      return 24'000'000u;
    case 1:
      return 19'200'000u;
    case 2:
      return 38'400'000u;
    case 3:
      return 25'000'000u;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<TimestampReading> decode_timestamp_frequency(const oa::Platform& platform,
                                                           const TimestampRegisters& r) {
  switch (platform.gen) {
    case oa::Generation::kGen7_5:
    case oa::Generation::kGen8:
      return std::nullopt;  // no clock register: a fixed 12.5 MHz
    // xe reports the OA unit's timestamp frequency in its OA-unit query; oaprof reads no Xe2
    // register.
    case oa::Generation::kXe2:
      return std::nullopt;
    case oa::Generation::kGen9: {
      if ((r.ctc_mode & reg::kCtcSourceDivideLogic) != 0) return divide_logic(r.timestamp_override);
      const std::uint32_t crystal = is_gen9_lp(platform) ? 19'200'000u : 24'000'000u;
      const int shift = shift_of(r.ctc_mode, reg::kCtcShiftMask);
      return TimestampReading{
          static_cast<double>(crystal >> (3 - shift)),
          fmt::format("{} MHz crystal >> (3 - CTC_MODE shift {})", crystal / 1e6, shift)};
    }
    case oa::Generation::kGen11:
    case oa::Generation::kGen12:
    case oa::Generation::kXeHpg:
    case oa::Generation::kXeLpg: {
      if ((r.ctc_mode & reg::kCtcSourceDivideLogic) != 0) return divide_logic(r.timestamp_override);
      const auto crystal = gen11_crystal_hz(r.rpm_config0);
      if (!crystal) return std::nullopt;
      const int shift = shift_of(r.rpm_config0, reg::kRpmConfig0CtcShiftMask);
      return TimestampReading{static_cast<double>(*crystal >> (3 - shift)),
                              fmt::format("RPM_CONFIG0 0x{:X}: {} MHz crystal >> (3 - shift {})",
                                          r.rpm_config0, *crystal / 1e6, shift)};
    }
  }
  return std::nullopt;
}

std::optional<TimestampReading> read_timestamp_frequency(Mmio& mmio, const oa::Platform& platform) {
  if (platform.gen == oa::Generation::kGen7_5 || platform.gen == oa::Generation::kGen8) {
    return std::nullopt;
  }
  TimestampRegisters r;
  r.ctc_mode = mmio.read32(reg::kCtcMode);
  const bool divide = (r.ctc_mode & reg::kCtcSourceDivideLogic) != 0;
  if (divide) r.timestamp_override = mmio.read32(reg::kTimestampOverride);
  // i915_perf_oa_timestamp_frequency() reads RPM_CONFIG0's shift on Xe-LPG and DG2 whatever
  // CTC_MODE selects.
  if ((!divide && platform.gen != oa::Generation::kGen9) || oa::is_xehp_oa(platform.gen)) {
    r.rpm_config0 = mmio.read32(reg::kRpmConfig0);
  }
  auto reading = decode_timestamp_frequency(platform, r);
  if (reading) reading->oa_cs_shift = oa_timestamp_cs_shift(platform, r.rpm_config0);
  return reading;
}

int oa_timestamp_cs_shift(const oa::Platform& platform, std::uint32_t rpm_config0) {
  // Wa_18013179988 (DG2) and Wa_14015846243 (Xe-LPG): i915_perf_oa_timestamp_frequency().
  if (!oa::is_xehp_oa(platform.gen)) return 0;
  return 3 - shift_of(rpm_config0, reg::kRpmConfig0CtcShiftMask);
}

double oa_timestamp_hz(const oa::Platform& platform, double cs_hz, std::uint32_t rpm_config0) {
  return std::ldexp(cs_hz, oa_timestamp_cs_shift(platform, rpm_config0));
}

std::optional<TimestampRegisters> crystal_registers_for(const oa::Platform& platform, double hz) {
  const bool xe_lpg = oa::is_xehp_oa(platform.gen);  // Xe-LPG and DG2 (Xe-HPG)
  for (std::uint32_t i = 0; i < 16; ++i) {
    // Every crystal at each shift in turn on Xe-LPG (shift 2 first); elsewhere every shift of
    // each crystal in turn.
    const std::uint32_t crystal = xe_lpg ? i % 4 : i / 4;
    const std::uint32_t shift = xe_lpg ? (i / 4 + 2) % 4 : i % 4;
    TimestampRegisters r;
    r.ctc_mode = shift << 1;
    r.rpm_config0 = (crystal << reg::kRpmConfig0CrystalShift) | (shift << 1);
    const auto got = decode_timestamp_frequency(platform, r);
    if (got && got->hz == hz) return r;
  }
  return std::nullopt;
}

}  // namespace oaprof::mmio
