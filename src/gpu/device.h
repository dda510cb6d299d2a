// The GPU oaprof measures: its register window, the platform it is, and whether it is the
// simulator. `--device auto|sim|BDF` (or `--pci BDF`) resolves to one of these.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "gpu/device_spec.h"
#include "gpu/sim/sim_xe_observation.h"
#include "mmio/forcewake.h"
#include "mmio/mmio.h"
#include "mmio/sim_gpu.h"
#include "oa/device_facts.h"
#include "oa/platform.h"

namespace oaprof::gpu {

struct Device {
  Device() = default;
  Device(Device&&) = default;
  // Releases forcewake and the register window before taking `other`'s: a forcewake held
  // through the registers needs them to let go.
  Device& operator=(Device&& other) noexcept;
  ~Device() = default;

  std::unique_ptr<mmio::Clock> clock;  // the simulator's clock; null for real hardware
  std::unique_ptr<mmio::Mmio> mmio;
  mmio::SimGpu* sim = nullptr;  // set when the device is simulated
  // A simulated part xe drives (--sim-platform lnl, tglgt2-xe, mtlgt2-xe): its OA unit answers
  // through xe's observation uapi. On Xe2 `sim` only keeps the clock and a register window
  // nobody programs; on Gen12 and Xe-LPG xe's simulated kernel side programs `sim`'s OA unit.
  // Declared after mmio: destroyed first, while the registers it programmed are still there.
  std::unique_ptr<SimXeDevice> sim_xe;
  // The PCI id's platform with the device's own topology and timestamp frequency in it.
  oa::Platform platform;
  // That topology and timestamp frequency, and where each came from: i915 (the topology query,
  // GETPARAM), the clock registers, or the platform table (the rows then say
  // topology_from_table). Read once at open, on every access path.
  oa::DeviceFacts facts;
  std::uint16_t pci_id = 0;
  // Held for the device's lifetime; declared after mmio so that it is released first.
  std::unique_ptr<mmio::Forcewake> forcewake;
  // For --access rpc and perf on real hardware: a path, or "auto" for the device's own (see
  // resolve_render_node and resolve_card_sysfs below).
  std::string render_node = "auto";
  std::string drm_card_sysfs = "auto";          // where i915 lists loaded metric sets
  int perf_period_exponent = 16;                // --access perf: OA period = (2 << exponent) ticks
  std::size_t sim_oa_buffer_bytes = 16u << 20;  // the simulated i915's OA buffer
  std::string pci_address;                      // "0000:00:02.0"; empty for the simulator
  std::filesystem::path sysfs_root = "/sys";

  bool simulated() const { return sim != nullptr; }
  // "simulated" or the PCI address; every output carries it.
  std::string label() const;
};

struct DeviceOptions {
  // auto | sim | sim:FILE | BDF. sim:FILE runs the simulator with its register file mirrored
  // into FILE (created when missing, adopted when present), so that another process can see what
  // was programmed and a restarted oaprofd finds the registers a crashed one left.
  DeviceSpec spec;
  mmio::SimConfig sim;  // used when the device is simulated
  // --forcewake auto|debugfs|registers|none, --debugfs-root. On a simulated device only the
  // register path (or none) is used, so a real GPU beside it is never woken. On real hardware
  // its dri_minor is the device's own DRM card minor, found under sysfs_root.
  mmio::ForcewakeOptions forcewake;
  // Where sysfs is: the device's identity, DRM nodes and the kernel's lockdown mode are read
  // under it.
  std::filesystem::path sysfs_root = "/sys";
  // False for a read-out that talks only to i915 (--access perf, gpu::access_maps_registers):
  // a real device is then identified from sysfs and neither its BAR mapped (kernel lockdown
  // forbids that) nor forcewake taken (i915 holds it for its stream); the register window left
  // in Device::mmio refuses every access.
  bool map_registers = true;
  std::string render_node = "auto";     // --render-node PATH|auto, for --access rpc and perf
  std::string drm_card_sysfs = "auto";  // --drm-card DIR|auto, for --access perf
  // --oa-exponent N, for --access perf (0–31); -1: 16 on i915, 10 on xe (open_device).
  int perf_period_exponent = -1;
  // The simulated i915's OA buffer (16 MiB as i915's); tests make it small to overflow it soon.
  std::size_t sim_oa_buffer_bytes = 16u << 20;
  // Wraps the register window before anything writes through it (forcewake included); oaprofd
  // journals every first write this way. Null: the window as opened.
  std::function<std::unique_ptr<mmio::Mmio>(std::unique_ptr<mmio::Mmio>)> wrap_mmio;
};

// The GPU's clock right now from RPSTAT (Gen9 and Gen11; reference/hardware.md §2), or nullopt
// where it cannot be read: another generation, no register window, a reading of 0.
std::optional<double> read_gpu_freq_mhz(Device& device);

// A simulated device counting on `clock` (a ManualClock for deterministic tests), without
// forcewake; its facts come from its simulated i915 (or, with config.i915 false, from the table
// and its clock registers).
Device make_sim_device(std::unique_ptr<mmio::Clock> clock, const mmio::SimConfig& config = {});

// The platform open_device(options) would find, known without opening it: the simulator's, or
// that of the PCI id in sysfs (world-readable); nullopt where sysfs names no GPU oaprof knows.
std::optional<oa::Platform> platform_of_spec(const DeviceOptions& options);

// Throws std::runtime_error with what to do when the device cannot be opened, or
// std::invalid_argument for a spec that is not auto, sim or a PCI address.
Device open_device(const DeviceOptions& options);

// The render node of a real device: its render_node, or for "auto" /dev/dri/renderD<M> of
// <sysfs>/bus/pci/devices/<BDF>/drm/renderD<M>, so that a second GPU's node is never taken.
// Throws std::runtime_error naming the device when it has none (no i915 bound to it). A Device
// without a PCI address (made by hand) keeps what it was given.
std::string resolve_render_node(const Device& device);
// The same for the sysfs card directory where i915 lists the metric sets it holds:
// <sysfs>/bus/pci/devices/<BDF>/drm/card<N> for "auto".
std::string resolve_card_sysfs(const Device& device);

}  // namespace oaprof::gpu
