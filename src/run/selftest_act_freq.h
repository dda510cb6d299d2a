// The GPU's actual frequency as the kernel driver reports it in sysfs, for the gpu-ticks check's
// second reference (the first is the frequency register). File names, checked upstream
// (torvalds/linux):
//   i915 drivers/gpu/drm/i915/gt/intel_gt_sysfs_pm.c (commit fbc9e305bc86): gt/gt<N>/
//     rps_act_freq_mhz under the card, and the legacy gt_act_freq_mhz on the card itself (GT 0);
//   xe drivers/gpu/drm/xe/xe_gt_freq.c (commit a7bee4e7f780): device/tile<N>/gt<N>/freq0/act_freq.
// All in MHz, one decimal integer.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "oa/platform.h"

namespace oaprof::run::selftest {

struct ActFreq {
  std::optional<double> mhz;  // empty: none of the files could be read
  std::string source;         // the file read, or why none could be
};

// GT 0's actual frequency under the DRM card directory `card` (/sys/class/drm/cardN).
ActFreq read_act_freq(const std::filesystem::path& card, oa::KernelDriver driver);

// The simulator's card directory: a fake tree under a private temporary directory holding the
// driver's act_freq file at `mhz`, removed on destruction.
class SimCardTree {
 public:
  SimCardTree(oa::KernelDriver driver, double mhz);
  ~SimCardTree();
  SimCardTree(const SimCardTree&) = delete;
  SimCardTree& operator=(const SimCardTree&) = delete;
  const std::filesystem::path& card() const { return card_; }

 private:
  std::filesystem::path root_;
  std::filesystem::path card_;
};

}  // namespace oaprof::run::selftest
