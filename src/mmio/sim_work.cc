#include "mmio/sim_work.h"

#include <algorithm>
#include <cmath>

namespace oaprof::mmio {
namespace {

// The model's rates (see the header): lane operations an EU-cycle, bytes per send EU-cycle,
// bytes per shader-memory message, EU-cycles of dispatch per work-item, GTI bytes a clock.
constexpr double kFp32OpsPerEuCycle = 8;
constexpr double kFp64OpsPerEuCycle = 2;
constexpr double kAccessesPerSendCycle = 4;  // lanes' loads or stores issued an EU-cycle
constexpr double kBytesPerMessage = 64;
constexpr double kDispatchEuCyclesPerItem = 0.25;
constexpr double kGtiBytesPerClock = 64;
constexpr double kItemsPerEu = 16 * 7;

struct EuCycles {
  double fpu0 = 0;
  double fpu1 = 0;
  double send = 0;
  double active = 0;
};

EuCycles eu_cycles(const oa::KernelWork& w) {
  EuCycles e;
  // FP32 and integer keep both FPUs busy together; FP64 only FPU0.
  const double paired = (w.fp32_ops + w.int_ops) / kFp32OpsPerEuCycle;
  e.fpu0 = paired + w.fp64_ops / kFp64OpsPerEuCycle;
  e.fpu1 = paired;
  e.send = w.global_accesses / kAccessesPerSendCycle;
  e.active = std::max(e.fpu0, e.fpu1) + e.send + w.work_items * kDispatchEuCyclesPerItem;
  return e;
}

double gti_bytes(const oa::KernelWork& w, oa::Generation gen) {
  return w.footprint_bytes <= sim_l3_bytes(gen) ? w.footprint_bytes : w.global_bytes;
}

void gen9_counts(const EuCycles& e, double gti, SimCounts& c) {
  c.a[7] = e.active;
  c.a[9] = std::min(e.fpu0, e.fpu1);
  c.a[10] = e.fpu0;
  c.a[11] = e.fpu1;
  c.a[12] = e.send;
  c.c[4] = gti / 2 / kBytesPerMessage;
  c.c[5] = gti / 2 / kBytesPerMessage;
}

void gen12_counts(const EuCycles& e, double gti, SimCounts& c) {
  for (int q = 0; q < 4; ++q) {
    c.a[static_cast<std::size_t>(7 + q)] = e.active / 4;
    c.c[static_cast<std::size_t>(4 + q)] = gti / 2 / kBytesPerMessage / 4;
  }
  c.c[2] = gti / 2 / kBytesPerMessage / 2;
  c.c[3] = gti / 2 / kBytesPerMessage / 2;
}

}  // namespace

void SimCounts::add(const SimCounts& other, double factor) {
  for (std::size_t i = 0; i < a.size(); ++i) a[i] += other.a[i] * factor;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] += other.b[i] * factor;
  for (std::size_t i = 0; i < c.size(); ++i) c[i] += other.c[i] * factor;
}

double sim_l3_bytes(oa::Generation gen) {
  return gen == oa::Generation::kGen12 ? 3.0 * (1 << 20) : 768.0 * (1 << 10);
}

bool sim_models_known_work(oa::Generation gen) {
  return gen == oa::Generation::kGen9 || gen == oa::Generation::kGen12;
}

SimKernelEvents sim_kernel_events(const oa::KernelWork& work, oa::Generation gen, int eus,
                                  double freq_mhz) {
  SimKernelEvents out;
  if (!sim_models_known_work(gen)) return out;
  const EuCycles e = eu_cycles(work);
  const double gti = gti_bytes(work, gen);
  out.counts.a[30] = work.slm_bytes / 2 / kBytesPerMessage;
  out.counts.a[31] = work.slm_bytes / 2 / kBytesPerMessage;
  out.counts.a[32] = work.global_bytes / kBytesPerMessage;
  if (gen == oa::Generation::kGen9) {
    gen9_counts(e, gti, out.counts);
  } else {
    gen12_counts(e, gti, out.counts);
  }
  // The busiest resource sets the time: the EUs (their cycles shared by the EUs the work-items
  // fill: a SIMD16 thread each, 7 threads an EU) or GTI.
  const double used_eus = std::clamp(std::ceil(work.work_items / kItemsPerEu), 1.0,
                                     static_cast<double>(std::max(1, eus)));
  const double clocks = std::max({e.active / used_eus, gti / kGtiBytesPerClock, 1.0});
  out.duration_ns = clocks * 1e3 / freq_mhz;
  return out;
}

}  // namespace oaprof::mmio
