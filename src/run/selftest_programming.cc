// The selftest's programming, restore and energy checks: that the OA unit counts once oaprof
// programmed it, that each flex register feeds the counter oaprof's table says, that every
// register oaprof wrote reads back its earlier value afterwards and forcewake lets go, and that
// the energy planes move as the method assumes.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <thread>

#include "mmio/forcewake.h"
#include "mmio/registers.h"
#include "run/selftest_checks.h"
#include "run/selftest_load.h"

namespace oaprof::run::selftest {
namespace {

// The A counter that counts EU activity under every set, per generation: A7 (Gen8–11: what
// EU_PERF_CNTL0 selects; Gen12 EuActive's first quarter; Xe-LPG XveActive), as the simulator and
// IGT's ComputeBasic of oa-kblgt2.xml, oa-tglgt2.xml and oa-mtlgt2.xml read them.
std::optional<int> eu_activity_counter(oa::Generation gen) {
  if (gen == oa::Generation::kGen7_5 || gen == oa::Generation::kXe2) return std::nullopt;
  return 7;
}

}  // namespace

// programming: once programmed, the EU counters count during work and stay still without it;
// on Gen12 and Xe-LPG SQCNT1's PMON enable, without which NOA-fed counters stay still, is set.
Outcome check_noa_counting(Context& c) {
  const std::optional<int> counter = eu_activity_counter(c.device.platform.gen);
  if (!counter) {
    return skip(fmt::format("oaprof's table names no EU-activity counter of {}",
                            oa::generation_name(c.device.platform.gen)));
  }
  if (c.accesses.empty()) return skip("no read-out to measure through");
  StartedSource source(c, c.accesses.front());
  std::optional<bool> pmon;
  if (c.registers_mapped && oa::is_gen12_family(c.device.platform.gen)) {
    pmon = (c.device.mmio->read32(mmio::reg::kSqCnt1) & mmio::reg::kSqCnt1PmonEnable) != 0;
  }
  const Window idle = measure_window(c, *source, c.window_ns, false);
  std::string no_load;
  const std::unique_ptr<GpuLoad> load = start_load(c, no_load);  // after the idle window
  if (!no_load.empty()) return skip(no_load);
  const Window busy = measure_window(c, *source, c.window_ns, true);
  const auto busy_count = static_cast<double>(busy.deltas.a[*counter]);
  const auto idle_count = static_cast<double>(idle.deltas.a[*counter]);
  std::vector<Figure> figures = {{"busy", busy_count, "events"}, {"idle", idle_count, "events"}};
  const std::string measured = fmt::format(
      "A{} through {}: {:.0f} in a busy window, {:.0f} in an idle one{}{}", *counter,
      c.accesses.front(), busy_count, idle_count,
      pmon ? fmt::format(", SQCNT1 PMON enable {}", *pmon ? "set" : "clear") : std::string(),
      load_text(load.get()));
  if (busy_count > 0 && idle_count <= busy_count * 1e-3 && pmon.value_or(true)) {
    return pass(measured, std::move(figures));
  }
  return fail(measured,
              "the EU counters do not follow the work: the programming (SQCNT1, NOA mux) did "
              "not take",
              std::move(figures));
}

namespace {

// IGT's ComputeBasic value of EU_PERF_CNTL0 on KBL GT2 (oa-kblgt2.xml): an event that counts
// under EU work, unlike the 0 the other flex registers hold while one is probed.
constexpr std::uint32_t kFlexProbeEvent = 0x00005004;

// A(7 + j) per A0 over a busy window with flex register `probe` set to kFlexProbeEvent and the
// others to 0 (probe -1: all 0).
std::vector<double> flex_rates(Context& c, const std::string& access, int probe) {
  mmio::OaConfig config;
  for (int j = 0; j < 7; ++j) {
    config.flex.push_back({mmio::reg::kEuPerfCntl[j], j == probe ? kFlexProbeEvent : 0u});
  }
  StartedSource source(c, access, &config);
  const Window w = measure_window(c, *source, c.window_ns, true);
  std::vector<double> rates;
  const double busy = std::max(static_cast<double>(w.deltas.a[0]), 1.0);
  for (int j = 0; j < 7; ++j) rates.push_back(static_cast<double>(w.deltas.a[7 + j]) / busy);
  return rates;
}

}  // namespace

// programming: EU_PERF_CNTLi feeds A(7 + i) (Gen8–11), as every Gen9 equation of IGT reads it.
Outcome check_flex_routing(Context& c) {
  const oa::Generation gen = c.device.platform.gen;
  if (gen == oa::Generation::kGen7_5 || oa::is_gen12_family(gen) || gen == oa::Generation::kXe2) {
    return skip(fmt::format("oaprof's flex routing table covers Gen8–11, not {}",
                            oa::generation_name(gen)));
  }
  const auto access = std::find_if(c.accesses.begin(), c.accesses.end(),
                                   [](const std::string& a) { return a != "perf"; });
  if (access == c.accesses.end()) return skip("needs a read-out that programs flex registers");
  std::string no_load;
  const std::unique_ptr<GpuLoad> load = start_load(c, no_load);
  if (!no_load.empty()) return skip(no_load);
  const std::vector<double> base = flex_rates(c, *access, -1);
  std::vector<std::string> wrong;
  for (int i = 0; i < 7; ++i) {
    const std::vector<double> probed = flex_rates(c, *access, i);
    std::vector<std::string> moved;
    for (int j = 0; j < 7; ++j) {
      if (std::abs(probed[j] - base[j]) > 0.02 * std::max(base[j], 1e-6)) {
        moved.push_back(fmt::format("A{}", 7 + j));
      }
    }
    if (moved != std::vector<std::string>{fmt::format("A{}", 7 + i)}) {
      wrong.push_back(
          fmt::format("EU_PERF_CNTL{} moved {}", i,
                      moved.empty() ? "nothing" : fmt::format("{}", fmt::join(moved, "+"))));
    }
  }
  const std::string measured = fmt::format(
      "each EU_PERF_CNTLi set to 0x{:X} in turn through {}: {}{}", kFlexProbeEvent, *access,
      wrong.empty() ? "each moved A(7+i) alone" : "see the reason", load_text(load.get()));
  std::vector<Figure> figures = {{"misrouted", static_cast<double>(wrong.size()), "registers"}};
  if (wrong.empty()) return pass(measured, std::move(figures));
  return fail(measured,
              fmt::format("flex registers feed other counters than the metric sets read: {}",
                          fmt::join(wrong, ", ")),
              std::move(figures));
}

RecordingMmio::RecordingMmio(std::unique_ptr<mmio::Mmio> inner) : inner_(std::move(inner)) {}

std::uint32_t RecordingMmio::read32(std::uint32_t offset) { return inner_->read32(offset); }

void RecordingMmio::write32(std::uint32_t offset, std::uint32_t value) {
  if (!before_.contains(offset)) before_[offset] = inner_->read32(offset);
  inner_->write32(offset, value);
}

std::string RecordingMmio::describe() const { return inner_->describe(); }

// restore: after the profiles of every check before it and one more through each read-out,
// every register oaprof wrote since the device was opened reads back its value from then.
// Forcewake's request registers are the forcewake check's: the device holds forcewake till the end.
Outcome check_restore(Context& c) {
  if (!c.registers_mapped || c.recorder == nullptr) {
    return skip("oaprof writes no register on this device (xe or perf only)");
  }
  for (const std::string& access : c.accesses) {
    StartedSource source(c, access);
    measure_window(c, *source, c.window_ns / 10, true);
  }
  std::vector<std::string> kept;
  std::size_t written = 0;
  for (const auto& [offset, before] : c.recorder->before()) {
    if (mmio::reg::is_forcewake_request(offset)) continue;
    ++written;
    const std::uint32_t now = c.device.mmio->read32(offset);
    if (now != before) {
      kept.push_back(fmt::format("0x{:X} 0x{:X} (was 0x{:X})", offset, now, before));
    }
  }
  std::vector<Figure> figures = {{"registers_written", double(written), ""},
                                 {"not_restored", double(kept.size()), ""}};
  const std::string measured = fmt::format(
      "{} registers written since the device was opened, {} not restored", written, kept.size());
  if (kept.empty()) return pass(measured, std::move(figures));
  return fail(measured,
              fmt::format("registers keep oaprof's values after the restore: {}; the GPU is not "
                          "as oaprof found it (a reboot restores it)",
                          fmt::join(kept, ", ")),
              std::move(figures));
}

// restore: forcewake taken through the registers is acknowledged, and let go on release.
Outcome check_forcewake(Context& c) {
  if (!c.registers_mapped)
    return skip("oaprof takes no forcewake on this device (xe or perf only)");
  mmio::ForcewakeOptions options;
  options.mode = mmio::ForcewakeMode::kRegisters;
  const auto domains = mmio::oa_forcewake_domains(c.device.platform);
  std::unique_ptr<mmio::Forcewake> held;
  try {
    held = mmio::Forcewake::acquire(*c.device.mmio, c.device.platform, options);
  } catch (const std::exception& e) {
    return fail("forcewake through the registers was not acknowledged", e.what());
  }
  held->release();
  std::vector<std::string> still;
  for (const auto& d : domains) {
    if ((c.device.mmio->read32(d.ack) & mmio::reg::kForcewakeOaprofBit) != 0)
      still.push_back(d.name);
  }
  std::vector<Figure> figures = {{"domains", double(domains.size()), ""},
                                 {"still_held", double(still.size()), ""}};
  const std::string measured =
      fmt::format("{} domains acknowledged within {} ms; {} still held after release",
                  domains.size(), options.ack_timeout.count(), still.size());
  if (still.empty()) return pass(measured, std::move(figures));
  return fail(measured, fmt::format("still acknowledged: {}", fmt::join(still, ", ")),
              std::move(figures));
}

}  // namespace oaprof::run::selftest
