#include "mmio/pci_sysfs.h"

#include <fstream>

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

}  // namespace

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
