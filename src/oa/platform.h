// What oaprof knows about each Intel integrated GPU: PCI id → generation, GT, topology and clocks.
// Pure data and look-ups; the device layers (mmio, gpu) decide which platform they are talking to.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace oaprof::oa {

enum class Generation { kGen7_5, kGen8, kGen9, kGen11, kGen12 };

std::string_view generation_name(Generation gen);

struct Platform {
  std::string_view codename;      // "KBL"
  std::string_view metrics_file;  // IGT oa-<name>.xml that describes it, e.g. "kblgt2"
  Generation gen;
  int gt;
  int slices;
  int subslices;  // total
  int eus;        // total, as shipped (fused-off EUs not counted)
  double timestamp_hz;     // command-streamer timestamp frequency
  double max_freq_mhz;     // nominal maximum GPU frequency, for models and peaks
};

struct PciId {
  std::uint16_t device;
  const Platform* platform;
};

// Every PCI device id in the table (vendor 0x8086).
std::span<const PciId> known_pci_ids();

// nullopt when the id is not an Intel iGPU oaprof knows.
std::optional<Platform> platform_for_pci_id(std::uint16_t device_id);

// Look-up by the IGT metrics-file name ("kblgt2"); nullopt when unknown.
std::optional<Platform> platform_by_name(std::string_view metrics_file);

// The platform the simulator presents: a Kaby Lake GT2 (PCI 0x5916, 24 EUs, 12 MHz timestamp).
const Platform& simulated_platform();
inline constexpr std::uint16_t kSimulatedPciId = 0x5916;

}  // namespace oaprof::oa
