#include "mmio/pci_sysfs.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string_view>

namespace oaprof::mmio {
namespace fs = std::filesystem;

namespace {

std::optional<std::string> first_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

std::optional<std::uint32_t> read_hex(const fs::path& path) {
  const auto line = first_line(path);
  if (!line) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long value = std::strtoul(line->c_str(), &end, 16);
  if (errno != 0 || end == line->c_str()) return std::nullopt;
  return static_cast<std::uint32_t>(value);
}

// N of "<prefix>N", or nullopt when `leaf` is not that (card1-eDP-1 is a connector, not a card).
std::optional<int> minor_of(const std::string& leaf, std::string_view prefix) {
  const std::string_view digits =
      std::string_view(leaf).substr(std::min(leaf.size(), prefix.size()));
  if (!leaf.starts_with(prefix) || digits.empty() || digits.size() > 6 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return std::stoi(std::string(digits));
}

}  // namespace

fs::path pci_device_dir(const fs::path& sysfs_root, const PciAddress& addr) {
  return sysfs_root / "bus" / "pci" / "devices" / addr.str();
}

std::optional<PciIdentity> read_pci_identity(const fs::path& sysfs_root, const PciAddress& addr) {
  const fs::path dir = pci_device_dir(sysfs_root, addr);
  const auto vendor = read_hex(dir / "vendor");
  const auto device = read_hex(dir / "device");
  const auto device_class = read_hex(dir / "class");
  if (vendor && device && device_class) {
    return PciIdentity{static_cast<std::uint16_t>(*vendor), static_cast<std::uint16_t>(*device),
                       *device_class};
  }
  std::ifstream in(dir / "config", std::ios::binary);
  const std::string config{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (config.size() < 12) return std::nullopt;
  // Ids at bytes 0 and 2; the class code (programming interface, subclass, class) at 9–11.
  const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(config[i]); };
  return PciIdentity{static_cast<std::uint16_t>(byte(0) | byte(1) << 8),
                     static_cast<std::uint16_t>(byte(2) | byte(3) << 8),
                     static_cast<std::uint32_t>(byte(9) | byte(10) << 8 | byte(11) << 16)};
}

std::vector<PciDevice> list_pci_devices(const fs::path& sysfs_root) {
  std::vector<PciDevice> devices;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(sysfs_root / "bus" / "pci" / "devices", ec)) {
    PciAddress address;
    try {
      address = parse_pci_address(entry.path().filename().string());
    } catch (const std::invalid_argument&) {
      continue;  // not a device's directory
    }
    if (const auto id = read_pci_identity(sysfs_root, address)) devices.push_back({address, *id});
  }
  return devices;
}

DrmNodes find_drm_nodes(const fs::path& sysfs_root, const PciAddress& addr) {
  DrmNodes nodes;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(pci_device_dir(sysfs_root, addr) / "drm", ec)) {
    const std::string leaf = entry.path().filename().string();
    if (const auto card = minor_of(leaf, "card")) nodes.card_minor = *card;
    if (const auto render = minor_of(leaf, "renderD")) nodes.render_minor = *render;
  }
  return nodes;
}

std::optional<std::string> bound_driver(const std::filesystem::path& sysfs_root,
                                        const PciAddress& addr) {
  std::error_code ec;
  const auto link = std::filesystem::read_symlink(pci_device_dir(sysfs_root, addr) / "driver", ec);
  if (ec || link.filename().empty()) return std::nullopt;
  return link.filename().string();
}

std::optional<std::string> kernel_lockdown_mode(const fs::path& sysfs_root) {
  const auto line = first_line(sysfs_root / "kernel" / "security" / "lockdown");
  if (!line) return std::nullopt;
  // "none [integrity] confidentiality": the selected mode is the bracketed one.
  const auto open = line->find('[');
  const auto close = line->find(']', open);
  if (open == std::string::npos || close == std::string::npos) return *line;
  return line->substr(open + 1, close - open - 1);
}

bool lockdown_forbids_bar(const std::optional<std::string>& mode) {
  return mode == "integrity" || mode == "confidentiality";
}

}  // namespace oaprof::mmio
