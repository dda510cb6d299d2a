// The perf read-out on parts xe drives (Xe2/Xe3: LNL, BMG, PTL; Gen12 and Xe-LPG where xe is
// bound by force_probe): an xe observation stream holds the metric set (ADD_CONFIG, then
// STREAM_OPEN on the render/compute OAG unit), and snapshots are the unit's own periodic reports.
//
// xe has no i915-style MI_REPORT_PERF_COUNT path for a process that does not own the
// workload's exec queue, so a snapshot is the first periodic report written after it was asked
// for: it waits one period (2 << exponent timestamp ticks) plus xe's poll delay and then takes
// the newest readable report (see snapshot()). The 'before' report is therefore written before the
// kernel starts and the 'after' report after it ends, each up to one period (plus xe's 5 ms buffer
// poll on hardware) away from the boundary: event counters are whole, and time-based figures
// include that idle margin, which every row says (flag xe_periodic) and docs/xe.md explains.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "gpu/counter_source.h"
#include "gpu/sim/sim_xe_observation.h"
#include "gpu/stream_counter_source.h"
#include "gpu/xe/xe_observation.h"
#include "oa/report.h"
#include "oa/report_format.h"

namespace oaprof::gpu {
namespace {

std::string open_failure(const XeObservation& xe, int err) {
  std::string why;
  switch (-err) {
    case EBUSY:
      why = "another process holds the OA unit (one stream per unit)";
      break;
    case EACCES:
      why = "dev.xe.observation_paranoid is 1 and oaprof lacks CAP_PERFMON; run it with sudo";
      break;
    case ENODEV:
      why = "xe has no OA support here (it needs GuC submission, and no SR-IOV VF)";
      break;
    default:
      why = "xe refused the properties (format, unit or metric set)";
      break;
  }
  return fmt::format("{} refused the OA stream (STREAM_OPEN): {}; {}", xe.describe(),
                     std::strerror(-err), why);
}

class XeCounterSource final : public StreamCounterSource {
 public:
  explicit XeCounterSource(Device& device) : device_(device) {}
  ~XeCounterSource() override { stop(); }

  // A snapshot is the first report written after it was asked for. With the engine's timestamp
  // (ENGINE_CYCLES, read when asked) that is the first report whose timestamp is at or after it:
  // at most one period past the asking, taken as soon as xe lets it be read. Without it: at a
  // time T every report written before T - poll is readable (xe moves the buffer's tail for
  // readers on a timer), and one is written every period, so the newest readable report at
  // asked + period + poll was written at `asked` or later, up to period + poll after it.
  oa::RawReport snapshot(std::uint32_t) override {
    if (stream_ < 0) throw std::logic_error("xe read-out: snapshot before start()");
    // The engine first: `asked` is then no earlier than the timestamp the report must follow,
    // so a stall between the two cannot make the patience below run out early.
    from_ = gpu_now();
    picked_.clear();
    const auto asked = std::chrono::steady_clock::now();
    const std::uint64_t seen = counts_.reports;
    const auto ready = asked + period_ + poll_;
    const auto deadline = ready + period_ * 20 + std::chrono::seconds(1);
    for (;;) {
      // The time is taken before the read: what that read finds was readable by then.
      const auto now = std::chrono::steady_clock::now();
      drain();  // also keeps the buffer from filling while we wait
      if (from_ && picked_.empty() && now >= ready + poll_ + kTimestampPatience &&
          counts_.reports > seen) {
        give_up_timestamps();  // no report has a timestamp at or after the engine's
      }
      if (from_ ? !picked_.empty() : now >= ready && counts_.reports > seen) break;
      if (now > deadline) {
        throw std::runtime_error(fmt::format(
            "{}: no OA report arrived within {} ms of asking; is the stream's unit stalled?",
            xe_->describe(),
            std::chrono::duration_cast<std::chrono::milliseconds>(now - asked).count()));
      }
      const std::chrono::nanoseconds shortest = std::chrono::microseconds(20);
      const std::chrono::nanoseconds longest = std::max({shortest, period_ / 4, poll_ / 4});
      std::this_thread::sleep_for(
          std::clamp<std::chrono::nanoseconds>(ready - now, shortest, longest));
    }
    if (!from_) ++snapshots_waited_;
    const std::vector<std::uint8_t>& bytes = from_ ? picked_ : counts_.last_report;
    oa::RawReport r;
    r.size = static_cast<int>(bytes.size());
    std::memcpy(r.bytes.data(), bytes.data(), bytes.size());
    return r;
  }

  void stop() override {
    if (xe_ && stream_ >= 0) xe_->close_stream(stream_);
    stream_ = -1;
    if (xe_ && added_config_) xe_->remove_config(config_id_);
    added_config_ = false;
    xe_.reset();
  }

  void signal_kernel(bool running, const oa::KernelWork* work) override {
    if (device_.sim_xe) device_.sim_xe->set_busy(running, work);
  }

  PerfStreamCounts perf_stream_counts() const override {
    return {static_cast<int>(counts_.reports), counts_.report_lost, counts_.buffer_overflow,
            snapshots_waited_, device_.platform.gen == oa::Generation::kXeLpg};
  }

 protected:
  std::string no_configuration_message() const override {
    return "an xe stream needs a metric set with registers and a hw_config_guid, which oaprof's "
           "built-in set lacks: choose an IGT set with --metric-set (ComputeBasic from the part's "
           "file in igt-xe, e.g. oa-lnl.xml or oa-tglgt2.xml; `oaprof metrics list`)";
  }

  void open(oa::ReportFormat format, const mmio::OaConfig& config) override {
    xe_ = device_.sim_xe
              ? make_sim_xe_observation(*device_.sim_xe)
              : make_drm_xe_observation(resolve_render_node(device_), resolve_card_sysfs(device_));
    const std::vector<XeOaUnit> units = xe_->oa_units();
    const XeOaUnit* oag = render_oag(units);
    if (oag == nullptr) {
      throw std::runtime_error(
          fmt::format("{} reports no OA unit with a render or compute engine", xe_->describe()));
    }
    layout_ = &oa::layout_of(format);
    config_id_ = config_id_for(config);
    XeOaStreamParams p;
    p.oa_unit_id = oag->id;
    p.metric_set = config_id_;
    p.oa_format = oa::to_xe_oa_format(format, device_.platform.gen);
    p.period_exponent = device_.perf_period_exponent;
    const XePropertyChain chain(p);
    const int stream = xe_->open_stream(chain.head());
    if (stream < 0) throw std::runtime_error(open_failure(*xe_, stream));
    stream_ = stream;
    const double hz = oag->timestamp_hz > 0 ? static_cast<double>(oag->timestamp_hz)
                                            : device_.platform.timestamp_hz;
    period_ = std::chrono::nanoseconds(static_cast<std::int64_t>(
        static_cast<double>(2ull << device_.perf_period_exponent) * 1e9 / hz));
    poll_ = device_.sim_xe ? std::chrono::nanoseconds(device_.sim_xe->options().poll_ns)
                           : std::chrono::milliseconds(5);
    counts_ = {};
    engine_ = *render_engine(*oag);  // render_oag chose a unit that has one
    // The report's timestamp is the engine's, in as many low bits as the report holds: so on
    // Xe2 (64-bit header) and Gen12 (32-bit) alike, where the OA unit counts at the engine's
    // reference clock (xe_oa_timestamp_frequency @ torvalds/linux 0755a4e3e809). On Xe-LPG it
    // counts at a rate scaled by the CTC shift (Wa_18013179988), whose base against the
    // engine's no source gives: snapshots there wait out xe's poll, counted as ever.
    report_ts_bits_ = layout_->header64 ? 64 : 32;
    by_timestamp_ = device_.platform.gen != oa::Generation::kXeLpg;
    snapshots_waited_ = 0;
    // Two periods (a lost report between) and the patience, in timestamp ticks.
    patience_ticks_ = static_cast<std::uint64_t>(
        (2.0 * static_cast<double>(period_.count()) +
         static_cast<double>(std::chrono::nanoseconds(kTimestampPatience).count())) *
        hz / 1e9);
  }

 private:
  std::uint64_t config_id_for(const mmio::OaConfig& config) {
    if (auto id = xe_->find_config_id(config.guid)) return *id;
    if (config.guid.size() != 36) {
      throw std::invalid_argument(
          fmt::format("metric set guid '{}' is not a 36-character UUID", config.guid));
    }
    std::vector<std::uint32_t> regs;
    for (const auto* list : {&config.mux, &config.boolean, &config.flex}) {
      for (const oa::RegisterWrite& w : *list) regs.insert(regs.end(), {w.address, w.value});
    }
    xe::OaConfigParam c;
    std::memcpy(c.uuid, config.guid.data(), sizeof c.uuid);
    c.n_regs = static_cast<std::uint32_t>(regs.size() / 2);
    c.regs_ptr = reinterpret_cast<std::uintptr_t>(regs.data());
    const int id = xe_->add_config(c);
    if (id < 0) {
      throw std::runtime_error(
          fmt::format("{} refused metric set {} (ADD_CONFIG): {}; it needs CAP_PERFMON (or "
                      "observation_paranoid 0), a valid UUID and registers xe accepts for the part",
                      xe_->describe(), config.guid, std::strerror(-id)));
    }
    added_config_ = true;
    return static_cast<std::uint64_t>(id);
  }

  // The render engine's timestamp now, to place the snapshot by; nullopt once that has failed
  // for this stream (the snapshot then waits out xe's poll).
  std::optional<std::uint64_t> gpu_now() {
    if (!by_timestamp_) return std::nullopt;
    try {
      const XeEngineCycles c = xe_->engine_cycles(engine_);
      width_ = c.width;
      return c.engine_cycles;
    } catch (const std::runtime_error&) {  // xe refused the query (forcewake, engine)
      give_up_timestamps();
      return std::nullopt;
    }
  }

  // From here on this stream's snapshots wait out xe's poll (counted, and warned about at the
  // end of the run).
  void give_up_timestamps() {
    by_timestamp_ = false;
    from_.reset();
    picked_.clear();
  }

  void drain() {
    drain_xe_stream(*xe_, stream_, layout_->size_bytes, counts_, 16u << 20, &XeCounterSource::seen,
                    this);
  }

  // Every report read: the first at or after from_ is the snapshot. One further past it than
  // a period and the patience allow is not after a report the unit wrote in between: the two
  // timestamps are not one clock (xe_oa.c says they are on Xe2), and placing by them stops.
  static void seen(std::span<const std::uint8_t> report, void* self) {
    auto& s = *static_cast<XeCounterSource*>(self);
    if (!s.from_ || !s.picked_.empty()) return;
    const std::optional<std::uint64_t> ahead =
        ticks_at_or_after(oa::read_timestamp_field(*s.layout_, report.data()), *s.from_,
                          std::min(s.width_, s.report_ts_bits_));
    if (!ahead) return;
    if (*ahead > s.patience_ticks_) {
      s.give_up_timestamps();
      return;
    }
    s.picked_.assign(report.begin(), report.end());
  }

  Device& device_;
  std::unique_ptr<XeObservation> xe_;
  int stream_ = -1;
  const oa::FormatLayout* layout_ = nullptr;  // the stream's report format
  std::uint64_t config_id_ = 0;
  bool added_config_ = false;
  std::chrono::nanoseconds period_{0};
  // How late a written report becomes readable: xe checks the OA buffer's tail on a 200 Hz
  // timer (DEFAULT_POLL_FREQUENCY_HZ, xe_oa.c @ torvalds/linux 2d46ecc958c9); the simulated xe
  // has every report readable at once.
  std::chrono::nanoseconds poll_{0};
  XeStreamCounts counts_;
  // Placing snapshots by timestamp: the engine asked (the OAG's render or compute engine), the
  // timestamp the current snapshot waits past, the report it found.
  static constexpr std::chrono::milliseconds kTimestampPatience{10};
  xe::EngineClassInstance engine_;
  bool by_timestamp_ = true;
  std::optional<std::uint64_t> from_;
  int width_ = 64;           // the engine timestamp's bits (ENGINE_CYCLES)
  int report_ts_bits_ = 64;  // the report timestamp's bits
  std::uint64_t patience_ticks_ = 0;
  std::vector<std::uint8_t> picked_;
  int snapshots_waited_ = 0;
};

}  // namespace

std::unique_ptr<CounterSource> make_xe_source(Device& device) {
  return std::make_unique<XeCounterSource>(device);
}

}  // namespace oaprof::gpu
