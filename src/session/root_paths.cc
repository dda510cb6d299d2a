#include "session/root_paths.h"

#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::session {

void require_root_paths_under_sudo(std::span<const RootPathOption> options,
                                   const std::optional<Credentials>& sudo_user) {
  if (!sudo_user) return;
  for (const RootPathOption& o : options) {
    if (o.value == o.fixed) continue;
    const bool system_path = !o.system_prefix.empty() && o.value.starts_with(o.system_prefix) &&
                             o.value.size() > o.system_prefix.size() &&
                             o.value.find("..") == std::string_view::npos &&
                             o.value.find("//") == std::string_view::npos;
    if (system_path) continue;
    throw std::invalid_argument(fmt::format(
        "{} {}: under sudo this option keeps its default ({}{}), because root would open what it "
        "names on behalf of uid {}; run without sudo (through oaprofd) to point it elsewhere",
        o.option, o.value, o.fixed,
        o.system_prefix.empty() ? "" : fmt::format(", or {}N", o.system_prefix), sudo_user->uid));
  }
}

void require_no_register_file_under_sudo(const gpu::DeviceSpec& device,
                                         const std::optional<Credentials>& sudo_user) {
  if (!sudo_user || device.kind() != gpu::DeviceSpec::Kind::kSimFile) return;
  throw std::invalid_argument(fmt::format(
      "--device {}: under sudo the simulator keeps its registers in memory (--device sim), "
      "because root would create and write the file it names on behalf of uid {}",
      device.str(), sudo_user->uid));
}

}  // namespace oaprof::session
