// Private to src/run: the selftest's checks of what the kernel driver and the OA unit do with
// oaprof's programming (the driver accepting every IGT register list, the NOA mux settling within
// the plan's delay, the configuration surviving a context switch) and of the unit's own periodic
// reports against the snapshots a window is bracketed by; and the simulator faults that fail
// each of them.
#pragma once

#include "mmio/sim_gpu.h"
#include "run/selftest.h"
#include "run/selftest_checks.h"

namespace oaprof::run::selftest {

Outcome check_driver_accepts_configs(Context& c);
Outcome check_noa_settle(Context& c);
Outcome check_context_switch(Context& c);
Outcome check_rpc_vs_periodic(Context& c);

// Makes the simulated hardware (or its simulated driver) wrong as `fault` says, for the four
// faults above; any other fault is apply_fault's (selftest.cc). config-rejected refuses the first
// set of the platform's metric file other than options.metric_set (which the read-outs are
// programmed with, so that only driver-accepts-configs sees the refusal); throws
// std::invalid_argument when the file has no such set.
void apply_driver_fault(SimFault fault, const SelftestOptions& options, mmio::SimConfig& sim);

}  // namespace oaprof::run::selftest
