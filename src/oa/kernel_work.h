// The work a kernel does, as counts the hardware's counters can be checked against: what the
// simulator turns into counter events when it knows the kernel that runs (mmio/sim_work.h), and
// what a check of "counters against known work" compares with. Filled from kernel_runner's
// catalogue by bench::known_work; plain figures, no I/O.
#pragma once

namespace oaprof::oa {

struct KernelWork {
  double work_items = 0;
  // Arithmetic lane operations (one per element per operation; a multiply-add is one operation
  // and two FLOPs), by class.
  double fp32_ops = 0;
  double fp64_ops = 0;
  double int_ops = 0;
  double flops = 0;  // floating-point operations, a multiply-add counting two
  // Bytes the kernel's global loads and stores move between the EUs and L3 (send messages), and
  // the distinct bytes among them: what must come from memory at least once.
  double global_bytes = 0;
  double footprint_bytes = 0;
  double global_accesses = 0;  // the loads and stores behind global_bytes, per work-item summed
  double slm_bytes = 0;        // shared local memory read and written

  bool operator==(const KernelWork&) const = default;
};

}  // namespace oaprof::oa
