// What oaprof knows about each Intel integrated GPU: PCI id → generation, GT, topology and clocks.
// Pure data and look-ups; the device layers (mmio, gpu) decide which platform they are talking to.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace oaprof::oa {

// Gen12 is Xe-LP (graphics IP 12.0: TGL, RKL, ADL, RPL, DG1); Xe-LPG (IP 12.70-12.74: MTL, ARL)
// keeps graphics version 12 in i915 but differs where oaprof cares: its OA unit streams other
// formats (A24u40_A14u32_B8_C8, OAR, OAM), shifts the report timestamp, has 8 threads per EU
// and FP64 (src/oa/platform.cc and report_format.cc cite the sources). Xe2 is graphics IP 20 and
// 30 (LNL, BMG; PTL is Xe3): only the xe driver runs it, and its OA unit writes PEC reports (64
// 64-bit counters behind a 64-bit header) instead of A/B/C; xe programs Xe3 the same way
// (xe_oa.c: GRAPHICS_VER >= 20). Xe-HPG is graphics IP 12.55 (DG2, sold as Arc A-series, and
// the ATS-M data-centre cards): discrete, i915's GRAPHICS_VER 12 like Xe-LPG, whose OAG format
// (A24u40_A14u32_B8_C8) and timestamp handling it shares, but without FP64 and without the
// media OA unit (src/oa/platform.cc and report_format.cc cite the sources).
enum class Generation { kGen7_5, kGen8, kGen9, kGen11, kGen12, kXeHpg, kXeLpg, kXe2 };

std::string_view generation_name(Generation gen);

// Gen12, Xe-HPG and Xe-LPG count dual subslices (Xe-cores on Xe-HPG and Xe-LPG), as i915's
// topology query and Mesa do; i915 runs all three with GRAPHICS_VER 12 (7-bit report reasons,
// context-valid bit 16).
bool is_gen12_family(Generation gen);

// Graphics IP 12.55 and later under i915 (Xe-HPG, Xe-LPG): Mesa's verx10 125. Their OAG unit
// streams A24u40_A14u32_B8_C8 with a shifted report timestamp that counts at the OA timestamp
// frequency (i915_perf_oa_timestamp_frequency), takes the render engine's class and instance
// when a stream opens, and checks B counters with xehp_is_valid_b_counter_addr.
bool is_xehp_oa(Generation gen);

// Whether the topology's subslices are Xe-cores (dual subslices): Gen12, Xe-LPG and Xe2.
bool counts_xe_cores(Generation gen);

// How the command-streamer timestamp frequency is found (reference/hardware.md §5): a fixed rate
// on Gen7.5–Gen9, or derived from the crystal and the CTC shift (RPM_CONFIG0, CTC_MODE) on Gen11+,
// where `timestamp_hz` is only the usual default until read from the device or i915.
enum class TimestampRule { kFixed, kCrystalCtc };

std::string_view timestamp_rule_name(TimestampRule rule);

// The kernel driver that binds to a PCI id by default (i915_pci.c / xe_pci.c: xe lists the
// Gen12 parts too, but only behind its force_probe parameter).
enum class KernelDriver { kI915, kXe };

std::string_view kernel_driver_name(KernelDriver driver);

struct Platform {
  std::string_view codename;      // "KBL"
  std::string_view metrics_file;  // IGT oa-<name>.xml that describes it, e.g. "kblgt2"
  Generation gen;
  int gt;
  int slices;
  int subslices;  // total; dual subslices on Gen12, as Mesa and i915's topology query count them
  int eus;        // total, as shipped (fused-off EUs not counted)
  double timestamp_hz;  // command-streamer timestamp frequency
  double max_freq_mhz;  // nominal maximum GPU frequency, for models and peaks
  TimestampRule timestamp_rule = TimestampRule::kFixed;
  double min_freq_mhz = 300;  // nominal minimum GPU frequency ($GpuMinFrequency)
  // Where it differs from "GT<gt>": "GT1.5", "GT0.5" (`gt` is then the kernel's whole number).
  std::string_view gt_name = {};
  int threads_per_eu = 7;                     // hardware threads per EU (Mesa num_thread_per_eu)
  bool has_fp64 = true;                       // double-precision hardware (Mesa has_64bit_float)
  KernelDriver driver = KernelDriver::kI915;  // the driver that binds to it by default
  bool force_probe = false;  // that driver binds only when its force_probe parameter names the id
  // A card of its own rather than part of the CPU's package: the kernel's IS_DGFX (i915_pci.c and
  // xe_pci.c DGFX_FEATURES, `.is_dgfx = 1`). Its power is not in the CPU's RAPL planes; its
  // driver registers a hwmon device with its own energy counter instead (power/hwmon.h).
  bool discrete = false;
};

// "GT2", or the row's gt_name ("GT1.5").
std::string gt_label(const Platform& platform);

// Why a platform without an IGT metrics file has no IGT metric set ("IGT describes no metric set
// for SKL GT1.5 ..."), for the messages that refuse one; empty when it has a file.
std::string no_igt_metrics_reason(const Platform& platform);

struct PciId {
  std::uint16_t device;
  const Platform* platform;
  // False where Mesa lists no such id: the row's EU and subslice counts are then an assumption
  // (documented at the row), and only the device's topology query gives the truth.
  bool counts_from_mesa = true;
  // Non-empty where upstream IGT maps the id to no metric file and the row's file is oaprof's
  // inference: the evidence, shown by `oaprof platforms` so no one takes it for IGT's choice.
  std::string_view metric_file_inferred = {};
  // The marketing name upstream gives the id ("Intel(R) Arc(tm) A770 Graphics" in Mesa's
  // iris_pci_ids.h); empty where the table does not carry one.
  std::string_view product = {};
};

// A platform the kernel's id lists name that oaprof knows of but does not profile, and why
// (src/oa/platform.cc names the sources). Listed so that such a device is reported as known and
// unsupported, with the reason, rather than as an unknown device.
struct UnsupportedPlatform {
  std::string_view codename;      // "WCL"
  std::string_view name;          // "Wildcat Lake"
  std::string_view kernel_macro;  // the pciids.h list: "INTEL_WCL_IDS"
  std::string_view driver;        // which kernel driver binds it, and how
  std::string_view oa;            // what the driver offers for OA on it
  std::string_view reason;        // why oaprof does not profile it
};

struct UnsupportedPciId {
  std::uint16_t device;
  const UnsupportedPlatform* platform;
};

// Every PCI device id (vendor 0x8086) oaprof knows of but does not support.
std::span<const UnsupportedPciId> known_unsupported_pci_ids();

// The entry for a device id oaprof knows it does not support; null otherwise (supported or
// unknown).
const UnsupportedPciId* find_unsupported_pci_id(std::uint16_t device_id);

// "PCI device 8086:fd80 is a Wildcat Lake (WCL), which oaprof does not support: <reason>", or
// empty when the id is not a known unsupported one; for the messages that refuse a device.
std::string unsupported_pci_id_message(std::uint16_t device_id);

// Every PCI device id in the table (vendor 0x8086).
std::span<const PciId> known_pci_ids();

// The table's entry for a device id; null when oaprof does not know it.
const PciId* find_pci_id(std::uint16_t device_id);

// nullopt when the id is not an Intel iGPU oaprof knows.
std::optional<Platform> platform_for_pci_id(std::uint16_t device_id);

// Reads a PCI device id as users write it: "0x3E92", "3e92" or "8086:3e92" (hexadecimal, one to
// four digits; the vendor, when given, must be 8086). nullopt for anything else.
std::optional<std::uint16_t> parse_pci_device_id(std::string_view text);

// platform_for_pci_id, or std::invalid_argument naming the id and what to do.
Platform require_platform_for_pci_id(std::uint16_t device_id);

// Look-up by the IGT metrics-file name ("kblgt2"); nullopt when unknown.
std::optional<Platform> platform_by_name(std::string_view metrics_file);

// platform_by_name, or std::invalid_argument listing the valid names.
Platform require_platform_by_name(std::string_view metrics_file);

// The IGT metrics-file names of every platform that has one, each once, in table order.
std::span<const std::string_view> platform_names();

// The platform the simulator presents: a Kaby Lake GT2 (PCI 0x5916, 24 EUs, 12 MHz timestamp).
const Platform& simulated_platform();
inline constexpr std::uint16_t kSimulatedPciId = 0x5916;

}  // namespace oaprof::oa
