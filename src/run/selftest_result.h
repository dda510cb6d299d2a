// The last `oaprof selftest` result per device, kept in oaprof's state directory
// (session/state_dir.h) so that profile runs on that device flag the rows a failed check covers
// (`selftest_failed:<check>`, docs/selftest.md). Root writes it there under sudo; the directory's
// whole path is checked closed to others first, and the file is created beside its final name
// without following links, then renamed over it, so a reader never sees half a result.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "oa/platform.h"
#include "report/selftest_flags.h"
#include "run/selftest.h"

namespace oaprof::run::selftest {

// What makes a kept result this device's: a result made by another oaprof, on another device or
// platform, or under another driver or kernel (for an in-tree driver the kernel is its version)
// is stale and ignored.
struct ResultIdentity {
  std::string device;          // the PCI address ("0000:00:02.0"), or sim-<PCI id>-<driver>
  std::string platform;        // "KBL GT2 (Gen9)"
  std::string driver;          // "i915", with its module version where sysfs has one
  std::string kernel;          // uname's release
  std::string oaprof_version;  // "0.9.0"
};

// The platform as reports name it: "KBL GT2 (Gen9)".
std::string platform_label(const oa::Platform& platform);
// sim-<PCI id>-<driver> for the simulator (one result per simulated part), else `pci_address`.
std::string device_key(bool simulated, const oa::Platform& platform,
                       const std::string& pci_address);
// The driver bound to the device with its module version where sysfs has one ("" when none is
// bound); for the simulator the driver it models, "(simulated)".
std::string driver_description(bool simulated, const oa::Platform& platform,
                               const std::filesystem::path& sysfs_root,
                               const std::string& pci_address);
std::string kernel_release();  // "" where uname fails

// Where `device`'s result is kept in `state_dir`: selftest-<device key>.json.
std::filesystem::path result_path(const std::filesystem::path& state_dir, std::string_view device);

// The result file's text: the identity, when it was made, and every check's verdict.
nlohmann::json result_json(const SelftestReport& report, const ResultIdentity& identity,
                           std::int64_t unix_seconds);

// Creates `state_dir` if needed (session::prepare_state_dir: throws std::runtime_error when its
// path is open to others), then writes the result. Throws std::runtime_error saying what failed.
// Returns the file written.
std::filesystem::path keep_result(const std::filesystem::path& state_dir,
                                  const SelftestReport& report, const ResultIdentity& identity);

// Keeps `report` as its device's last result in the state directory (session::state_dir_from:
// $OAPROF_STATE_DIR, which under sudo may only name the default). Returns the line to show: where
// it was kept, or why it was not; a result not kept does not make the selftest fail.
std::string keep_last_result(const SelftestReport& report, std::string_view oaprof_version);

// What a profile run takes from the device's kept result.
struct KeptResult {
  std::vector<report::SelftestFailure> failed;  // each failed check and what of a row it covers
  std::vector<std::string> notes;  // why a result was ignored, what the failures mean for the run
};

// The device's result in `state_dir`, when one is there and is `identity`'s; a stale, unsafe or
// unreadable one is ignored with a note. No result: nothing, no note. Never throws.
KeptResult read_kept_result(const std::filesystem::path& state_dir, const ResultIdentity& identity);

// What of a row check `name`'s failure puts in doubt (docs/selftest.md's table). A check this
// build does not know covers every row.
report::SelftestCovers check_covers(std::string_view name);

}  // namespace oaprof::run::selftest
