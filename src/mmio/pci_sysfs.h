// What sysfs says about a PCI device without mapping anything: its identity, the DRM nodes its
// driver made for it, and whether kernel lockdown forbids mapping its BAR. `oaprof doctor`, the
// device (forcewake's debugfs minor; --access perf, which maps no BAR, and its render node and
// card) and the BAR's error messages read them here, under a sysfs root the caller chooses, so
// tests use fake trees.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "mmio/pci_bar.h"

namespace oaprof::mmio {

// <sysfs_root>/bus/pci/devices/<DDDD:BB:DD.F>
std::filesystem::path pci_device_dir(const std::filesystem::path& sysfs_root,
                                     const PciAddress& addr);

// Vendor, device and class from the device's sysfs files, else from the first bytes of its
// configuration space (readable by anyone). nullopt when neither can be read (no such device).
std::optional<PciIdentity> read_pci_identity(const std::filesystem::path& sysfs_root,
                                             const PciAddress& addr);

// Every device under <sysfs_root>/bus/pci/devices whose name is a PCI address and whose identity
// read_pci_identity can read, in directory order; empty when there is no such directory.
struct PciDevice {
  PciAddress address;
  PciIdentity identity;
};
std::vector<PciDevice> list_pci_devices(const std::filesystem::path& sysfs_root);

// The DRM minors a driver registered for the device: <dir>/drm/cardN (debugfs dri/N, sysfs
// metrics) and <dir>/drm/renderDM (/dev/dri/renderDM). nullopt where there is none (no DRM driver
// bound).
struct DrmNodes {
  std::optional<int> card_minor;
  std::optional<int> render_minor;
};
DrmNodes find_drm_nodes(const std::filesystem::path& sysfs_root, const PciAddress& addr);

// The kernel driver bound to the device: the name its <dir>/driver link points at ("i915", "xe");
// nullopt when none is bound.
std::optional<std::string> bound_driver(const std::filesystem::path& sysfs_root,
                                        const PciAddress& addr);

// The selected mode of <sysfs_root>/kernel/security/lockdown ("none", "integrity",
// "confidentiality"); nullopt when the file is absent (a kernel without lockdown).
std::optional<std::string> kernel_lockdown_mode(const std::filesystem::path& sysfs_root);

// Integrity and confidentiality lockdown both refuse user mappings of PCI BARs.
bool lockdown_forbids_bar(const std::optional<std::string>& mode);

}  // namespace oaprof::mmio
