// Where counter snapshots come from. One interface, several read-outs (mmio today; rpc and perf
// join it), chosen by name from one table, as Perfetto chooses its data sources.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>

#include "gpu/device.h"
#include "oa/report.h"
#include "oa/report_format.h"

namespace oaprof::gpu {

class CounterSource {
 public:
  virtual ~CounterSource() = default;
  virtual std::string_view name() const = 0;
  // Programs the OA unit for `format` and starts counting. Everything touched is saved.
  virtual void start(oa::ReportFormat format) = 0;
  // One report in the started format, tagged with `report_id` in RPT_ID.
  virtual oa::RawReport snapshot(std::uint32_t report_id) = 0;
  // Restores every register start() touched, bit-identical. Safe to call twice.
  virtual void stop() = 0;
  // Workload signal: a kernel starts or ends. Only the simulator's model uses it.
  virtual void kernel_running(bool running) = 0;
};

struct CounterSourceEntry {
  std::string_view name;
  std::string_view description;
  std::unique_ptr<CounterSource> (*make)(Device& device);
};

// Every read-out this build has, in the order `--help` lists them.
std::span<const CounterSourceEntry> counter_sources();

// Throws std::invalid_argument listing the valid names when `name` is unknown.
std::unique_ptr<CounterSource> make_counter_source(std::string_view name, Device& device);

std::unique_ptr<CounterSource> make_mmio_source(Device& device);

}  // namespace oaprof::gpu
