// The batch the rpc read-out submits, built by one function for real hardware and the simulator
// alike, so the simulator's batch interpreter checks exactly what i915 would run:
// - Gen7.5–Gen11: one MI_REPORT_PERF_COUNT into a report buffer and MI_BATCH_BUFFER_END; the
//   GPU writes the global OA unit's report.
// - Gen12 and Xe-LPG: MI_REPORT_PERF_COUNT reports the per-context OAR unit, which counts only
//   the submitting context (oaprof's own, not the application's) and which only i915 can enable
//   (in the context image). So the batch reads the global OAG unit's counter registers with
//   MI_STORE_REGISTER_MEM — Mesa's Gen12 query path reads B, C (and Xe-LPG's A36/A37) the same
//   way (intel_perf.c intel_perf_init_query_fields) — after an MI_STORE_DWORD_IMM of the report
//   id, and the host lays them out as the format (mmio/counter_registers.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "mmio/sim_gpu.h"
#include "oa/platform.h"
#include "oa/report.h"
#include "oa/report_format.h"

namespace oaprof::gpu {

struct ReportBatch {
  // A dword holding (the low half of) report address + delta, for the relocation.
  struct Relocation {
    std::size_t dword;
    std::uint32_t delta;
  };
  std::vector<std::uint32_t> dwords;
  std::vector<Relocation> relocations;
  // Gen12+: the registers the batch stores, in order, at report address + 4 (1 + i).
  std::vector<std::uint32_t> registers;
};

// Gen7.5 uses the 3-dword Gen6/7 form (32-bit address), Gen8+ the 4-dword form (64-bit
// address). Throws std::invalid_argument when `report_address` is not 64-byte aligned or does
// not fit the form. The batch is padded to a whole number of qwords, as execbuf requires.
ReportBatch build_report_batch(oa::Generation gen, std::uint64_t report_address,
                               std::uint32_t report_id);

// Gen12+: the registers one snapshot of `format` reads, in the order the mmio read-out reads
// them when every 40-bit counter's high half changes between its two reads (so the low half is
// read twice): RING_TIMESTAMP, GPU_TICKS, the A counters, B, C.
std::vector<std::uint32_t> snapshot_registers(oa::Generation gen, oa::ReportFormat format);
// MI_STORE_DWORD_IMM of `report_id` at `report_address`, MI_STORE_REGISTER_MEM of each of
// `registers` to the next dwords, MI_BATCH_BUFFER_END. Throws std::invalid_argument when the
// address is not 64-byte aligned or the registers do not fit a 4 KiB report buffer.
ReportBatch build_register_batch(std::span<const std::uint32_t> registers,
                                 std::uint64_t report_address, std::uint32_t report_id);
// The report those stored registers make, laid out as `format` with RPT_ID `report_id`:
// `stored` holds the dwords after the report id, one per register of snapshot_registers;
// RING_TIMESTAMP is scaled by `oa_cs_shift` (DeviceFacts::oa_cs_shift) as the OA unit counts.
oa::RawReport assemble_register_report(oa::Generation gen, oa::ReportFormat format,
                                       std::uint32_t report_id, int oa_cs_shift,
                                       std::span<const std::uint32_t> stored);

// Runs report batches on a GPU and hands back the report buffer.
class BatchRunner {
 public:
  virtual ~BatchRunner() = default;
  // The report buffer's GPU address as last known; a batch built for it needs no relocation.
  virtual std::uint64_t report_address() const = 0;
  // Submits, waits for completion and copies the start of the report buffer into `report`.
  // Throws std::runtime_error with the failing step and what to do.
  virtual void run(const ReportBatch& batch, std::span<std::uint8_t> report) = 0;
};

// One snapshot in a batch: builds the generation's batch (above), runs it, and checks that the
// result carries `report_id`. Throws std::runtime_error starting with `who` when it does not (the
// GPU wrote no report: the OA unit is not enabled, or the batch did not run).
// `oa_cs_shift` as assemble_register_report.
oa::RawReport take_report(BatchRunner& runner, oa::Generation gen, oa::ReportFormat format,
                          std::uint32_t report_id, int oa_cs_shift, const std::string& who);

class I915Gem;

// The runner on i915's GEM interface (i915_gem.h): relocations and pwrite/pread where i915 takes
// them, softpin and GEM_MMAP_OFFSET on the parts where it refuses them (gem_batch_runner.cc).
std::unique_ptr<BatchRunner> make_gem_batch_runner(std::unique_ptr<I915Gem> gem,
                                                   const oa::Platform& platform);
// That runner on the simulated i915 of `sim` (make_sim_i915_gem), for `sim`'s platform.
std::unique_ptr<BatchRunner> make_sim_batch_runner(mmio::SimGpu& sim);
// That runner on `render_node` ("auto": the first /dev/dri/renderD* driven by i915).
std::unique_ptr<BatchRunner> make_drm_batch_runner(const std::string& render_node,
                                                   const oa::Platform& platform);

}  // namespace oaprof::gpu
