// Issue 35: a simulated profile row of a catalogue kernel against the kernel's known work
// (bench::known_work at kernel_runner's defaults). The simulator turns that work into Gen9
// ComputeBasic's events (mmio/sim_work.h): FP32 lane operations fill both FPUs, SIMD4 each (A10,
// A11), a 64-byte message per ShaderMemoryAccesses count (A32), GTI's read and write counts (C4,
// C5) 64 bytes each. The figures are whole counts of exact products, so the tolerance only covers
// the rounding of fractional events to counters.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "bench/known_work.h"
#include "tests/common/run_util.h"

namespace oaprof::testing {

inline constexpr double kKnownWorkTolerance = 0.01;  // 1 %

inline void expect_counts_match_known_work(const CsvRow& row) {
  SCOPED_TRACE("launch " + row.at("launch") + " of " + row.at("kernel"));
  const auto work = bench::known_work(row.at("kernel"), std::stoull(row.at("global_size")));
  ASSERT_TRUE(work) << "not a catalogue kernel at kernel_runner's defaults";
  const auto count = [&](const char* column) { return std::stod(row.at(column)); };
  const bool mad = row.at("kernel").rfind("mad", 0) == 0;
  const double flops = (count("A10") + count("A11")) * 4 * (mad ? 2 : 1);
  EXPECT_NEAR(flops, work->flops, work->flops * kKnownWorkTolerance);
  const double message_bytes = count("A32") * 64;
  EXPECT_NEAR(message_bytes, work->global_bytes, work->global_bytes * kKnownWorkTolerance);
  // Through GTI: the footprint when it fits the simulated L3, every byte moved when it does not.
  const double gti_bytes = (count("C4") + count("C5")) * 64;
  EXPECT_GE(gti_bytes, work->footprint_bytes * (1 - kKnownWorkTolerance));
  EXPECT_LE(gti_bytes, work->global_bytes * (1 + kKnownWorkTolerance));
  if (work->flops > 0 && gti_bytes > 0) {  // the arithmetic intensity a roofline plots
    EXPECT_NEAR(flops / gti_bytes, work->flops / work->footprint_bytes,
                work->flops / work->footprint_bytes * 2 * kKnownWorkTolerance);
  }
}

}  // namespace oaprof::testing
