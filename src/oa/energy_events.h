// The counter events a per-event energy model counts, per generation: each the sum of some A/B/C
// counters of one metric set, times a scale (64 bytes a count for the throughput counters). The
// simulator's energy model (mmio/sim_energy.h) draws energy from exactly these events and the
// model fit (model/fit.h) reads exactly these from a row's counter deltas, so the two cannot
// disagree on what an event is. Counter positions follow IGT's ComputeBasic of the generation
// (metrics/igt/oa-kblgt2.xml, oa-tglgt2.xml: GpuBusy A0; EuActive A7 (Gen12: A7-A10); Fpu0Active
// A10 and Fpu1Active A11 and EuSendActive A12 (Gen9 only; Gen12's set has no FPU counters);
// SlmBytesRead/Written 64 A30, 64 A31; ShaderMemoryAccesses A32 (a 64-byte message each);
// GtiRead/WriteThroughput 64 (C4, C5) on Gen9, 64 (C4..C7, C2..C3) on Gen12).
#pragma once

#include <span>
#include <string_view>

#include "oa/delta.h"
#include "oa/platform.h"

namespace oaprof::oa {

enum class CounterKind { kA, kB, kC };

struct CounterTerm {
  CounterKind kind;
  int index;
};

struct EnergyEvent {
  std::string_view name;  // e.g. "fpu0_active_eu_cycles"
  std::string_view unit;  // "cycle", "EU-cycle", "byte"
  std::span<const CounterTerm> terms;
  double scale = 1;  // units per count
};

struct EnergyEventSet {
  std::string_view metric_set;  // the set whose layout the terms follow
  std::span<const EnergyEvent> events;
};

// The events of a generation, or nullptr where no energy model is defined (Xe-LPG, Xe-HPG, Xe2
// and older parts: their ComputeBasic layouts are not mapped yet).
const EnergyEventSet* energy_events(Generation gen);

// The event's value from counts: `count(kind, index)` gives one counter's.
template <class Count>
double event_sum(const EnergyEvent& event, Count&& count) {
  double sum = 0;
  for (const CounterTerm& t : event.terms) sum += count(t.kind, t.index);
  return sum * event.scale;
}

// The event's value from counter deltas.
double event_value(const EnergyEvent& event, const CounterDeltas& deltas);

}  // namespace oaprof::oa
