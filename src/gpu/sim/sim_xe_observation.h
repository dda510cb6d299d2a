// The kernel side of xe's OA observation interface for a simulated part xe drives, so that the
// xe read-out is tested through the uapi it uses on hardware: it refuses what
// drivers/gpu/drm/xe/xe_oa.c refuses, with the same errno (a property chain it cannot walk,
// a format the part or unit cannot stream, a register outside the part's lists, a UUID twice, a
// second stream on a unit: EBUSY), keeps configurations per device with ids from 1, and answers
// -EIO and then STATUS (BUFFER_OVERFLOW, REPORT_LOST) when the OA buffer overflows or a loss is
// injected.
//
// Xe2/Xe3 (LNL, BMG, PTL): PEC64u64 reports written at the stream's period into a bounded
// buffer. Their counters are a model: the clock counts at options.gpu_mhz (the simulator's
// frequency) and the PEC counters advance while the workload is marked busy, PEC i by
// (i mod 4 + 1) / 4 of the busy GPU clocks.
// Gen12 and Xe-LPG (TGL, MTL with xe.force_probe): the stream programs the simulated registers
// (mmio::SimGpu) with the configuration, the format and the periodic timer, as xe_oa.c programs
// the OAG unit, and reads the reports SimGpu's OA unit writes: A/B/C counters from SimGpu's
// model, every report readable at once (options.poll_ns applies to Xe2 streams only).
// Nothing either reports is a measurement.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpu/xe/xe_observation.h"
#include "gpu/xe/xe_query.h"
#include "mmio/oa_programmer.h"
#include "mmio/sim_gpu.h"
#include "oa/platform.h"
#include "oa/report_format.h"

namespace oaprof::gpu {

struct SimXeOptions {
  int observation_paranoid = 1;             // /proc/sys/dev/xe/observation_paranoid
  bool perfmon_capable = true;              // holds CAP_PERFMON or CAP_SYS_ADMIN
  std::size_t oa_buffer_bytes = 16u << 20;  // xe's DEFAULT_XE_OA_BUFFER_SIZE
  double gpu_mhz = 0;                       // the clock the GPU runs at; 0: the platform's max
  // What the GT topology query answers: Xe-cores enabled (0: the platform's), and the L3 banks
  // (0: the L3 mask left out, as xe does where it cannot read it; no upstream table gives a
  // part's count, so the simulator claims none unless told).
  int xe_cores = 0;
  int l3_banks = 0;
  // How late a written report becomes readable: xe moves the buffer's tail for readers on a
  // timer (5 ms on hardware); 0: at once.
  std::uint64_t poll_ns = 0;
  // The GPU timestamp counter's value when the simulator's clock reads 0: a real part's counts
  // from its own power-up, so nothing may take a report timestamp for host time.
  std::uint64_t timestamp_base_ticks = 0x3'0000'0000ull;
  // Added to ENGINE_CYCLES' answer only: a part whose engine timestamp is not the OA unit's
  // (which xe_oa.c's xe_oa_timestamp_frequency rules out on Xe2, unconfirmed on hardware).
  std::int64_t engine_cycles_skew_ticks = 0;
  // ADD_CONFIG of this UUID fails with EINVAL, as on a kernel whose register lists lack one of
  // its registers (mmio::SimFaults::rejected_config_uuid). Empty: none.
  std::string rejected_config_uuid = {};
};

// One simulated xe device: its OA units (an OAG with the render and compute engines, an OAM
// with a video engine on the media GT), its configurations and its streams. Every
// XeObservation made on it shares them, as descriptors on one device do.
class SimXeDevice {
 public:
  // `registers`: the simulated GPU whose OA unit streams on Gen12 and Xe-LPG parts (required
  // there, unused on Xe2). Throws std::invalid_argument for a part xe has no OA for (before
  // Gen12) or a Gen12/Xe-LPG part without registers.
  SimXeDevice(oa::Platform platform, mmio::Clock& clock, SimXeOptions options = {},
              mmio::SimGpu* registers = nullptr);

  const oa::Platform& platform() const { return platform_; }
  // The units DRM_XE_DEVICE_QUERY_OA_UNITS lists: an OAG with the render and compute engines of
  // GT 0 (Gen12: the render engine only) and, from Xe-LPG on, an OAM with a video engine of GT 1.
  std::vector<XeOaUnit> oa_units() const;
  // GT 0's masks for DRM_XE_DEVICE_QUERY_GT_TOPOLOGY.
  XeGtTopology gt_topology() const;
  // The workload signal: a kernel runs, with its known work when the caller knows it.
  void set_busy(bool busy, const oa::KernelWork* work = nullptr);
  // DRM_XE_DEVICE_QUERY_ENGINE_CYCLES for a render or compute engine of the OAG: the GPU
  // timestamp now and the clock's time; 0 or -EINVAL as xe_query.c answers.
  int engine_cycles(xe::QueryEngineCycles& q) const;
  // What the last engine_cycles() answered (tests check a snapshot against it).
  const xe::QueryEngineCycles& last_engine_cycles() const { return last_engine_cycles_; }
  // The next read of every open stream fails with -EIO and STATUS gives `oa_status` bits.
  void inject_status(std::uint64_t oa_status);
  SimXeOptions& options() { return options_; }

 private:
  friend class SimXeObservation;
  struct Stream {
    std::uint32_t unit = 0;
    int report_bytes = 0;
    // Xe2: the layout its reports are written in (none for the G1/G2 formats, whose layout no
    // public source gives: their reports carry PEC64u64's layout cut to their size).
    std::optional<oa::ReportFormat> layout;
    std::uint64_t period_ticks = 0;  // (2 << exponent) OA timestamp ticks; 0: no sampling
    bool sample = false;
    bool enabled = false;
    std::uint64_t next_report_tick = 0;            // when the next periodic report is due
    std::deque<std::vector<std::uint8_t>> buffer;  // reports written and not yet read
    std::uint64_t status = 0;                      // OA status bits not yet returned through EIO
    std::uint64_t last_status = 0;                 // what STATUS answers
    // Gen12 and Xe-LPG: the OAG unit's registers as the stream programmed them, and the
    // OACONTROL value that counts; null on Xe2.
    std::unique_ptr<mmio::OaProgrammer> programmer;
    std::uint32_t oacontrol = 0;
  };
  struct Config {
    std::string uuid;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> regs;  // (address, value), as given
  };
  // Writes every report due by now into the stream's buffer (the newest ones when more are due
  // than it holds, with BUFFER_OVERFLOW). Called before the busy state changes, so that each
  // report sees the state of its own instant.
  void advance(Stream& s);
  void advance_all();
  std::uint64_t busy_ns_until(std::uint64_t t) const;
  std::vector<std::uint8_t> report_at(std::uint64_t tick, const Stream& s) const;
  std::uint64_t now_ticks() const;
  std::uint64_t register_timestamp() const;  // Gen12, Xe-LPG: the registers' RING_TIMESTAMP
  // The tick of xe's last buffer poll (options.poll_ns > 0): reports up to it are readable.
  std::uint64_t last_poll_tick() const;

  oa::Platform platform_;
  mmio::Clock& clock_;
  SimXeOptions options_;
  mmio::SimGpu* registers_ = nullptr;  // Gen12 and Xe-LPG: the OA unit streams are read from
  std::map<std::uint64_t, Config> configs_;
  std::uint64_t next_config_id_ = 1;
  std::map<int, Stream> streams_;  // by descriptor
  int next_stream_ = 1000;
  // Busy intervals so far: busy time up to any instant is exact however late a report is read.
  std::uint64_t busy_total_ns_ = 0;
  std::optional<std::uint64_t> busy_since_;
  mutable xe::QueryEngineCycles last_engine_cycles_;  // a record of queries, not device state
};

std::unique_ptr<XeObservation> make_sim_xe_observation(SimXeDevice& device);
// Its device queries (OA units, GT topology, engine cycles) as xe_query.c answers them.
std::unique_ptr<XeQuery> make_sim_xe_query(const SimXeDevice& device);

}  // namespace oaprof::gpu
