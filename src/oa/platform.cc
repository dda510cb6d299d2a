#include "oa/platform.h"

#include <array>

namespace oaprof::oa {
namespace {

// Topology defaults are the common SKU of each GT; the i915 topology query refines them on a
// real device. Timestamp frequencies: Gen8 12.5 MHz, Gen9 big core 12 MHz, Gen9 LP 19.2 MHz
// (reference/hardware.md §5); Gen11/12 default to the 19.2 MHz crystal until read from i915.
constexpr Platform kBdwGt2{"BDW", "bdw", Generation::kGen8, 2, 1, 3, 24, 12.5e6, 1000};
constexpr Platform kSklGt2{"SKL", "sklgt2", Generation::kGen9, 2, 1, 3, 24, 12e6, 1150};
constexpr Platform kSklGt3{"SKL", "sklgt3", Generation::kGen9, 3, 2, 6, 48, 12e6, 1100};
constexpr Platform kSklGt4{"SKL", "sklgt4", Generation::kGen9, 4, 3, 9, 72, 12e6, 1150};
constexpr Platform kBxt{"BXT", "bxt", Generation::kGen9, 1, 1, 3, 18, 19.2e6, 750};
constexpr Platform kKblGt2{"KBL", "kblgt2", Generation::kGen9, 2, 1, 3, 24, 12e6, 1150};
constexpr Platform kKblGt3{"KBL", "kblgt3", Generation::kGen9, 3, 2, 6, 48, 12e6, 1100};
constexpr Platform kCflGt2{"CFL", "cflgt2", Generation::kGen9, 2, 1, 3, 24, 12e6, 1200};
constexpr Platform kCflGt3{"CFL", "cflgt3", Generation::kGen9, 3, 2, 6, 48, 12e6, 1150};
constexpr Platform kGlk{"GLK", "glk", Generation::kGen9, 1, 1, 2, 12, 19.2e6, 750};
constexpr Platform kIcl{"ICL", "icl", Generation::kGen11, 2, 1, 8, 64, 19.2e6, 1100};
constexpr Platform kTglGt2{"TGL", "tglgt2", Generation::kGen12, 2, 1, 6, 96, 19.2e6, 1350};

// A first slice of the PCI-id table; the OA-core issue extends it to every HSW..ADL part.
constexpr std::array kPciIds{
    PciId{0x1616, &kBdwGt2}, PciId{0x1916, &kSklGt2}, PciId{0x1912, &kSklGt2},
    PciId{0x191B, &kSklGt2}, PciId{0x1926, &kSklGt3}, PciId{0x193B, &kSklGt4},
    PciId{0x5A84, &kBxt},    PciId{0x5912, &kKblGt2}, PciId{0x5916, &kKblGt2},
    PciId{0x591B, &kKblGt2}, PciId{0x5926, &kKblGt3}, PciId{0x3E92, &kCflGt2},
    PciId{0x3E9B, &kCflGt2}, PciId{0x3EA5, &kCflGt3}, PciId{0x3185, &kGlk},
    PciId{0x8A52, &kIcl},    PciId{0x9A49, &kTglGt2},
};

constexpr std::array kPlatforms{&kBdwGt2, &kSklGt2, &kSklGt3, &kSklGt4, &kBxt,  &kKblGt2,
                                &kKblGt3, &kCflGt2, &kCflGt3, &kGlk,    &kIcl,  &kTglGt2};

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

std::span<const PciId> known_pci_ids() { return kPciIds; }

std::optional<Platform> platform_for_pci_id(std::uint16_t device_id) {
  for (const PciId& id : kPciIds) {
    if (id.device == device_id) return *id.platform;
  }
  return std::nullopt;
}

std::optional<Platform> platform_by_name(std::string_view metrics_file) {
  for (const Platform* p : kPlatforms) {
    if (p->metrics_file == metrics_file) return *p;
  }
  return std::nullopt;
}

const Platform& simulated_platform() { return kKblGt2; }

}  // namespace oaprof::oa
