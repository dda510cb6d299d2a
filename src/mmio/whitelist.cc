#include "mmio/whitelist.h"

#include <algorithm>
#include <array>
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

// The kernel's range tables, each exactly as i915 defines it. Source: linux
// drivers/gpu/drm/i915/i915_perf.c @ torvalds/linux 002c6ca75289a4ac4f6738213dd2d258704886e4
// (gen7_oa_b_counters, gen12_oa_b_counters, gen7_oa_mux_regs, hsw_oa_mux_regs, chv_oa_mux_regs,
// gen8_oa_mux_regs, gen11_oa_mux_regs, gen12_oa_mux_regs; flex: gen8_is_valid_flex_addr).
constexpr Range kGen7Boolean[] = {
    {0x2710, 0x272C},  // OASTARTTRIG1-8
    {0x2740, 0x275C},  // OAREPORTTRIG1-8
    {0x2770, 0x27AC},  // OACEC0_0-OACEC7_1
};
constexpr Range kGen12Boolean[] = {
    {0x2B2C, 0x2B2C},  // GEN12_OAG_OA_PESS
    {0xD900, 0xD91C},  // GEN12_OAG_OASTARTTRIG1-8
    {0xD920, 0xD93C},  // GEN12_OAG_OAREPORTTRIG1-8
    {0xD940, 0xD97C},  // GEN12_OAG_CEC0_0-CEC7_1
    {0xDC00, 0xDC3C},  // GEN12_OAG_SCEC0_0-SCEC7_1
    {0xDC40, 0xDC40},  // GEN12_OAG_SPCTR_CNF
    {0xDC44, 0xDC44},  // GEN12_OAA_DBG_REG
};
// Xe-LPG (MTL, ARL), from the same file @ Kingxukai/linux
// 0291023e7330da28f2f7453c87c2ab7082d8360f (a mainline mirror newer than the commit above, with
// Meteor Lake): i915_perf_init() gives GRAPHICS_VER 12 gen12_is_valid_mux_addr, which takes
// mtl_oa_mux_regs from IP 12.70 on, and xehp_is_valid_b_counter_addr where
// HAS_OA_SLICE_CONTRIB_LIMITS (mtl_info has XE_HP_FEATURES, which sets it, and has_oam: i915_pci.c
// @ the same commit): xehp_oa_b_counters, gen12_oa_b_counters and, with HAS_OAM from IP 12.70,
// mtl_oam_b_counters.
constexpr Range kXeHpBoolean[] = {
    {0xDC48, 0xDC48},  // OAA_ENABLE_REG
    {0xDD00, 0xDD48},  // OAG_LCE0_0 - OAA_LENABLE_REG
};
constexpr Range kMtlOamBoolean[] = {
    {0x393000, 0x39301C},  // GEN12_OAM_STARTTRIG1-8
    {0x393020, 0x39303C},  // GEN12_OAM_REPORTTRIG1-8
    {0x393040, 0x39307C},  // GEN12_OAM_CEC0_0-CEC7_1
    {0x393200, 0x39323C},  // MPES0-7
};
constexpr Range kMtlMux[] = {
    {0x0D00, 0x0D04},      // RPM_CONFIG0-1
    {0x0D0C, 0x0D2C},      // NOA_CONFIG0-8
    {0x9840, 0x9840},      // GDT_CHICKEN_BITS
    {0x9884, 0x9888},      // NOA_WRITE
    {0x38D100, 0x38D114},  // VISACTL (0x20CC is repurposed on MTL: not in the list)
};
constexpr Range kGen7Mux[] = {
    {0x91B8, 0x91CC},  // OA_PERFCNT1-2, OA_PERFMATRIX
    {0x9800, 0x9888},  // MICRO_BP0_0 to NOA_WRITE
    {0xE180, 0xE180},  // HALF_SLICE_CHICKEN2
};
constexpr Range kHswMux[] = {
    {0x9E80, 0x9EA4},  // HSW_MBVID2_NOA0-9
    {0x9EC0, 0x9EC0},  // HSW_MBVID2_MISR0
    {0x25100, 0x2FF90},
};
constexpr Range kChvMux[] = {{0x182300, 0x1823A4}};
constexpr Range kGen8Mux[] = {
    {0x0D00, 0x0D2C},  // RPM_CONFIG0-1, NOA_CONFIG0-8
    {0x20CC, 0x20CC},  // WAIT_FOR_RC6_EXIT
};
constexpr Range kGen11Mux[] = {{0x91C8, 0x91DC}};  // OA_PERFCNT3-4
constexpr Range kGen12Mux[] = {
    {0x0D00, 0x0D04},  // RPM_CONFIG0-1
    {0x0D0C, 0x0D2C},  // NOA_CONFIG0-8
    {0x9840, 0x9840},  // GDT_CHICKEN_BITS
    {0x9884, 0x9888},  // NOA_WRITE
    {0x20CC, 0x20CC},  // WAIT_FOR_RC6_EXIT
};

// A list is the union of up to three kernel tables, as each is_valid_*_addr function ORs them.
struct RangeUnion {
  std::array<std::span<const Range>, 3> parts{};
};

// What i915 accepts in a user OA configuration on one platform (i915_perf_init() picks these).
struct PlatformWhitelist {
  std::string_view name;       // oaprof's name for the list
  std::string_view functions;  // the kernel functions it mirrors
  RangeUnion mux;
  RangeUnion boolean;
  bool flex;  // EU_PERF_CNTL0-6; i915 refuses every flex register before Gen8
};

constexpr PlatformWhitelist kHsw{"Haswell",
                                 "hsw_is_valid_mux_addr, gen7_is_valid_b_counter_addr, no flex",
                                 {{kGen7Mux, kHswMux}},
                                 {{kGen7Boolean}},
                                 false};
constexpr PlatformWhitelist kGen8{
    "Gen8/Gen9",
    "gen8_is_valid_mux_addr, gen7_is_valid_b_counter_addr, gen8_is_valid_flex_addr",
    {{kGen7Mux, kGen8Mux}},
    {{kGen7Boolean}},
    true};
constexpr PlatformWhitelist kChv{
    "Cherryview",
    "chv_is_valid_mux_addr, gen7_is_valid_b_counter_addr, gen8_is_valid_flex_addr",
    {{kGen7Mux, kChvMux}},
    {{kGen7Boolean}},
    true};
constexpr PlatformWhitelist kGen11{
    "Gen11",
    "gen11_is_valid_mux_addr, gen7_is_valid_b_counter_addr, gen8_is_valid_flex_addr",
    {{kGen7Mux, kGen8Mux, kGen11Mux}},
    {{kGen7Boolean}},
    true};
constexpr PlatformWhitelist kGen12{
    "Gen12",
    "gen12_is_valid_mux_addr, gen12_is_valid_b_counter_addr, gen8_is_valid_flex_addr",
    {{kGen12Mux}},
    {{kGen12Boolean}},
    true};

constexpr PlatformWhitelist kXeLpg{
    "Xe-LPG",
    "gen12_is_valid_mux_addr (mtl_oa_mux_regs), xehp_is_valid_b_counter_addr, "
    "gen8_is_valid_flex_addr",
    {{kMtlMux}},
    {{kXeHpBoolean, kGen12Boolean, kMtlOamBoolean}},
    true};

// DG2 and ATS-M (graphics 12.55): i915_perf_init() gives GRAPHICS_VER 12 gen12_is_valid_mux_addr,
// which takes gen12_oa_mux_regs below 12.70, and, since DG2 has has_oa_slice_contrib_limits
// (XE_HP_FEATURES in i915_pci.c), xehp_is_valid_b_counter_addr: xehp_oa_b_counters and
// gen12_oa_b_counters, its OAM ranges only from 12.70 (mtl_is_valid_oam_b_counter_addr). Source:
// linux drivers/gpu/drm/i915/i915_perf.c and i915_pci.c @ Kingxukai/linux
// 0291023e7330da28f2f7453c87c2ab7082d8360f.
constexpr PlatformWhitelist kXeHpg{
    "Xe-HPG",
    "gen12_is_valid_mux_addr (gen12_oa_mux_regs), xehp_is_valid_b_counter_addr, "
    "gen8_is_valid_flex_addr",
    {{kGen12Mux}},
    {{kXeHpBoolean, kGen12Boolean}},
    true};

const PlatformWhitelist& whitelist_for(oa::Generation gen, bool chv) {
  switch (gen) {
    case oa::Generation::kGen7_5:
      return kHsw;
    case oa::Generation::kGen8:
      return chv ? kChv : kGen8;
    case oa::Generation::kGen9:
      return kGen8;
    case oa::Generation::kGen11:
      return kGen11;
    case oa::Generation::kGen12:
      return kGen12;
    case oa::Generation::kXeHpg:
      return kXeHpg;
    case oa::Generation::kXeLpg:
      return kXeLpg;
    case oa::Generation::kXe2:
      throw std::invalid_argument(
          "oaprof does not program an Xe2/Xe3 OA unit through MMIO: xe owns it and checks a "
          "metric set's registers itself when it is added (DRM_XE_OBSERVATION_OP_ADD_CONFIG)");
  }
  throw std::logic_error("whitelist_for: generation missing from the table");
}

bool in(const RangeUnion& ranges, std::uint32_t address) {
  return std::any_of(ranges.parts.begin(), ranges.parts.end(), [address](const auto& part) {
    return std::any_of(part.begin(), part.end(), [address](const Range& r) {
      return address >= r.first && address <= r.last;
    });
  });
}

std::string describe(const RangeUnion& ranges) {
  std::string out;
  for (const auto& part : ranges.parts) {
    for (const Range& r : part) {
      if (!out.empty()) out += ", ";
      out += r.first == r.last ? fmt::format("0x{:04X}", r.first)
                               : fmt::format("0x{:04X}–0x{:04X}", r.first, r.last);
    }
  }
  return out;
}

bool is_flex(std::uint32_t address) {
  return std::find(std::begin(reg::kEuPerfCntl), std::end(reg::kEuPerfCntl), address) !=
         std::end(reg::kEuPerfCntl);
}

// i915 checks ranges only; oaprof also refuses an address that is not dword-aligned, since every
// register in these ranges is a dword and a misaligned MMIO write is never what a set meant.
bool whitelisted(oa::Generation gen, bool chv, ConfigRegisterKind kind, std::uint32_t address) {
  if (address % 4 != 0) return false;
  const PlatformWhitelist& list = whitelist_for(gen, chv);
  switch (kind) {
    case ConfigRegisterKind::kBoolean:
      return in(list.boolean, address);
    case ConfigRegisterKind::kMux:
      return in(list.mux, address);
    case ConfigRegisterKind::kFlex:
      return list.flex && is_flex(address);
  }
  return false;
}

std::string allowed_text(const PlatformWhitelist& list, ConfigRegisterKind kind) {
  switch (kind) {
    case ConfigRegisterKind::kBoolean:
      return describe(list.boolean);
    case ConfigRegisterKind::kMux:
      return describe(list.mux);
    case ConfigRegisterKind::kFlex:
      return list.flex ? "EU_PERF_CNTL0–6 (0xE458, 0xE558, 0xE658, 0xE758, 0xE45C, 0xE55C, 0xE65C)"
                       : "nothing (no flex registers before Gen8)";
  }
  return "nothing";
}

void check(oa::Generation gen, bool chv, ConfigRegisterKind kind, const oa::RegisterWrite& w) {
  if (whitelisted(gen, chv, kind, w.address)) return;
  const PlatformWhitelist& list = whitelist_for(gen, chv);
  throw std::invalid_argument(fmt::format(
      "refusing to write 0x{:08X} to register 0x{:04X}: a {} register list on {} may only hold "
      "{} (the registers i915 accepts in a metric configuration: {}); check the metric set",
      w.value, w.address, config_register_kind_name(kind), list.name, allowed_text(list, kind),
      list.functions));
}

bool is_chv(const oa::Platform& platform) { return platform.codename == "CHV"; }

}  // namespace

std::string_view config_register_kind_name(ConfigRegisterKind kind) {
  switch (kind) {
    case ConfigRegisterKind::kMux:
      return "mux (NOA)";
    case ConfigRegisterKind::kBoolean:
      return "boolean (OA)";
    case ConfigRegisterKind::kFlex:
      return "flex";
  }
  return "unknown";
}

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
