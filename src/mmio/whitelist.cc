#include "mmio/whitelist.h"

#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "mmio/registers.h"

namespace oaprof::mmio {
namespace {

struct Range {
  std::uint32_t first, last;  // inclusive
};

constexpr Range kBoolean[] = {{0x2710, 0x272C}, {0x2740, 0x275C}, {0x2770, 0x27AC}};
constexpr Range kMuxGen8[] = {{0x91B8, 0x91CC}, {0x9800, 0x9888}, {0xE180, 0xE180},
                              {0x0D00, 0x0D2C}, {0x20CC, 0x20CC}};
constexpr Range kMuxGen11Extra[] = {{0x91C8, 0x91DC}};
constexpr Range kMuxChvExtra[] = {{0x182300, 0x1823A4}};

bool in(std::span<const Range> ranges, std::uint32_t address) {
  return std::any_of(ranges.begin(), ranges.end(),
                     [address](const Range& r) { return address >= r.first && address <= r.last; });
}

std::string describe(std::span<const Range> ranges) {
  std::string out;
  for (const Range& r : ranges) {
    if (!out.empty()) out += ", ";
    out += r.first == r.last ? fmt::format("0x{:04X}", r.first)
                             : fmt::format("0x{:04X}–0x{:04X}", r.first, r.last);
  }
  return out;
}

bool gen_in_scope(oa::Generation gen) {
  return gen == oa::Generation::kGen8 || gen == oa::Generation::kGen9 ||
         gen == oa::Generation::kGen11;
}

}  // namespace

std::string_view config_register_kind_name(ConfigRegisterKind kind) {
  switch (kind) {
    case ConfigRegisterKind::kMux: return "mux (NOA)";
    case ConfigRegisterKind::kBoolean: return "boolean (OA)";
    case ConfigRegisterKind::kFlex: return "flex";
  }
  return "unknown";
}

namespace {

bool whitelisted(oa::Generation gen, bool chv, ConfigRegisterKind kind, std::uint32_t address) {
  if (!gen_in_scope(gen) || address % 4 != 0) return false;
  switch (kind) {
    case ConfigRegisterKind::kBoolean: return in(kBoolean, address);
    case ConfigRegisterKind::kMux:
      return in(kMuxGen8, address) ||
             (gen == oa::Generation::kGen11 && in(kMuxGen11Extra, address)) ||
             (chv && in(kMuxChvExtra, address));
    case ConfigRegisterKind::kFlex:
      return std::find(std::begin(reg::kEuPerfCntl), std::end(reg::kEuPerfCntl), address) !=
             std::end(reg::kEuPerfCntl);
  }
  return false;
}

void check(oa::Generation gen, bool chv, ConfigRegisterKind kind, const oa::RegisterWrite& w) {
  if (whitelisted(gen, chv, kind, w.address)) return;
  if (!gen_in_scope(gen)) {
    throw std::invalid_argument(fmt::format(
        "oaprof programs OA registers over MMIO on Gen8, Gen9 and Gen11 only, not {}; use "
        "--access perf", oa::generation_name(gen)));
  }
  std::string allowed;
  switch (kind) {
    case ConfigRegisterKind::kBoolean: allowed = describe(kBoolean); break;
    case ConfigRegisterKind::kMux:
      allowed = describe(kMuxGen8);
      if (gen == oa::Generation::kGen11) allowed += ", " + describe(kMuxGen11Extra);
      if (chv) allowed += ", " + describe(kMuxChvExtra);
      break;
    case ConfigRegisterKind::kFlex: allowed = "EU_PERF_CNTL0–6 (0xE458, 0xE558, 0xE658, 0xE758, "
                                              "0xE45C, 0xE55C, 0xE65C)"; break;
  }
  throw std::invalid_argument(fmt::format(
      "refusing to write 0x{:08X} to register 0x{:04X}: a {} register list on {} may only hold "
      "{} (the registers i915 accepts in a metric configuration); check the metric set",
      w.value, w.address, config_register_kind_name(kind), oa::generation_name(gen), allowed));
}

bool is_chv(const oa::Platform& platform) { return platform.codename == "CHV"; }

}  // namespace

bool is_whitelisted(oa::Generation gen, ConfigRegisterKind kind, std::uint32_t address) {
  return whitelisted(gen, false, kind, address);
}

bool is_whitelisted(const oa::Platform& platform, ConfigRegisterKind kind, std::uint32_t address) {
  return whitelisted(platform.gen, is_chv(platform), kind, address);
}

void check_whitelisted(oa::Generation gen, ConfigRegisterKind kind, const oa::RegisterWrite& w) {
  check(gen, false, kind, w);
}

void check_whitelisted(const oa::Platform& platform, ConfigRegisterKind kind,
                       const oa::RegisterWrite& w) {
  check(platform.gen, is_chv(platform), kind, w);
}

}  // namespace oaprof::mmio
