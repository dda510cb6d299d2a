// What sysfs says about a PCI device without mapping anything: whether kernel lockdown forbids
// mapping its BAR. `oaprof doctor` and the BAR's error messages read it here, under a sysfs root
// the caller chooses, so tests use fake trees.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace oaprof::mmio {

// The selected mode of <sysfs_root>/kernel/security/lockdown ("none", "integrity",
// "confidentiality"); nullopt when the file is absent (a kernel without lockdown).
std::optional<std::string> kernel_lockdown_mode(const std::filesystem::path& sysfs_root);

// Integrity and confidentiality lockdown both refuse user mappings of PCI BARs.
bool lockdown_forbids_bar(const std::optional<std::string>& mode);

}  // namespace oaprof::mmio
