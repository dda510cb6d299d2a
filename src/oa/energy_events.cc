#include "oa/energy_events.h"

namespace oaprof::oa {
namespace {

constexpr CounterTerm kBusy[] = {{CounterKind::kA, 0}};
constexpr CounterTerm kSlm[] = {{CounterKind::kA, 30}, {CounterKind::kA, 31}};
constexpr CounterTerm kShaderMemory[] = {{CounterKind::kA, 32}};

constexpr CounterTerm kGen9EuActive[] = {{CounterKind::kA, 7}};
constexpr CounterTerm kGen9Fpu0[] = {{CounterKind::kA, 10}};
constexpr CounterTerm kGen9Fpu1[] = {{CounterKind::kA, 11}};
constexpr CounterTerm kGen9Send[] = {{CounterKind::kA, 12}};
constexpr CounterTerm kGen9Gti[] = {{CounterKind::kC, 4}, {CounterKind::kC, 5}};

constexpr EnergyEvent kGen9Events[] = {
    {"gpu_busy_cycles", "cycle", kBusy, 1},
    {"eu_active_eu_cycles", "EU-cycle", kGen9EuActive, 1},
    {"fpu0_active_eu_cycles", "EU-cycle", kGen9Fpu0, 1},
    {"fpu1_active_eu_cycles", "EU-cycle", kGen9Fpu1, 1},
    {"send_active_eu_cycles", "EU-cycle", kGen9Send, 1},
    {"slm_bytes", "byte", kSlm, 64},
    {"l3_bytes", "byte", kShaderMemory, 64},
    {"gti_bytes", "byte", kGen9Gti, 64},
};

constexpr CounterTerm kGen12EuActive[] = {
    {CounterKind::kA, 7}, {CounterKind::kA, 8}, {CounterKind::kA, 9}, {CounterKind::kA, 10}};
constexpr CounterTerm kGen12Gti[] = {{CounterKind::kC, 2}, {CounterKind::kC, 3},
                                     {CounterKind::kC, 4}, {CounterKind::kC, 5},
                                     {CounterKind::kC, 6}, {CounterKind::kC, 7}};

constexpr EnergyEvent kGen12Events[] = {
    {"gpu_busy_cycles", "cycle", kBusy, 1}, {"eu_active_eu_cycles", "EU-cycle", kGen12EuActive, 1},
    {"slm_bytes", "byte", kSlm, 64},        {"l3_bytes", "byte", kShaderMemory, 64},
    {"gti_bytes", "byte", kGen12Gti, 64},
};

constexpr EnergyEventSet kGen9Set{"ComputeBasic", kGen9Events};
constexpr EnergyEventSet kGen12Set{"ComputeBasic", kGen12Events};

}  // namespace

const EnergyEventSet* energy_events(Generation gen) {
  switch (gen) {
    case Generation::kGen9:
      return &kGen9Set;
    case Generation::kGen12:
      return &kGen12Set;
    default:
      return nullptr;
  }
}

double event_value(const EnergyEvent& event, const CounterDeltas& deltas) {
  return event_sum(event, [&](CounterKind kind, int index) {
    const auto i = static_cast<std::size_t>(index);
    return static_cast<double>(kind == CounterKind::kA   ? deltas.a[i]
                               : kind == CounterKind::kB ? deltas.b[i]
                                                         : deltas.c[i]);
  });
}

}  // namespace oaprof::oa
