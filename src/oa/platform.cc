#include "oa/platform.h"

#include <array>
#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::oa {
namespace {

using G = Generation;
constexpr auto kCtc = TimestampRule::kCrystalCtc;
constexpr auto kFix = TimestampRule::kFixed;

// Topology defaults are the common SKU of each GT; the i915 topology query refines them on a
// real device. Timestamp frequencies: Gen7.5/Gen8 12.5 MHz, Gen9 big core 12 MHz, Gen9 LP
// 19.2 MHz (reference/hardware.md §5); Gen11/12 default to the 19.2 MHz crystal until read from
// the device. An empty metrics file means IGT describes no metric set for that part (GT1 of the
// Gen9 big cores, KBL GT4): only the built-in set applies there.
// clang-format off
//                             codename file      gen        gt sl ss  eus  ts_hz   max  rule  min
constexpr Platform kHswGt1{"HSW", "hsw",    G::kGen7_5, 1, 1, 1, 10, 12.5e6, 1000, kFix, 200};
constexpr Platform kHswGt2{"HSW", "hsw",    G::kGen7_5, 2, 1, 2, 20, 12.5e6, 1200, kFix, 200};
constexpr Platform kHswGt3{"HSW", "hsw",    G::kGen7_5, 3, 2, 4, 40, 12.5e6, 1300, kFix, 200};
constexpr Platform kBdwGt1{"BDW", "bdw",    G::kGen8,   1, 1, 2, 12, 12.5e6, 1000, kFix, 300};
constexpr Platform kBdwGt2{"BDW", "bdw",    G::kGen8,   2, 1, 3, 24, 12.5e6, 1000, kFix, 300};
constexpr Platform kBdwGt3{"BDW", "bdw",    G::kGen8,   3, 2, 6, 48, 12.5e6, 1100, kFix, 300};
constexpr Platform kChv{   "CHV", "chv",    G::kGen8,   1, 1, 2, 16, 12.5e6,  600, kFix, 200};
constexpr Platform kSklGt1{"SKL", "",       G::kGen9,   1, 1, 2, 12, 12e6,   1050, kFix, 300};
constexpr Platform kSklGt2{"SKL", "sklgt2", G::kGen9,   2, 1, 3, 24, 12e6,   1150, kFix, 300};
constexpr Platform kSklGt3{"SKL", "sklgt3", G::kGen9,   3, 2, 6, 48, 12e6,   1100, kFix, 300};
constexpr Platform kSklGt4{"SKL", "sklgt4", G::kGen9,   4, 3, 9, 72, 12e6,   1150, kFix, 300};
constexpr Platform kBxt{   "BXT", "bxt",    G::kGen9,   1, 1, 3, 18, 19.2e6,  750, kFix, 200};
constexpr Platform kGlk{   "GLK", "glk",    G::kGen9,   1, 1, 2, 12, 19.2e6,  750, kFix, 200};
constexpr Platform kGlk18{ "GLK", "glk",    G::kGen9,   1, 1, 3, 18, 19.2e6,  800, kFix, 200};
constexpr Platform kKblGt1{"KBL", "",       G::kGen9,   1, 1, 2, 12, 12e6,   1100, kFix, 300};
constexpr Platform kKblGt15{"KBL","",       G::kGen9,   1, 1, 3, 18, 12e6,   1100, kFix, 300};
constexpr Platform kKblGt2{"KBL", "kblgt2", G::kGen9,   2, 1, 3, 24, 12e6,   1150, kFix, 300};
constexpr Platform kKblGt3{"KBL", "kblgt3", G::kGen9,   3, 2, 6, 48, 12e6,   1100, kFix, 300};
constexpr Platform kKblGt4{"KBL", "",       G::kGen9,   4, 3, 9, 72, 12e6,   1150, kFix, 300};
constexpr Platform kAmlGt2{"AML", "kblgt2", G::kGen9,   2, 1, 3, 24, 12e6,   1050, kFix, 300};
constexpr Platform kCflGt1{"CFL", "",       G::kGen9,   1, 1, 2, 12, 12e6,   1050, kFix, 350};
constexpr Platform kCflGt2{"CFL", "cflgt2", G::kGen9,   2, 1, 3, 24, 12e6,   1200, kFix, 350};
constexpr Platform kCflGt3{"CFL", "cflgt3", G::kGen9,   3, 2, 6, 48, 12e6,   1150, kFix, 300};
constexpr Platform kWhlGt1{"WHL", "",       G::kGen9,   1, 1, 2, 12, 12e6,   1000, kFix, 300};
constexpr Platform kWhlGt2{"WHL", "cflgt2", G::kGen9,   2, 1, 3, 24, 12e6,   1150, kFix, 300};
constexpr Platform kWhlGt3{"WHL", "cflgt3", G::kGen9,   3, 2, 6, 48, 12e6,   1100, kFix, 300};
constexpr Platform kCmlGt1{"CML", "",       G::kGen9,   1, 1, 2, 12, 12e6,   1050, kFix, 350};
constexpr Platform kCmlGt2{"CML", "cflgt2", G::kGen9,   2, 1, 3, 24, 12e6,   1200, kFix, 350};
constexpr Platform kIclGt2{"ICL", "icl",    G::kGen11,  2, 1, 8, 64, 19.2e6, 1100, kCtc, 300};
constexpr Platform kIclGt05{"ICL","icl",    G::kGen11,  1, 1, 1,  8, 19.2e6, 1100, kCtc, 300};
constexpr Platform kEhl{   "EHL", "ehl",    G::kGen11,  1, 1, 4, 32, 19.2e6,  850, kCtc, 250};
constexpr Platform kJsl{   "JSL", "ehl",    G::kGen11,  1, 1, 4, 32, 19.2e6,  850, kCtc, 250};
constexpr Platform kTglGt1{"TGL", "tglgt1", G::kGen12,  1, 1, 2, 32, 19.2e6, 1450, kCtc, 350};
constexpr Platform kTglGt2{"TGL", "tglgt2", G::kGen12,  2, 1, 6, 96, 19.2e6, 1350, kCtc, 100};
constexpr Platform kRkl{   "RKL", "rkl",    G::kGen12,  1, 1, 2, 32, 19.2e6, 1300, kCtc, 350};
constexpr Platform kAdlS{  "ADL", "adl",    G::kGen12,  1, 1, 2, 32, 19.2e6, 1450, kCtc, 300};
constexpr Platform kAdlP{  "ADL", "adl",    G::kGen12,  2, 1, 6, 96, 19.2e6, 1400, kCtc, 100};
constexpr Platform kAdlN{  "ADL", "adl",    G::kGen12,  1, 1, 4, 32, 19.2e6, 1250, kCtc, 100};
constexpr Platform kDg1{   "DG1", "dg1",    G::kGen12,  1, 1, 6, 96, 19.2e6, 1550, kCtc, 300};
// clang-format on

// Device ids from the Linux i915 driver's PCI id lists (i915_pciids.h), grouped as it groups them.
// A plain array: clang refuses deducing std::array of this many elements.
constexpr PciId kPciIds[] = {
    // Haswell GT1/GT2/GT3: desktop, server, reserved, ULT, CRW variants.
    PciId{0x0402, &kHswGt1}, PciId{0x0406, &kHswGt1}, PciId{0x040A, &kHswGt1},
    PciId{0x040B, &kHswGt1}, PciId{0x040E, &kHswGt1}, PciId{0x0A02, &kHswGt1},
    PciId{0x0A06, &kHswGt1}, PciId{0x0A0A, &kHswGt1}, PciId{0x0A0B, &kHswGt1},
    PciId{0x0A0E, &kHswGt1}, PciId{0x0C02, &kHswGt1}, PciId{0x0C06, &kHswGt1},
    PciId{0x0C0A, &kHswGt1}, PciId{0x0C0B, &kHswGt1}, PciId{0x0C0E, &kHswGt1},
    PciId{0x0D02, &kHswGt1}, PciId{0x0D06, &kHswGt1}, PciId{0x0D0A, &kHswGt1},
    PciId{0x0D0B, &kHswGt1}, PciId{0x0D0E, &kHswGt1},
    PciId{0x0412, &kHswGt2}, PciId{0x0416, &kHswGt2}, PciId{0x041A, &kHswGt2},
    PciId{0x041B, &kHswGt2}, PciId{0x041E, &kHswGt2}, PciId{0x0A12, &kHswGt2},
    PciId{0x0A16, &kHswGt2}, PciId{0x0A1A, &kHswGt2}, PciId{0x0A1B, &kHswGt2},
    PciId{0x0A1E, &kHswGt2}, PciId{0x0C12, &kHswGt2}, PciId{0x0C16, &kHswGt2},
    PciId{0x0C1A, &kHswGt2}, PciId{0x0C1B, &kHswGt2}, PciId{0x0C1E, &kHswGt2},
    PciId{0x0D12, &kHswGt2}, PciId{0x0D16, &kHswGt2}, PciId{0x0D1A, &kHswGt2},
    PciId{0x0D1B, &kHswGt2}, PciId{0x0D1E, &kHswGt2},
    PciId{0x0422, &kHswGt3}, PciId{0x0426, &kHswGt3}, PciId{0x042A, &kHswGt3},
    PciId{0x042B, &kHswGt3}, PciId{0x042E, &kHswGt3}, PciId{0x0A22, &kHswGt3},
    PciId{0x0A26, &kHswGt3}, PciId{0x0A2A, &kHswGt3}, PciId{0x0A2B, &kHswGt3},
    PciId{0x0A2E, &kHswGt3}, PciId{0x0C22, &kHswGt3}, PciId{0x0C26, &kHswGt3},
    PciId{0x0C2A, &kHswGt3}, PciId{0x0C2B, &kHswGt3}, PciId{0x0C2E, &kHswGt3},
    PciId{0x0D22, &kHswGt3}, PciId{0x0D26, &kHswGt3}, PciId{0x0D2A, &kHswGt3},
    PciId{0x0D2B, &kHswGt3}, PciId{0x0D2E, &kHswGt3},
    // Broadwell GT1/GT2/GT3 (and the reserved GT3 ids), Cherryview.
    PciId{0x1602, &kBdwGt1}, PciId{0x1606, &kBdwGt1}, PciId{0x160A, &kBdwGt1},
    PciId{0x160B, &kBdwGt1}, PciId{0x160D, &kBdwGt1}, PciId{0x160E, &kBdwGt1},
    PciId{0x1612, &kBdwGt2}, PciId{0x1616, &kBdwGt2}, PciId{0x161A, &kBdwGt2},
    PciId{0x161B, &kBdwGt2}, PciId{0x161D, &kBdwGt2}, PciId{0x161E, &kBdwGt2},
    PciId{0x1622, &kBdwGt3}, PciId{0x1626, &kBdwGt3}, PciId{0x162A, &kBdwGt3},
    PciId{0x162B, &kBdwGt3}, PciId{0x162D, &kBdwGt3}, PciId{0x162E, &kBdwGt3},
    PciId{0x1632, &kBdwGt3}, PciId{0x1636, &kBdwGt3}, PciId{0x163A, &kBdwGt3},
    PciId{0x163B, &kBdwGt3}, PciId{0x163D, &kBdwGt3}, PciId{0x163E, &kBdwGt3},
    PciId{0x22B0, &kChv},    PciId{0x22B1, &kChv},    PciId{0x22B2, &kChv},
    PciId{0x22B3, &kChv},
    // Skylake GT1..GT4.
    PciId{0x1902, &kSklGt1}, PciId{0x1906, &kSklGt1}, PciId{0x190A, &kSklGt1},
    PciId{0x190B, &kSklGt1}, PciId{0x190E, &kSklGt1},
    PciId{0x1912, &kSklGt2}, PciId{0x1913, &kSklGt2}, PciId{0x1915, &kSklGt2},
    PciId{0x1916, &kSklGt2}, PciId{0x1917, &kSklGt2}, PciId{0x191A, &kSklGt2},
    PciId{0x191B, &kSklGt2}, PciId{0x191D, &kSklGt2}, PciId{0x191E, &kSklGt2},
    PciId{0x1921, &kSklGt2},
    PciId{0x1923, &kSklGt3}, PciId{0x1926, &kSklGt3}, PciId{0x1927, &kSklGt3},
    PciId{0x192A, &kSklGt3}, PciId{0x192B, &kSklGt3}, PciId{0x192D, &kSklGt3},
    PciId{0x1932, &kSklGt4}, PciId{0x193A, &kSklGt4}, PciId{0x193B, &kSklGt4},
    PciId{0x193D, &kSklGt4},
    // Broxton, Gemini Lake.
    PciId{0x0A84, &kBxt},    PciId{0x1A84, &kBxt},    PciId{0x1A85, &kBxt},
    PciId{0x5A84, &kBxt},    PciId{0x5A85, &kBxt},
    PciId{0x3184, &kGlk18},  PciId{0x3185, &kGlk},
    // Kaby Lake GT1, GT1.5, GT2, GT3, GT4; Amber Lake.
    PciId{0x5902, &kKblGt1}, PciId{0x5906, &kKblGt1}, PciId{0x5908, &kKblGt1},
    PciId{0x590A, &kKblGt1}, PciId{0x590B, &kKblGt1}, PciId{0x590E, &kKblGt1},
    PciId{0x5913, &kKblGt15}, PciId{0x5915, &kKblGt15},
    PciId{0x5912, &kKblGt2}, PciId{0x5916, &kKblGt2}, PciId{0x5917, &kKblGt2},
    PciId{0x591A, &kKblGt2}, PciId{0x591B, &kKblGt2}, PciId{0x591D, &kKblGt2},
    PciId{0x591E, &kKblGt2}, PciId{0x5921, &kKblGt2},
    PciId{0x5923, &kKblGt3}, PciId{0x5926, &kKblGt3}, PciId{0x5927, &kKblGt3},
    PciId{0x593B, &kKblGt4},
    PciId{0x591C, &kAmlGt2}, PciId{0x87C0, &kAmlGt2}, PciId{0x87CA, &kAmlGt2},
    // Coffee Lake, Whiskey Lake, Comet Lake.
    PciId{0x3E90, &kCflGt1}, PciId{0x3E93, &kCflGt1}, PciId{0x3E99, &kCflGt1},
    PciId{0x3E91, &kCflGt2}, PciId{0x3E92, &kCflGt2}, PciId{0x3E94, &kCflGt2},
    PciId{0x3E96, &kCflGt2}, PciId{0x3E98, &kCflGt2}, PciId{0x3E9A, &kCflGt2},
    PciId{0x3E9B, &kCflGt2}, PciId{0x3EA9, &kCflGt2},
    PciId{0x3EA5, &kCflGt3}, PciId{0x3EA6, &kCflGt3}, PciId{0x3EA7, &kCflGt3},
    PciId{0x3EA8, &kCflGt3},
    PciId{0x3EA1, &kWhlGt1}, PciId{0x3EA4, &kWhlGt1},
    PciId{0x3EA0, &kWhlGt2}, PciId{0x3EA3, &kWhlGt2}, PciId{0x3EA2, &kWhlGt3},
    PciId{0x9B21, &kCmlGt1}, PciId{0x9BA0, &kCmlGt1}, PciId{0x9BA2, &kCmlGt1},
    PciId{0x9BA4, &kCmlGt1}, PciId{0x9BA5, &kCmlGt1}, PciId{0x9BA8, &kCmlGt1},
    PciId{0x9BAA, &kCmlGt1}, PciId{0x9BAB, &kCmlGt1}, PciId{0x9BAC, &kCmlGt1},
    PciId{0x9B41, &kCmlGt2}, PciId{0x9BC0, &kCmlGt2}, PciId{0x9BC2, &kCmlGt2},
    PciId{0x9BC4, &kCmlGt2}, PciId{0x9BC5, &kCmlGt2}, PciId{0x9BC6, &kCmlGt2},
    PciId{0x9BC8, &kCmlGt2}, PciId{0x9BCA, &kCmlGt2}, PciId{0x9BCB, &kCmlGt2},
    PciId{0x9BCC, &kCmlGt2}, PciId{0x9BE6, &kCmlGt2}, PciId{0x9BF6, &kCmlGt2},
    // Ice Lake, Elkhart Lake, Jasper Lake.
    PciId{0x8A50, &kIclGt2}, PciId{0x8A51, &kIclGt2}, PciId{0x8A52, &kIclGt2},
    PciId{0x8A53, &kIclGt2}, PciId{0x8A54, &kIclGt2}, PciId{0x8A56, &kIclGt2},
    PciId{0x8A57, &kIclGt2}, PciId{0x8A58, &kIclGt2}, PciId{0x8A59, &kIclGt2},
    PciId{0x8A5A, &kIclGt2}, PciId{0x8A5B, &kIclGt2}, PciId{0x8A5C, &kIclGt2},
    PciId{0x8A5D, &kIclGt2}, PciId{0x8A71, &kIclGt05},
    PciId{0x4541, &kEhl},    PciId{0x4551, &kEhl},    PciId{0x4555, &kEhl},
    PciId{0x4557, &kEhl},    PciId{0x4570, &kEhl},    PciId{0x4571, &kEhl},
    PciId{0x4E51, &kJsl},    PciId{0x4E55, &kJsl},    PciId{0x4E57, &kJsl},
    PciId{0x4E61, &kJsl},    PciId{0x4E71, &kJsl},
    // Tiger Lake, Rocket Lake, Alder Lake S/P/N, DG1.
    PciId{0x9A60, &kTglGt1}, PciId{0x9A68, &kTglGt1}, PciId{0x9A70, &kTglGt1},
    PciId{0x9A40, &kTglGt2}, PciId{0x9A49, &kTglGt2}, PciId{0x9A59, &kTglGt2},
    PciId{0x9A78, &kTglGt2}, PciId{0x9AC0, &kTglGt2}, PciId{0x9AC9, &kTglGt2},
    PciId{0x9AD9, &kTglGt2}, PciId{0x9AF8, &kTglGt2},
    PciId{0x4C80, &kRkl},    PciId{0x4C8A, &kRkl},    PciId{0x4C8B, &kRkl},
    PciId{0x4C8C, &kRkl},    PciId{0x4C90, &kRkl},    PciId{0x4C9A, &kRkl},
    PciId{0x4680, &kAdlS},   PciId{0x4682, &kAdlS},   PciId{0x4688, &kAdlS},
    PciId{0x468A, &kAdlS},   PciId{0x468B, &kAdlS},   PciId{0x4690, &kAdlS},
    PciId{0x4692, &kAdlS},   PciId{0x4693, &kAdlS},
    PciId{0x46A0, &kAdlP},   PciId{0x46A1, &kAdlP},   PciId{0x46A2, &kAdlP},
    PciId{0x46A3, &kAdlP},   PciId{0x46A6, &kAdlP},   PciId{0x46A8, &kAdlP},
    PciId{0x46AA, &kAdlP},   PciId{0x462A, &kAdlP},   PciId{0x4626, &kAdlP},
    PciId{0x4628, &kAdlP},   PciId{0x46B0, &kAdlP},   PciId{0x46B1, &kAdlP},
    PciId{0x46B2, &kAdlP},   PciId{0x46B3, &kAdlP},   PciId{0x46C0, &kAdlP},
    PciId{0x46C1, &kAdlP},   PciId{0x46C2, &kAdlP},   PciId{0x46C3, &kAdlP},
    PciId{0x46D0, &kAdlN},   PciId{0x46D1, &kAdlN},   PciId{0x46D2, &kAdlN},
    PciId{0x4905, &kDg1},    PciId{0x4906, &kDg1},    PciId{0x4907, &kDg1},
    PciId{0x4908, &kDg1},    PciId{0x4909, &kDg1},
};

// Look-up order by name: the first platform with a file is its representative.
constexpr std::array kPlatforms{
    &kHswGt2, &kBdwGt2, &kChv,    &kSklGt2, &kSklGt3, &kSklGt4, &kBxt,  &kGlk,
    &kKblGt2, &kKblGt3, &kCflGt2, &kCflGt3, &kIclGt2, &kEhl,    &kTglGt1, &kTglGt2,
    &kRkl,    &kAdlP,   &kDg1};

constexpr std::array<std::string_view, kPlatforms.size()> kPlatformNames = [] {
  std::array<std::string_view, kPlatforms.size()> names{};
  for (std::size_t i = 0; i < kPlatforms.size(); ++i) names[i] = kPlatforms[i]->metrics_file;
  return names;
}();

}  // namespace

std::string_view generation_name(Generation gen) {
  switch (gen) {
    case Generation::kGen7_5: return "Gen7.5";
    case Generation::kGen8: return "Gen8";
    case Generation::kGen9: return "Gen9";
    case Generation::kGen11: return "Gen11";
    case Generation::kGen12: return "Gen12";
  }
  return "unknown";
}

std::string_view timestamp_rule_name(TimestampRule rule) {
  switch (rule) {
    case TimestampRule::kFixed: return "fixed";
    case TimestampRule::kCrystalCtc: return "crystal/CTC";
  }
  return "unknown";
}

std::string_view kernel_driver_name(KernelDriver driver) {
  switch (driver) {
    case KernelDriver::kI915: return "i915";
    case KernelDriver::kXe: return "xe";
  }
  return "unknown";
}

std::string gt_label(const Platform& platform) {
  if (!platform.gt_name.empty()) return std::string(platform.gt_name);
  return fmt::format("GT{}", platform.gt);
}

std::span<const PciId> known_pci_ids() { return kPciIds; }

std::optional<Platform> platform_for_pci_id(std::uint16_t device_id) {
  for (const PciId& id : kPciIds) {
    if (id.device == device_id) return *id.platform;
  }
  return std::nullopt;
}

Platform require_platform_for_pci_id(std::uint16_t device_id) {
  if (auto p = platform_for_pci_id(device_id)) return *p;
  throw std::invalid_argument(fmt::format(
      "PCI device 8086:{:04x} is not an Intel integrated GPU oaprof knows (Haswell through Alder "
      "Lake); give the platform with --platform NAME ({}) or use --device sim",
      device_id, fmt::join(kPlatformNames, ", ")));
}

std::optional<Platform> platform_by_name(std::string_view metrics_file) {
  if (metrics_file.empty()) return std::nullopt;
  for (const Platform* p : kPlatforms) {
    if (p->metrics_file == metrics_file) return *p;
  }
  return std::nullopt;
}

Platform require_platform_by_name(std::string_view metrics_file) {
  if (auto p = platform_by_name(metrics_file)) return *p;
  throw std::invalid_argument(fmt::format("unknown platform '{}'; valid: {}", metrics_file,
                                          fmt::join(kPlatformNames, ", ")));
}

std::span<const std::string_view> platform_names() { return kPlatformNames; }

const Platform& simulated_platform() { return kKblGt2; }

}  // namespace oaprof::oa
