// A simulated device on a virtual clock, for deterministic daemon tests.
#pragma once

#include <memory>

#include "gpu/counter_source.h"
#include "gpu/device.h"

namespace oaprof::test_support {

struct SimFixture {
  explicit SimFixture(const mmio::SimConfig& config = {}) {
    auto c = std::make_unique<mmio::ManualClock>();
    clock = c.get();
    auto sim = std::make_unique<mmio::SimGpu>(config, *c);
    device.sim = sim.get();
    device.platform = oa::simulated_platform();
    device.clock = std::move(c);
    device.mmio = std::move(sim);
    source = gpu::make_counter_source("mmio", device);
  }
  mmio::ManualClock* clock = nullptr;
  gpu::Device device;
  std::unique_ptr<gpu::CounterSource> source;
};

}  // namespace oaprof::test_support
