// The GPU oaprof measures: its register window, the platform it is, and whether it is the
// simulator. `--device auto|sim|BDF` resolves to one of these.
#pragma once

#include <memory>
#include <string>

#include "mmio/mmio.h"
#include "mmio/sim_gpu.h"
#include "oa/platform.h"

namespace oaprof::gpu {

struct Device {
  std::unique_ptr<mmio::Clock> clock;  // the simulator's clock; null for real hardware
  std::unique_ptr<mmio::Mmio> mmio;
  mmio::SimGpu* sim = nullptr;         // set when the device is simulated
  oa::Platform platform;
  std::uint16_t pci_id = 0;

  bool simulated() const { return sim != nullptr; }
  // "simulated" or the PCI address; every output carries it.
  std::string label() const;
};

struct DeviceOptions {
  std::string spec = "auto";         // auto | sim | BDF
  mmio::SimConfig sim;               // used when the device is simulated
};

// Throws std::runtime_error with what to do when the device cannot be opened, or
// std::invalid_argument for a spec that is not auto, sim or a PCI address.
Device open_device(const DeviceOptions& options);

}  // namespace oaprof::gpu
