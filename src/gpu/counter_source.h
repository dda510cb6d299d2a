// Where counter snapshots come from. One interface, several read-outs (mmio, rpc, sim; perf
// joins them), chosen by name from one table, as Perfetto chooses its data sources.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "gpu/device.h"
#include "mmio/oa_programmer.h"
#include "oa/kernel_work.h"
#include "oa/report.h"
#include "oa/report_format.h"

namespace oaprof::gpu {

// What a perf stream delivered: periodic samples and the OA_REPORT_LOST / OA_BUFFER_LOST
// records that say reports went missing.
struct PerfStreamCounts {
  int samples = 0;
  int reports_lost = 0;
  int buffer_lost = 0;
  // xe: snapshots placed by waiting out xe's buffer poll, because the engine's timestamp could
  // not place them (docs/xe.md); 0 elsewhere.
  int snapshots_waited = 0;
  // xe on Xe-LPG: the OA unit's clock is not the engine's, so every snapshot waits by design.
  bool placement_unavailable = false;
};

// The warning for the end of a run whose stream lost reports or its OA buffer, with what the
// row flags mean and what to do; empty when nothing was lost.
std::string perf_stream_loss_warning(const PerfStreamCounts& counts);

// The warning for the end of an xe run some of whose snapshots were placed by waiting rather
// than by timestamp, with what it means for the rows; empty when none were.
std::string snapshot_placement_warning(const PerfStreamCounts& counts);

// How tightly a register-by-register read-out (mmio, and the simulator's) paired its counters
// with its timestamp over a run: every snapshot not flagged readout_interrupted had all its
// registers read within `widest_kept_ns` of its RING_TIMESTAMP, so a row's counts per time may be
// off by that much of its window (its two snapshots' skews differ by at most the wider one).
struct ReadoutSkew {
  std::uint64_t snapshots = 0;
  std::uint64_t read_again = 0;   // taken more than once, for an interrupted attempt
  std::uint64_t interrupted = 0;  // every attempt interrupted: flagged readout_interrupted
  double fastest_ns = 0;          // the shortest read-out seen: the tolerance is twice it
  double widest_kept_ns = 0;      // the longest read-out kept unflagged
};

// The end-of-run line that says so; empty before the first snapshot.
std::string readout_skew_note(const ReadoutSkew& skew);

class CounterSource {
 public:
  virtual ~CounterSource() = default;
  virtual std::string_view name() const = 0;
  // Programs the OA unit for `format` and starts counting. Everything touched is saved.
  virtual void start(oa::ReportFormat format) = 0;
  // The same with a metric set's registers (mux, boolean, flex), each checked against the
  // whitelist first. The default refuses a non-empty configuration, for read-outs that cannot
  // program one.
  virtual void start(oa::ReportFormat format, const mmio::OaConfig& config);
  // One report in the started format, tagged with `report_id` in RPT_ID.
  virtual oa::RawReport snapshot(std::uint32_t report_id) = 0;
  // Restores every register start() touched, bit-identical. Safe to call twice.
  virtual void stop() = 0;
  // Kernel replay across sets: counts `config` (the set `symbol`) from now on, in the started
  // format. The default stops and starts again; a read-out whose unit another process programs
  // (oaprofd's) asks it for the set by name.
  virtual void switch_set(oa::ReportFormat format, const mmio::OaConfig& config,
                          std::string_view symbol) {
    (void)symbol;
    stop();
    start(format, config);
  }
  // Workload signal: a kernel starts or ends, with its known work when the caller knows it (a
  // catalogue kernel: the simulator then counts that work instead of its workload fractions).
  // Only the simulator's model uses it; `work` is read during the call only.
  void kernel_running(bool running, const oa::KernelWork* work = nullptr) {
    signal_kernel(running, work);
  }
  // True when the last snapshot found the context-saved registers (OACTXCONTROL,
  // EU_PERF_CNTL0–6 on Gen8–11) no longer holding the programmed values: a context switch
  // reloaded them, so flex-dependent counters since the previous snapshot are wrong. The read-out
  // writes them again before taking that snapshot. Query after the 'after' snapshot of a kernel
  // and flag the row `config_lost`; `--access perf` keeps these metrics right.
  virtual bool config_lost() const { return false; }
  // True when the last snapshot was read register by register (mmio) and every attempt at it
  // was interrupted for longer than the read-out's tolerance: its counters were read at
  // instants that far from its timestamp, so the launch's figures per time (clock rates, EU
  // shares per ns) may be off by that much. Query beside config_lost() and flag the row
  // `readout_interrupted`. Reports the hardware writes at once (rpc, perf) never are.
  virtual bool readout_interrupted() const { return false; }
  // The run's read-out skew so far; nullopt for read-outs whose reports the hardware writes at
  // once (rpc, perf) and through oaprofd.
  virtual std::optional<ReadoutSkew> readout_skew() const { return std::nullopt; }
  // --access perf: the stream's records since start(); zero for read-outs without a stream.
  virtual PerfStreamCounts perf_stream_counts() const { return {}; }
  // --access perf under i915: the newest report the OA unit wrote on its own (periodic) that the
  // last snapshot's drain read, beside the snapshot's own report (MI_REPORT_PERF_COUNT, or the
  // registers on Gen12+), so the two paths can be compared; nullopt before the first or for
  // read-outs without a stream.
  virtual std::optional<oa::RawReport> last_periodic_report() const { return std::nullopt; }
  // The GPU's current frequency (RPSTAT, read_gpu_freq_mhz), which the session reads beside every
  // snapshot of a launch so that the row can say the clock changed (freq_changed); nullopt where
  // this read-out cannot tell (Gen12, no register access, through oaprofd).
  virtual std::optional<double> gpu_freq_mhz() { return std::nullopt; }

 protected:
  // kernel_running's work, per read-out (its callers keep the one-argument form).
  virtual void signal_kernel(bool running, const oa::KernelWork* work) = 0;
};

struct CounterSourceEntry {
  std::string_view name;
  std::string_view description;
  std::unique_ptr<CounterSource> (*make)(Device& device);
  // Whether it reads or programs registers through the BAR (and so needs it mapped, and
  // forcewake held). perf talks only to i915, which also works under kernel lockdown.
  bool maps_registers = true;
};

// Every read-out this build has, in the order `--help` lists them.
std::span<const CounterSourceEntry> counter_sources();

// What DeviceOptions::map_registers must be for `--access name`: false only for a read-out that
// needs no BAR; true for an unknown name (make_counter_source refuses it later).
bool access_maps_registers(std::string_view name);

// Throws std::invalid_argument listing the valid names when `name` is unknown, and with the
// reason when the platform's driver refuses the read-out (xe and the register read-outs, DG2 and
// rpc).
std::unique_ptr<CounterSource> make_counter_source(std::string_view name, Device& device);

std::unique_ptr<CounterSource> make_mmio_source(Device& device);
// `sim`: the mmio read-out on a simulated device; refuses a real one.
std::unique_ptr<CounterSource> make_sim_source(Device& device);
// `rpc`: MI_REPORT_PERF_COUNT batches, through i915 on real hardware and through SimGpu's batch
// interpreter on a simulated device. The OA unit is programmed over MMIO either way.
std::unique_ptr<CounterSource> make_rpc_source(Device& device);
// `perf`: an i915 perf stream holds the metric set (in every context image); snapshots are
// MI_REPORT_PERF_COUNT batches while it does. Needs a metric set with a guid. On a simulated
// device the stream is SimI915Perf's, over SimGpu; on a real one the render node and sysfs card
// are the device's own (resolve_render_node, resolve_card_sysfs), and no BAR is needed.
// On a part xe drives (Xe2, the simulated one included) it is make_xe_source's stream instead.
std::unique_ptr<CounterSource> make_perf_source(Device& device);
// `perf` on xe: an xe observation stream holds the metric set and snapshots are the OA unit's
// periodic reports (the first written after each is asked for; src/gpu/xe_counter_source.cc).
std::unique_ptr<CounterSource> make_xe_source(Device& device);

// For `oaprof doctor` and `--help`: why rows may be flagged config_lost, and the remedy.
inline constexpr std::string_view kContextSavedNote =
    "On Gen8–11, OACTXCONTROL and the flex EU counter registers (EU_PERF_CNTL0–6) are saved in "
    "each context and reloaded at every context switch. With --access mmio or rpc oaprof reads "
    "them back at every snapshot and flags the row config_lost when a switch changed them; "
    "--access perf keeps flex-dependent metrics right.";

}  // namespace oaprof::gpu
