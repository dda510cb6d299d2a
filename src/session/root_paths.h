// Options that point the privileged side at files (a sysfs or debugfs root, a render node, the
// simulator's register file, an OpenCL loader) exist for tests and unusual installs. Under sudo
// they are the invoking user's to choose, and root would open, map, write or load what they
// name: so under sudo each must keep its default (or name what only the system provides, such as
// /dev/dri/renderD128), and anything else is refused before any file is touched.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "gpu/device_spec.h"
#include "session/privilege_drop.h"

namespace oaprof::session {

struct RootPathOption {
  std::string_view option;  // "--sysfs-root"
  std::string_view value;   // what was given
  std::string_view fixed;   // the default, the only value allowed under sudo
  // Also allowed under sudo: a value starting with this (no "..", no "//"), e.g. "/dev/dri/renderD"
  // for /dev/dri/renderDN.
  std::string_view system_prefix = {};
};

// Throws std::invalid_argument naming the first option that strays from its default under sudo
// (`sudo_user` set); does nothing otherwise.
void require_root_paths_under_sudo(std::span<const RootPathOption> options,
                                   const std::optional<Credentials>& sudo_user);

// `--device sim:FILE` has root create and write FILE (the simulator's register file, for tests):
// refused under sudo as the options above are; plain `sim` and real devices pass.
void require_no_register_file_under_sudo(const gpu::DeviceSpec& device,
                                         const std::optional<Credentials>& sudo_user);

}  // namespace oaprof::session
