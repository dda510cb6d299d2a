#include "gpu/report_batch.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "mmio/commands.h"

namespace oaprof::gpu {

ReportBatch build_report_batch(oa::Generation gen, std::uint64_t report_address,
                               std::uint32_t report_id) {
  if (report_address % mmio::cmd::kReportAlignment != 0) {
    throw std::invalid_argument(fmt::format(
        "MI_REPORT_PERF_COUNT target 0x{:X} is not 64-byte aligned", report_address));
  }
  ReportBatch b;
  if (gen == oa::Generation::kGen7_5) {
    if (report_address > 0xFFFFFFFFu) {
      throw std::invalid_argument(fmt::format(
          "report address 0x{:X} does not fit Gen7's 32-bit MI_REPORT_PERF_COUNT", report_address));
    }
    b.dwords = {mmio::cmd::kMiReportPerfCountGen7, static_cast<std::uint32_t>(report_address),
                report_id};
  } else {
    b.dwords = {mmio::cmd::kMiReportPerfCountGen8, static_cast<std::uint32_t>(report_address),
                static_cast<std::uint32_t>(report_address >> 32), report_id};
  }
  b.address_dword = 1;
  b.dwords.push_back(mmio::cmd::kMiBatchBufferEnd);
  if (b.dwords.size() % 2 != 0) b.dwords.push_back(mmio::cmd::kMiNoop);
  return b;
}

namespace {

class SimBatchRunner final : public BatchRunner, private mmio::GpuAddressSpace {
 public:
  static constexpr std::uint64_t kReportAddress = 0x20000;
  static constexpr std::size_t kReportBytes = 4096;

  explicit SimBatchRunner(mmio::SimGpu& sim) : sim_(sim), reports_(kReportBytes) {}

  std::uint64_t report_address() const override { return kReportAddress; }

  void run(const ReportBatch& batch, std::span<std::uint8_t> report) override {
    std::fill(reports_.begin(), reports_.end(), 0);
    sim_.execute_batch(batch.dwords, *this);
    std::memcpy(report.data(), reports_.data(), std::min(report.size(), reports_.size()));
  }

 private:
  std::uint8_t* resolve(std::uint64_t gpu_address, std::size_t size) override {
    if (gpu_address < kReportAddress || gpu_address + size > kReportAddress + kReportBytes) {
      throw std::invalid_argument(fmt::format(
          "batch writes {} bytes at GPU address 0x{:X}, outside the report buffer "
          "0x{:X}+{}", size, gpu_address, kReportAddress, kReportBytes));
    }
    return reports_.data() + (gpu_address - kReportAddress);
  }

  mmio::SimGpu& sim_;
  std::vector<std::uint8_t> reports_;
};

}  // namespace

std::unique_ptr<BatchRunner> make_sim_batch_runner(mmio::SimGpu& sim) {
  return std::make_unique<SimBatchRunner>(sim);
}

oa::RawReport take_report(BatchRunner& runner, oa::Generation gen, oa::ReportFormat format,
                          std::uint32_t report_id, const std::string& who) {
  const ReportBatch batch = build_report_batch(gen, runner.report_address(), report_id);
  oa::RawReport raw;
  raw.size = oa::layout_of(format).size_bytes;
  runner.run(batch, std::span(raw.bytes.data(), static_cast<std::size_t>(raw.size)));
  if (raw.dword(0) != report_id) {
    throw std::runtime_error(fmt::format(
        "{}: MI_REPORT_PERF_COUNT wrote report id 0x{:X}, expected 0x{:X}: the GPU did not "
        "write the report; is the OA unit enabled? `oaprof doctor` checks it",
        who, raw.dword(0), report_id));
  }
  return raw;
}

}  // namespace oaprof::gpu
