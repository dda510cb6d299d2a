// A discrete xe GPU's own energy sensors, through the hwmon device the xe driver registers under
// the GPU's PCI device (<sysfs>/bus/pci/devices/<BDF>/hwmon/hwmonN, `name` "xe"). Facts from
// torvalds/linux drivers/gpu/drm/xe/xe_hwmon.c @ ead971eec0eb:
// - xe registers hwmon only on discrete parts (`if (!IS_DGFX(xe)) return 0;`) and not on SR-IOV
//   virtual functions: an integrated GPU (Lunar Lake, Panther Lake) has none; its power is RAPL's.
// - Channels CHANNEL_CARD and CHANNEL_PKG are energy1_input and energy2_input, labelled "card"
//   (the board: Battlemage's platform energy register) and "pkg" (the GPU package), in µJ
//   (SF_ENERGY), each visible only where the platform has its register.
// - xe accumulates the 32-bit hardware counter into a 63-bit `long` on every read, so the file
//   itself does not wrap in practice (278 years at 1000 W by the driver's own sum); a value that
//   goes down (the driver reloaded) is taken as a reset.
// - The files are mode 0444: every user can read them, root or not.
// Kernels before the channels had labels exposed one energy1_input, the package: an unlabelled
// energy1_input is read as the package.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "power/energy_source.h"
#include "power/sysfs_file.h"

namespace oaprof::power {

// The domain of an xe hwmon energy channel by its label ("card", "pkg"); nullopt for others.
std::optional<Domain> xe_hwmon_label_domain(std::string_view label);

class XeHwmonSource final : public EnergySource {
 public:
  // `device_dir` is the GPU's sysfs directory, <sysfs>/bus/pci/devices/<BDF>. Throws
  // std::runtime_error saying why when it has no xe hwmon with energy (an integrated part, another
  // driver, a kernel without the sensors).
  explicit XeHwmonSource(std::filesystem::path device_dir,
                         std::function<std::uint64_t()> clock_ns = monotonic_ns);

  std::string_view name() const override { return "xe-hwmon"; }
  std::vector<Domain> domains() const override;
  EnergyReading read() override;

 private:
  struct Channel {
    detail::OpenNumberFile energy_file;
    Domain domain;
    std::uint64_t last_raw = 0;
    std::uint64_t total = 0;  // since the first read; a value that went down restarts from it
  };
  std::vector<Channel> channels_;
  std::function<std::uint64_t()> clock_ns_;
};

}  // namespace oaprof::power
