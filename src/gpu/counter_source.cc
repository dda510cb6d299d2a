#include "gpu/counter_source.h"

#include <array>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace oaprof::gpu {
namespace {

constexpr std::array kSources{
    CounterSourceEntry{"mmio", "read the OA counter registers over the BAR (or the simulator)",
                       &make_mmio_source},
    CounterSourceEntry{"rpc",
                       "MI_REPORT_PERF_COUNT batches through i915 (or the simulator's "
                       "batch interpreter)",
                       &make_rpc_source},
    CounterSourceEntry{"perf",
                       "the kernel's OA stream holds the metric set: i915 perf with "
                       "MI_REPORT_PERF_COUNT snapshots, or on Xe2 parts xe's observation stream "
                       "with periodic-report snapshots (simulated on --device sim); maps no BAR, "
                       "so it works under kernel lockdown",
                       &make_perf_source, false},
    CounterSourceEntry{"sim", "the mmio read-out on the simulated GPU (--device sim)",
                       &make_sim_source},
};

}  // namespace

std::span<const CounterSourceEntry> counter_sources() { return kSources; }

std::string perf_stream_loss_warning(const PerfStreamCounts& counts) {
  if (counts.reports_lost == 0 && counts.buffer_lost == 0) return {};
  return fmt::format(
      "the kernel's OA stream lost reports {} times (i915 OA_REPORT_LOST, xe REPORT_LOST) and "
      "its OA buffer {} times (i915 OA_BUFFER_LOST, xe BUFFER_OVERFLOW); the rows whose window saw "
      "it are flagged reports_lost or "
      "oa_buffer_lost: the OA unit was stalled or restarted in their window; raise --oa-exponent "
      "for fewer periodic reports",
      counts.reports_lost, counts.buffer_lost);
}

std::string snapshot_placement_warning(const PerfStreamCounts& counts) {
  if (counts.snapshots_waited == 0) return {};
  if (counts.placement_unavailable) {
    return fmt::format(
        "{} snapshots were taken after waiting out xe's buffer poll: on an Xe-LPG part the OA "
        "unit's timestamp counts at a rate scaled from the engine's (xe_oa.c, Wa_18013179988), "
        "so the engine's timestamp cannot place them; those rows' gpu_time_ns may include up to "
        "5 ms of idle beside the kernel (event counts are whole). Under i915 this part's "
        "snapshots are exact (docs/xe.md)",
        counts.snapshots_waited);
  }
  return fmt::format(
      "{} of the xe stream's snapshots could not be placed by the engine's timestamp and were "
      "taken after waiting out xe's buffer poll: those rows' gpu_time_ns may include up to 5 ms "
      "of idle beside the kernel (event counts are whole; docs/xe.md)",
      counts.snapshots_waited);
}

std::string readout_skew_note(const ReadoutSkew& skew) {
  if (skew.snapshots == 0) return {};
  const double widest_us = skew.widest_kept_ns / 1e3;
  return fmt::format(
      "register read-out: {} snapshots; each unflagged one had its registers read within "
      "{:.1f} µs of its timestamp (the fastest read-out {:.1f} µs), so a row's counts per time may "
      "be off by up to {:.1f} µs over its gpu_time_ns; {} read again after an interruption, {} "
      "flagged readout_interrupted",
      skew.snapshots, widest_us, skew.fastest_ns / 1e3, widest_us, skew.read_again,
      skew.interrupted);
}

bool access_maps_registers(std::string_view name) {
  for (const auto& entry : kSources) {
    if (entry.name == name) return entry.maps_registers;
  }
  return true;
}

std::unique_ptr<CounterSource> make_counter_source(std::string_view name, Device& device) {
  std::string valid;
  for (const auto& entry : kSources) {
    if (entry.name != name) {
      valid += fmt::format("{}{}", valid.empty() ? "" : ", ", entry.name);
      continue;
    }
    if (device.platform.driver == oa::KernelDriver::kXe && entry.maps_registers) {
      // The simulated xe part too: its read-outs must be the ones real hardware allows.
      throw std::invalid_argument(fmt::format(
          "{} is driven by xe, which owns its OA unit: oaprof reads it only through xe's "
          "observation stream; use --access perf, not {} (docs/xe.md)",
          device.platform.codename, name));
    }
    return entry.make(device);
  }
  throw std::invalid_argument(fmt::format("unknown access mode '{}'; valid: {}", name, valid));
}

}  // namespace oaprof::gpu
