// The GuC and HuC firmware the kernel driver loaded, for the selftest's report, from the driver's
// debugfs (root only): i915's <debugfs>/dri/<minor>/gt0/uc/{guc,huc}_info (gt/uc/ before
// multi-GT kernels), xe's <debugfs>/dri/<minor>/gt0/uc/{guc,huc}_info. The text is the driver's
// dump of its firmware record, whose lines oaprof reads (facts from torvalds/linux):
// - i915: drivers/gpu/drm/i915/gt/uc/intel_uc_fw.c `intel_uc_fw_dump` @ 301efe96f777: "<GuC|HuC>
//   firmware: <path>", "\tstatus: <status>", "\tversion: wanted <maj>.<min>, found <maj>.<min>"
//   (later kernels print three components).
// - xe: drivers/gpu/drm/xe/xe_uc_fw.c `xe_uc_fw_print` @ 04cf420bbc32: "<GuC|HuC> firmware:
//   <path>", "\tstatus: <status>", "\twanted <release|compatibility> version <a.b.c[.d]>", then
//   "\tfound release version <a.b.c[.d]>" and "\tfound compatibility version …" where known.
// The text is treated as hostile: only a bounded prefix is read, a version is digits and dots
// alone, a path and a status printable ASCII of bounded length; anything else is left out.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "oa/platform.h"

namespace oaprof::run::selftest {

// One firmware's record, as far as its text gave it; empty fields were absent or garbled.
struct UcInfo {
  std::string path;     // "i915/tgl_guc_70.bin"
  std::string status;   // "RUNNING", "running", "disabled"
  std::string version;  // the version found (xe: the release version): "70.29.2"
};

// Never throws; fields it cannot read stay empty.
UcInfo parse_uc_info(std::string_view text);

// A firmware in the report: its version, or "unknown" with the reason.
struct FirmwareVersion {
  std::string version = "unknown";
  std::string path;
  std::string status;
  std::string reason;  // why the version is unknown; empty when known
};

// `file` ("guc_info") under `dri_dir` (<debugfs>/dri/<minor>) of a device `driver` drives.
FirmwareVersion read_firmware(const std::filesystem::path& dri_dir, oa::KernelDriver driver,
                              std::string_view file);

// The simulator's fake debugfs: <dir>/dri/0/gt0/uc/{guc,huc}_info in `driver`'s format, with
// versions no real firmware has (0.0.x), removed with the object.
class SimDebugfs {
 public:
  explicit SimDebugfs(oa::KernelDriver driver);
  ~SimDebugfs();
  SimDebugfs(const SimDebugfs&) = delete;
  SimDebugfs& operator=(const SimDebugfs&) = delete;
  std::filesystem::path dri_dir() const { return root_ / "dri" / "0"; }

 private:
  std::filesystem::path root_;
};

}  // namespace oaprof::run::selftest
