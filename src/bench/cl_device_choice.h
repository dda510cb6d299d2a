// Which OpenCL device kernel_runner runs on when it is named by PCI address (`--cl-device
// pci:BDF`): the device at that address, whichever platform lists it. A tool that knows the GPU it
// measures (oaprof selftest) uses it, so that kernel_runner's work lands on that GPU and not on an
// iGPU beside a discrete card, a second card, or a CPU runtime listed first. The address comes from
// cl_khr_pci_bus_info; a device without the extension (PoCL's CPU device) cannot match. Pure: the
// OpenCL queries are runner.cc's.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mmio/pci_bar.h"

namespace oaprof::bench {

// One OpenCL device as --devices lists it.
struct DeviceInfo {
  std::size_t platform_index = 0;
  std::string platform_name;
  std::size_t device_index = 0;
  std::string device_name;
  unsigned compute_units = 0;
  unsigned max_clock_mhz = 0;
  bool fp64 = false;
  // From cl_khr_pci_bus_info; nullopt where the device does not have the extension.
  std::optional<mmio::PciAddress> pci_address;
};

// What --cl-device's "pci:" form starts with.
inline constexpr std::string_view kPciChoicePrefix = "pci:";

// --cl-device's value: nullopt when it does not start with "pci:" (an index or a name substring,
// as before); else the address after it, DDDD:BB:DD.F or BB:DD.F (domain 0), hex fields in range
// (mmio::parse_pci_address). Throws base::UsageError naming the value and the expected form.
std::optional<mmio::PciAddress> parse_pci_choice(std::string_view text);

// "0000:03:00.0", or "no cl_khr_pci_bus_info" for a device that cannot say.
std::string pci_text(const DeviceInfo& device);

// The index in `seen` (every device of every platform) of the one at `want`. Throws
// base::SetupError (OpenCL could not be set up: exit 3) naming the address and every device seen
// with its address, on one line: the tool that started kernel_runner shows its last line.
std::size_t pick_by_pci(const std::vector<DeviceInfo>& seen, const mmio::PciAddress& want);

}  // namespace oaprof::bench
