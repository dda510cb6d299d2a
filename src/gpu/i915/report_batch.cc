#include "gpu/i915/report_batch.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "mmio/commands.h"
#include "mmio/counter_registers.h"

namespace oaprof::gpu {

ReportBatch build_report_batch(oa::Generation gen, std::uint64_t report_address,
                               std::uint32_t report_id) {
  if (report_address % mmio::cmd::kReportAlignment != 0) {
    throw std::invalid_argument(
        fmt::format("MI_REPORT_PERF_COUNT target 0x{:X} is not 64-byte aligned", report_address));
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
  b.relocations.push_back({1, 0});
  b.dwords.push_back(mmio::cmd::kMiBatchBufferEnd);
  if (b.dwords.size() % 2 != 0) b.dwords.push_back(mmio::cmd::kMiNoop);
  return b;
}

std::vector<std::uint32_t> snapshot_registers(oa::Generation gen, oa::ReportFormat format) {
  std::vector<std::uint32_t> order;
  // Distinct values for every read make each 40-bit counter's two high-half reads differ, so
  // the recording takes the path that reads the low half again: the most reads a snapshot does.
  std::uint32_t next = 0;
  (void)mmio::read_counter_registers(mmio::reg::oa_block(gen), format, 0,
                                     [&](std::uint32_t offset) {
                                       order.push_back(offset);
                                       return next++;
                                     });
  return order;
}

namespace {

// The report buffer the runners hand out holds 4 KiB.
constexpr std::size_t kReportBufferBytes = 4096;

}  // namespace

ReportBatch build_register_batch(std::span<const std::uint32_t> registers,
                                 std::uint64_t report_address, std::uint32_t report_id) {
  if (report_address % mmio::cmd::kReportAlignment != 0) {
    throw std::invalid_argument(
        fmt::format("register snapshot target 0x{:X} is not 64-byte aligned", report_address));
  }
  if (4 * (registers.size() + 1) > kReportBufferBytes) {
    throw std::invalid_argument(
        fmt::format("a register snapshot of {} registers does not fit the {}-byte report buffer",
                    registers.size(), kReportBufferBytes));
  }
  ReportBatch b;
  auto store = [&](std::uint32_t dw0, std::uint32_t operand_first, std::uint32_t delta,
                   std::optional<std::uint32_t> operand_last) {
    b.dwords.push_back(dw0);
    if (!operand_last) b.dwords.push_back(operand_first);  // SRM: the register comes first
    b.relocations.push_back({b.dwords.size(), delta});
    const std::uint64_t target = report_address + delta;
    b.dwords.push_back(static_cast<std::uint32_t>(target));
    b.dwords.push_back(static_cast<std::uint32_t>(target >> 32));
    if (operand_last) b.dwords.push_back(*operand_last);  // MI_STORE_DWORD_IMM: the data last
  };
  store(mmio::cmd::kMiStoreDwordImmGen4, 0, 0, report_id);
  for (std::size_t i = 0; i < registers.size(); ++i) {
    store(mmio::cmd::kMiStoreRegisterMemGen8, registers[i], static_cast<std::uint32_t>(4 * (i + 1)),
          std::nullopt);
  }
  b.registers.assign(registers.begin(), registers.end());
  b.dwords.push_back(mmio::cmd::kMiBatchBufferEnd);
  if (b.dwords.size() % 2 != 0) b.dwords.push_back(mmio::cmd::kMiNoop);
  return b;
}

oa::RawReport assemble_register_report(oa::Generation gen, oa::ReportFormat format,
                                       std::uint32_t report_id, int oa_cs_shift,
                                       std::span<const std::uint32_t> stored) {
  const std::vector<std::uint32_t> order = snapshot_registers(gen, format);
  if (stored.size() < order.size()) {
    throw std::invalid_argument(fmt::format("register snapshot: {} stored dwords, {} expected",
                                            stored.size(), order.size()));
  }
  // Replays the reads: each register's stored values, in the order they were stored.
  std::map<std::uint32_t, std::deque<std::uint32_t>> values;
  for (std::size_t i = 0; i < order.size(); ++i) values[order[i]].push_back(stored[i]);
  oa::Report r = mmio::read_counter_registers(mmio::reg::oa_block(gen), format, oa_cs_shift,
                                              [&values](std::uint32_t offset) {
                                                auto& q = values.at(offset);
                                                const std::uint32_t v = q.front();
                                                if (q.size() > 1) q.pop_front();
                                                return v;
                                              });
  r.rpt_id = report_id;
  return oa::encode(format, r);
}

oa::RawReport take_report(BatchRunner& runner, oa::Generation gen, oa::ReportFormat format,
                          std::uint32_t report_id, int oa_cs_shift, const std::string& who) {
  if (oa::is_gen12_family(gen)) {
    const ReportBatch batch =
        build_register_batch(snapshot_registers(gen, format), runner.report_address(), report_id);
    std::vector<std::uint32_t> out(batch.registers.size() + 1, 0);
    runner.run(batch, std::span(reinterpret_cast<std::uint8_t*>(out.data()), out.size() * 4));
    if (out[0] != report_id) {
      throw std::runtime_error(fmt::format(
          "{}: the register snapshot batch wrote report id 0x{:X}, expected 0x{:X}: the batch did "
          "not run; `oaprof doctor` checks the device",
          who, out[0], report_id));
    }
    return assemble_register_report(gen, format, report_id, oa_cs_shift, std::span(out).subspan(1));
  }
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
