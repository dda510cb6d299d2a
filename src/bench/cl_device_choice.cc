#include "bench/cl_device_choice.h"

#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/errors.h"

namespace oaprof::bench {

std::optional<mmio::PciAddress> parse_pci_choice(std::string_view text) {
  if (!text.starts_with(kPciChoicePrefix)) return std::nullopt;
  const std::string address(text.substr(kPciChoicePrefix.size()));
  try {
    return mmio::parse_pci_address(address);
  } catch (const std::invalid_argument&) {
    throw base::UsageError(fmt::format(
        "--cl-device '{}' names no PCI address: after pci: give DDDD:BB:DD.F or BB:DD.F in hex "
        "(domain up to ffff, bus up to ff, device up to 1f, function 0-7), e.g. pci:0000:03:00.0 "
        "(`kernel_runner --devices` lists each device's address)",
        text));
  }
}

std::string pci_text(const DeviceInfo& device) {
  return device.pci_address ? device.pci_address->str() : "no cl_khr_pci_bus_info";
}

std::size_t pick_by_pci(const std::vector<DeviceInfo>& seen, const mmio::PciAddress& want) {
  std::vector<std::string> listed;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    const DeviceInfo& d = seen[i];
    if (d.pci_address == want) return i;
    listed.push_back(fmt::format("platform {} device {} ({}): {}", d.platform_index, d.device_index,
                                 d.device_name, pci_text(d)));
  }
  throw base::SetupError(fmt::format(
      "no OpenCL device is at PCI address {}; seen: {}; install that GPU's OpenCL runtime "
      "(intel-opencl-icd for Intel GPUs), which reports its address (cl_khr_pci_bus_info)",
      want.str(),
      listed.empty() ? std::string("none") : fmt::format("{}", fmt::join(listed, "; "))));
}

}  // namespace oaprof::bench
