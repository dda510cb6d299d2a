#include "gpu/counter_source.h"

#include <array>
#include <optional>
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

bool access_maps_registers(std::string_view name) {
  for (const auto& entry : kSources) {
    if (entry.name == name) return entry.maps_registers;
  }
  return true;
}

// i915 refuses the rpc read-out's batch on DG2: EXECBUFFER2 with relocations (eb_validate_vma)
// and GEM pread/pwrite (i915_gem_pread_ioctl, i915_gem_pwrite_ioctl) fail for GRAPHICS_VER 12
// parts other than Tiger Lake ("also covers all platforms with local memory"). Source: linux
// drivers/gpu/drm/i915/gem/i915_gem_execbuffer.c @ Kingxukai/linux
// 0291023e7330da28f2f7453c87c2ab7082d8360f and drivers/gpu/drm/i915/i915_gem.c (same rule).
// The simulator refuses it too, so that its read-outs are the ones the hardware allows.
std::optional<std::string> rpc_refusal(const oa::Platform& platform) {
  if (platform.gen != oa::Generation::kXeHpg) return std::nullopt;
  return fmt::format(
      "--access rpc: i915 refuses its batch on {} {} (relocations and GEM pread/pwrite are "
      "rejected on every graphics 12 part after Tiger Lake, and on every card with local "
      "memory); use --access mmio or --access perf (docs/hardware-access.md)",
      platform.codename, oa::gt_label(platform));
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
    if (name == "rpc") {
      if (auto why = rpc_refusal(device.platform)) throw std::invalid_argument(*why);
    }
    return entry.make(device);
  }
  throw std::invalid_argument(fmt::format("unknown access mode '{}'; valid: {}", name, valid));
}

}  // namespace oaprof::gpu
