// The command-streamer timestamp frequency from the GPU's own clock registers, decoded as i915
// decodes them at boot (linux gt/intel_gt_clock_utils.c read_clock_frequency()), for devices
// without an i915 to ask (I915_PARAM_CS_TIMESTAMP_FREQUENCY): the crystal shifted by the CTC
// shift (Gen9: a fixed 24 or 19.2 MHz and CTC_MODE's shift, never RPM_CONFIG0; Gen11+:
// RPM_CONFIG0's crystal and shift), or the TIMESTAMP_OVERRIDE divider when CTC_MODE selects
// divide logic.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mmio/mmio.h"
#include "oa/platform.h"

namespace oaprof::mmio {

// The registers read_clock_frequency() looks at; it reads only those it needs.
struct TimestampRegisters {
  std::uint32_t ctc_mode = 0;            // CTC_MODE 0xA26C (Gen9+)
  std::uint32_t rpm_config0 = 0;         // RPM_CONFIG0 0x0D00 (Gen11+, crystal source)
  std::uint32_t timestamp_override = 0;  // TIMESTAMP_OVERRIDE 0x44074 (divide logic)
};

struct TimestampReading {
  double hz = 0;
  std::string how;  // "CTC_MODE shift 2 of the 24 MHz crystal", …, for metadata and doctor
  // log2 of the OA timestamp rate over `hz` (oa_timestamp_cs_shift): set by
  // read_timestamp_frequency, which reads RPM_CONFIG0 for it on Xe-LPG.
  int oa_cs_shift = 0;
};

// Gen7.5/Gen8: nullopt, there is no clock register (i915 uses a fixed 12.5 MHz, the platform
// table's). Gen9: CTC_MODE (divide logic, else the 24 MHz
// crystal, 19.2 MHz on BXT/GLK, >> (3 - shift)). Gen11/12: CTC_MODE, then RPM_CONFIG0's crystal
// (24, 19.2, 38.4 or 25 MHz) >> (3 - RPM_CONFIG0's shift). nullopt where the kernel reports a
// missing case (an unknown crystal code).
std::optional<TimestampReading> decode_timestamp_frequency(const oa::Platform& platform,
                                                           const TimestampRegisters& registers);

// Reads the registers decode_timestamp_frequency needs, in i915's order, and decodes them.
std::optional<TimestampReading> read_timestamp_frequency(Mmio& mmio, const oa::Platform& platform);

// The OA unit's timestamp rate as i915_perf_oa_timestamp_frequency() gives it
// (I915_PARAM_OA_TIMESTAMP_FREQUENCY; xe_oa_timestamp_frequency() alike): on Xe-HPG and Xe-LPG,
// whose OA unit "ignores the CTC_SHIFT" (Wa_18013179988 on DG2, Wa_14015846243 on IP
// 12.70-12.74; linux i915_perf.c @ Kingxukai/linux 0291023e7330), the CS rate `cs_hz` << (3 -
// RPM_CONFIG0's CTC shift), i.e. the undivided crystal; on every other generation oaprof drives,
// `cs_hz` itself.
double oa_timestamp_hz(const oa::Platform& platform, double cs_hz, std::uint32_t rpm_config0);
// The same as a power of two: the OA unit's raw report timestamp advances 2^n per CS tick, n = 3
// - RPM_CONFIG0's CTC shift on Xe-LPG, 0 elsewhere. Report timestamps oaprof builds from
// RING_TIMESTAMP (MMIO and MI_STORE_REGISTER_MEM read-outs, the simulated OA unit) are scaled by
// it so that they count as the OA unit's own do.
int oa_timestamp_cs_shift(const oa::Platform& platform, std::uint32_t rpm_config0);

// Register values that make decode_timestamp_frequency give `hz` on `platform` from the crystal
// (the simulator's defaults); nullopt when no crystal and shift give it. On Xe-LPG CTC shift 2
// is tried first: the one where the OA timestamp >> 1 runs at the CS rate, as Mesa (which shifts
// it by one "to match the ring timestamp") and the platform table assume.
std::optional<TimestampRegisters> crystal_registers_for(const oa::Platform& platform, double hz);

}  // namespace oaprof::mmio
