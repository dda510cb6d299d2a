// The simulator's model of a kernel whose work it knows (oa::KernelWork): the counter events that
// work makes on a simulated part, laid out as the generation's ComputeBasic reads them, and how
// long the part would take. A TEST DOUBLE's model, never a claim about real hardware: the rates
// below are round figures in the method's peaks (reference/method.md), chosen so each event class
// of oa::energy_events varies on its own across kernel_runner's catalogue.
//
// Gen9: FP32 and integer operations keep both FPUs busy, SIMD4 each (8 lane operations an
// EU-cycle in which Fpu0Active A10 and Fpu1Active A11 both count); FP64 only FPU0, SIMD2
// (2 an EU-cycle: the method's quarter rate); EuFpuBothActive A9 the overlap. Send A12: one
// EU-cycle per 4 global loads or stores; ShaderMemoryAccesses A32: one per 64 bytes; SLM A30/A31:
// 64 bytes a count, half read, half written; EU active A7: the busiest FPU, the sends and a
// dispatch cost per work-item. GTI (C4 read, C5 write, 64 bytes a count, half each): the footprint
// when it fits the simulated L3, every byte moved when it does not. The kernel takes the longer of
// its EU-cycles over the EUs its work-items fill (a SIMD16 thread each, 7 an EU) and its GTI bytes
// at 64 a clock. Gen12 (no FPU counters in its ComputeBasic): the same EU-cycles into EU active
// A7-A10 in quarters, GTI into C4-C7 (read) and C2-C3 (write).
#pragma once

#include <array>

#include "oa/kernel_work.h"
#include "oa/platform.h"
#include "oa/report_format.h"

namespace oaprof::mmio {

// A0..A37 (Xe-LPG's last): the A counters SimGpu models.
inline constexpr int kSimACounters = 38;

// Events per counter, fractional (the model spreads them over time).
struct SimCounts {
  std::array<double, kSimACounters> a{};
  std::array<double, oa::kNumB> b{};
  std::array<double, oa::kNumC> c{};
  void add(const SimCounts& other, double factor);
};

struct SimKernelEvents {
  SimCounts counts;        // every counter but A0 (busy), which follows the clock
  double duration_ns = 0;  // how long the part takes, at the simulated clock
};

// The model's L3 (simulated, a round figure of the part's size): a footprint up to this comes from
// memory once.
double sim_l3_bytes(oa::Generation gen);

// The events of `work` on a part of generation `gen` with `eus` EUs at `freq_mhz`. Generations
// without a layout here (Xe-LPG, Xe-HPG) get no events: their simulated counters keep the
// workload fractions (SimWorkload) whatever runs.
SimKernelEvents sim_kernel_events(const oa::KernelWork& work, oa::Generation gen, int eus,
                                  double freq_mhz);
bool sim_models_known_work(oa::Generation gen);

}  // namespace oaprof::mmio
