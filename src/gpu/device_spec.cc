#include "gpu/device_spec.h"

#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace oaprof::gpu {

namespace {

constexpr std::string_view kSimFilePrefix = "sim:";
constexpr const char* kIntegratedGpu = "0000:00:02.0";

}  // namespace

DeviceSpec DeviceSpec::parse(std::string_view text) {
  if (text == "auto") return DeviceSpec();
  if (text == "sim") return sim();
  if (text.starts_with(kSimFilePrefix)) {
    const std::string_view file = text.substr(kSimFilePrefix.size());
    if (file.empty())
      throw std::invalid_argument("--device sim:FILE needs a file name after 'sim:'");
    return sim_file(std::filesystem::path(file));
  }
  try {
    return pci(mmio::parse_pci_address(std::string(text)));
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(fmt::format(
        "--device '{}' is not auto, sim, sim:FILE or a PCI address (such as 0000:00:02.0)", text));
  }
}

DeviceSpec DeviceSpec::sim_file(std::filesystem::path file) {
  DeviceSpec spec(Kind::kSimFile);
  spec.file_ = std::move(file);
  return spec;
}

DeviceSpec DeviceSpec::pci(const mmio::PciAddress& address) {
  DeviceSpec spec(Kind::kPci);
  spec.address_ = address;
  return spec;
}

mmio::PciAddress DeviceSpec::address() const {
  switch (kind_) {
    case Kind::kAuto:
      return mmio::parse_pci_address(kIntegratedGpu);
    case Kind::kPci:
      return address_;
    case Kind::kSim:
    case Kind::kSimFile:
      break;
  }
  throw std::logic_error("the simulated device has no PCI address; this is a bug in oaprof");
}

DeviceSpec DeviceSpec::resolved() const { return is_auto() ? pci(address()) : *this; }

std::string DeviceSpec::str() const {
  switch (kind_) {
    case Kind::kAuto:
      return "auto";
    case Kind::kSim:
      return "sim";
    case Kind::kSimFile:
      return std::string(kSimFilePrefix) + file_.string();
    case Kind::kPci:
      return address_.str();
  }
  return "auto";
}

DeviceSpec device_spec_with_pci(const DeviceSpec& device, const std::string& pci) {
  if (pci.empty()) return device;
  DeviceSpec address;
  try {
    address = DeviceSpec::pci(mmio::parse_pci_address(pci));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--pci: ") + e.what());
  }
  if (device.is_auto() || device == address) return address;
  throw std::invalid_argument(fmt::format(
      "--pci {} and --device {} name different devices; give one of them: --pci BDF for an "
      "Intel GPU, --device sim for the simulator",
      pci, device.str()));
}

}  // namespace oaprof::gpu
