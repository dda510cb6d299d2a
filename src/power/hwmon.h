// A discrete Intel GPU's own energy counter, through the hwmon device its kernel driver registers
// under the card's PCI device (<sysfs>/bus/pci/devices/<BDF>/hwmon/hwmonN). Both drivers register
// it only for discrete cards (IS_DGFX), never for an integrated GPU or an SR-IOV virtual function,
// and make energy*_input readable by every user (0444), in µJ. Facts:
// - i915: drivers/gpu/drm/i915/i915_hwmon.c @ torvalds/linux 0791faebfe75. `name` "i915";
//   energy1_input, unlabelled, on DG1 and DG2 from PCU_PACKAGE_ENERGY_STATUS (the GPU package;
//   energy_status_tile is invalid there, so no per-GT "i915_gtN" directories exist on them:
//   those, XeHP SDV's, are skipped). Also in0_input, power1_max, power1_rated_max,
//   power1_max_interval, which oaprof does not read; power1_crit and curr1_crit are not on DG1/DG2.
// - xe: drivers/gpu/drm/xe/xe_hwmon.c @ ead971eec0eb. `name` "xe"; energy1_input labelled "card"
//   (the board: Battlemage's platform energy) and energy2_input labelled "pkg" (the GPU package),
//   each where the platform has the register; kernels before the labels had one unlabelled
//   energy1_input, the package.
// - Wraps: both drivers (hwm_energy, xe_hwmon_energy_get) extend the 32-bit hardware counter into
//   a 63-bit `long` on every read and scale it to µJ, 278 years at 1000 W before the `long`
//   overflows; the hwmon core prints that `long` signed. oaprof reads the file as a 64-bit
//   pattern and counts forward modulo 2^64 (hwmon_energy_delta), so even that overflow is
//   counted. A step back is the driver reloaded: its sum restarts from the hardware counter's
//   value at load (the first read adds the whole register to a zeroed sum), an amount that says
//   nothing of the time since, so the read that sees it counts nothing and the next go on.
// - Nothing under the device directory is a symbolic link in sysfs: `hwmon`, `hwmonN` and the
//   files are opened beneath it with O_NOFOLLOW, so a link planted in a tree handed to the
//   privileged side is refused rather than followed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "power/energy_source.h"
#include "power/sysfs_file.h"

namespace oaprof::power {

// The domain of energy<channel>_input: by its label where it has one ("card", "pkg"; nullopt for
// labels oaprof does not know), else the package for channel 1 (i915's only channel, xe's before
// the labels) and nullopt for the others.
std::optional<Domain> hwmon_channel_domain(int channel, const std::optional<std::string>& label);

// The energy between two reads of an energy*_input, each the 64-bit pattern of the signed value
// the driver printed: the distance forward modulo 2^64; a step back (a forward distance of 2^63
// or more: 292 years at 1000 W) is a reset and counts 0.
constexpr std::uint64_t hwmon_energy_delta(std::uint64_t prev, std::uint64_t now) {
  constexpr std::uint64_t kHalf = std::uint64_t{1} << 63;
  const std::uint64_t forward = now - prev;  // modulo 2^64
  return forward < kHalf ? forward : 0;
}

class HwmonSource final : public EnergySource {
 public:
  // `device_dir` is the GPU's sysfs directory, <sysfs>/bus/pci/devices/<BDF>. Throws
  // std::runtime_error saying why when it has no i915 or xe hwmon with energy (an integrated GPU,
  // another driver, a kernel without the sensors, a link where sysfs has a directory or file).
  explicit HwmonSource(std::filesystem::path device_dir,
                       std::function<std::uint64_t()> clock_ns = monotonic_ns);

  std::string_view name() const override { return "hwmon"; }
  std::vector<Domain> domains() const override;
  EnergyReading read() override;

  // The driver whose hwmon this reads: "i915" or "xe".
  const std::string& driver() const { return driver_; }
  // What it measures: "i915 hwmon3 energy1_input (the card's GPU package)".
  std::string describe() const;

 private:
  struct Channel {
    detail::OpenNumberFile energy_file;
    Domain domain;
    std::uint64_t last_raw = 0;
    std::uint64_t total = 0;  // since the first read
  };
  // The energy channels beneath the hwmon directory `dir_fd` (`dir` names it in messages).
  void open_channels(int dir_fd, const std::filesystem::path& dir);

  std::vector<Channel> channels_;
  std::string driver_;
  std::string dir_name_;  // "hwmon3"
  std::function<std::uint64_t()> clock_ns_;
};

}  // namespace oaprof::power
