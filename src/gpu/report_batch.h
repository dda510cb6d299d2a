// The batch the rpc read-out submits: one MI_REPORT_PERF_COUNT into a report buffer and
// MI_BATCH_BUFFER_END. Built by one function for real hardware and the simulator alike, so the
// simulator's batch interpreter checks exactly what i915 would run.
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
  std::vector<std::uint32_t> dwords;
  std::size_t address_dword = 0;  // where the report address sits, for the relocation
};

// Gen7.5 uses the 3-dword Gen6/7 form (32-bit address), Gen8+ the 4-dword form (64-bit
// address). Throws std::invalid_argument when `report_address` is not 64-byte aligned or does
// not fit the form. The batch is padded to a whole number of qwords, as execbuf requires.
ReportBatch build_report_batch(oa::Generation gen, std::uint64_t report_address,
                               std::uint32_t report_id);

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

// One snapshot by MI_REPORT_PERF_COUNT: builds the batch for `gen`, runs it, and checks that the
// report carries `report_id`. Throws std::runtime_error starting with `who` when it does not (the
// GPU wrote no report: the OA unit is not enabled).
oa::RawReport take_report(BatchRunner& runner, oa::Generation gen, oa::ReportFormat format,
                          std::uint32_t report_id, const std::string& who);

// Executes batches with SimGpu's interpreter on buffers at fixed simulated GPU addresses.
std::unique_ptr<BatchRunner> make_sim_batch_runner(mmio::SimGpu& sim);

// i915 through libdrm: opens `render_node` ("auto": the first /dev/dri/renderD* driven by
// i915), makes GEM buffers for batch and reports, and submits with EXECBUFFER2 on the render
// engine with a relocation for the report address.
std::unique_ptr<BatchRunner> make_drm_batch_runner(const std::string& render_node);

}  // namespace oaprof::gpu
