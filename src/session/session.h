// The Session owns the OA unit for one profiling run: it starts the counter source, takes the
// snapshots clients ask for around each launch, pairs them into deltas, hands finished launches
// to a sink, and restores every register on stop (also from its destructor, so an error path
// cannot leave the hardware configured).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpu/counter_source.h"
#include "ipc/wire.h"
#include "mmio/oa_programmer.h"
#include "oa/accumulator.h"
#include "oa/launch_record.h"
#include "oa/report.h"
#include "oa/sampled_attribution.h"
#include "power/energy_source.h"

namespace oaprof::session {

// Adds the row flags for what the perf stream lost between two readings of its counts:
// reports_lost (OA_REPORT_LOST records) and oa_buffer_lost (OA_BUFFER_LOST: OA restarted on an
// empty buffer).
void add_stream_loss_flags(const gpu::PerfStreamCounts& begin, const gpu::PerfStreamCounts& end,
                           std::vector<std::string>& flags);

// How the session keeps a long launch's counters exact. A 32-bit counter wraps within seconds
// (GPU_TICKS in 3.7 s at 1150 MHz), and a delta between two reads is exact only when at most one
// wrap happened between them: so while a pass of a launch is open, the session reads the counters
// every `read_period` and folds the reads (as the samplers do); an interval between two reads that
// is still longer than `max_interval_ns` flags the row interval_too_long.
struct LaunchReadOptions {
  double timestamp_hz = 12e6;
  // The longest interval whose deltas are exact (oa::max_safe_read_interval_ns); the default is
  // the simulated Kaby Lake GT2's (1150 MHz, 24 EUs): about 1.87 s.
  double max_interval_ns = oa::max_safe_read_interval_ns(1150.0, 24, 12e6);
  // Zero: no reads inside a launch (its row is flagged when it runs too long).
  std::chrono::milliseconds read_period{0};
};

// Sampled attribution (--attribution sampled): the session reads the counters every `period`
// from start() to stop(), each read placed by its report's GPU timestamp (put on the host's
// CLOCK_MONOTONIC by a line through the reads' host times), and gives each launch the layer
// sends with a sampled window the counters' growth over that window. Reads
// older than `history`, or than Session::kMaxTimelineReads periods, are forgotten (a launch whose
// window starts before the oldest read left is flagged not_attributed).
struct SampledOptions {
  std::chrono::microseconds period{1000};
  std::chrono::seconds history{10};
  // The host's clock in ns; null: CLOCK_MONOTONIC (the layer's). Tests give a virtual one.
  std::function<std::uint64_t()> clock;
};

// For a device of this clock range and EU count: reads every quarter of the exact interval
// (at most every 500 ms).
LaunchReadOptions launch_read_options(double timestamp_hz, double max_freq_mhz, int eus);

// A set of a kernel replay across metric sets: its symbol (what oaprofd is asked for) and its
// programming.
struct PassSet {
  std::string symbol;
  mmio::OaConfig config;
};

// RAPL's update interval, about 1 ms, within which two reads return the same counters.
inline constexpr std::chrono::nanoseconds kRaplUpdateInterval{1'000'000};

// Everything a session is told before it starts, in one place: the run builds it from its plan
// and hands it to the constructor. Each field is what the setter of the same name below does.
// The work of a launch the layer named before it ran (ipc::wire::WorkHint), for a simulated
// device to count: nullopt for a kernel whose work is unknown. The run gives bench::known_work;
// the session cannot see the catalogue's floor.
using WorkResolver = std::function<std::optional<oa::KernelWork>(const ipc::wire::WorkHint&)>;

struct SessionOptions {
  mmio::OaConfig config;  // the metric set's register programming; empty: the bare counters
  std::vector<PassSet> pass_sets;  // kernel replay across sets (set_pass_configs); empty: none
  std::uint32_t passes_per_set = 0;
  power::EnergySource* energy = nullptr;  // must outlive the session
  std::chrono::nanoseconds energy_reuse = kRaplUpdateInterval;
  std::function<void(bool)> busy_listener;
  // Set for a simulated device only: a real one has nothing to do with a kernel's known work.
  WorkResolver work_resolver;
  std::optional<LaunchReadOptions> launch_reads;
  std::optional<SampledOptions> sampled;
};

class Session {
 public:
  // The energy readings bracket the row's window when an energy source is set, else are null.
  // The record is the sink's to keep: a row writer queues it without a copy.
  using Sink = std::function<void(oa::LaunchRecord&&, const power::EnergyReading* begin,
                                  const power::EnergyReading* end)>;

  // `config`: the metric set's register programming; empty for the bare counters.
  Session(gpu::CounterSource& source, oa::ReportFormat format, Sink sink,
          mmio::OaConfig config = {});
  // Configured in full before it can start; throws std::invalid_argument for options the
  // setters below refuse.
  Session(gpu::CounterSource& source, oa::ReportFormat format, Sink sink, SessionOptions options);
  ~Session();  // stops, never throws (a failure there is left to the fallbacks)
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start();
  // Thread-safe, as is everything below: the socket server and a sampler may share a session.
  // Answers one request of client `client_id` (whose process is `pid`). Never throws: device
  // failures become an Error reply. The answer waits only for what the kernel must not start (or
  // end) without: the counter snapshot and the kernel signal (to the source and the busy
  // listener). The energy reading beside the snapshot is left for settle(), which the server
  // calls as soon as the reply is on its way; a client's next request settles its earlier ones
  // first in any case.
  ipc::wire::Body handle(std::uint64_t client_id, std::uint32_t pid,
                         const ipc::wire::Body& request);
  // Does what the answers to `client_id` left for after the reply.
  void settle(std::uint64_t client_id);
  // The client's connection closed: launches it left half-measured are dropped, and a kernel it
  // left marked as running is ended.
  void client_gone(std::uint64_t client_id);
  // Restores every register the source touched. Throws what the source's stop() threw (and
  // then the session is stopped all the same).
  void stop();

  // The setters below reconfigure a session before it starts; tests use them on one fixture.
  // Energy is read next to every snapshot when a source is set (it must outlive the session).
  void set_energy_source(power::EnergySource* energy);
  // A launch's first 'before' takes the reading of the last 'after' instead of a new one when
  // that is younger than `window` (default: RAPL's update interval, about 1 ms, within which
  // two reads return the same counters). Back-to-back launches then read the energy once each,
  // and their windows tile the run. Zero: always read anew.
  void set_energy_reuse(std::chrono::nanoseconds window);
  static constexpr std::chrono::nanoseconds kRaplUpdateInterval = session::kRaplUpdateInterval;
  // Told when the GPU starts and stops being busy with a measured kernel: the simulated RAPL
  // tree follows the simulated GPU through it.
  void set_busy_listener(std::function<void(bool)> listener);
  // Resolves the work hints of 'before' snapshots for the source's kernel signal (a simulated
  // device counts the kernel's known work); unset: hints are ignored.
  void set_work_resolver(WorkResolver resolver);
  // Before start(): how long launches are kept exact (a thread of the session reads the counters
  // while a pass is open when `read_period` is set).
  void set_launch_reads(const LaunchReadOptions& options);
  // Before start(): sampled attribution instead of bracketed snapshots (SampledOptions). The
  // launch reads' wrap limits (set_launch_reads) hold for the timeline's reads too.
  void set_sampled(const SampledOptions& options);
  // One read of the sampled timeline, then the rows of the launches whose windows it now
  // covers. The session's thread calls it every period; tests call it themselves. Throws what
  // the snapshot threw.
  void read_timeline();
  // Sampled launches waiting for a read after their window's end; past kMaxSampledWaiting a
  // client's further ones are refused.
  std::size_t sampled_waiting() const;
  static constexpr std::size_t kMaxSampledWaiting = 65536;
  // Launches snapshotted but not yet ended (bracketed), all clients together: a program (or a
  // hostile client) that opens launches and never ends them cannot grow the privileged side's
  // memory past this (a few kB each); a 'before' of a further launch is refused and the launch
  // counts as dropped. A real program has one open launch per launching thread.
  static constexpr std::size_t kMaxOpenLaunches = 4096;
  // Before start(): kernel replay across metric sets. `sets` replace the constructor's
  // configuration: a launch's passes count the set the unit holds for its first
  // `passes_per_set` passes, the next set (in the list, round) for the next ones, and so on
  // until every set has counted (passes past that count the last). Before
  // a pass's 'before' is read, the OA unit is reprogrammed for its set when it holds another,
  // so the switch (mux settle included) falls outside every kernel window. The launch then
  // gives one record per set (LaunchRecord::pass_set), each with its own passes' deltas; a set
  // that got no pass is flagged pass_missing, and a launch whose pass was open while another
  // launch switched the set is flagged pass_disturbed.
  using PassSet = session::PassSet;
  void set_pass_configs(std::vector<PassSet> sets, std::uint32_t passes_per_set);
  // What switching sets has cost so far: how many switches and their total time.
  struct SwitchCost {
    std::uint64_t switches = 0;
    std::chrono::nanoseconds total{0};
  };
  SwitchCost switch_cost() const;
  // One periodic read: when a pass has been open for `read_period` or longer since its last
  // read, takes a snapshot and folds it into every open pass. The session's thread calls it;
  // tests call it on a virtual clock. Throws what the snapshot threw.
  void read_open_launches();

  // What a snapshot found beside its counters.
  struct SampleNotes {
    // It found the context-saved registers reloaded by a context switch (and put them back).
    bool config_lost = false;
    // Its register read-out was interrupted on every attempt (CounterSource).
    bool readout_interrupted = false;
  };
  // A snapshot outside any launch, for samplers (app mode, system-wide), with the energy read
  // beside it when there is a source.
  oa::Report sample(std::optional<power::EnergyReading>* energy = nullptr,
                    SampleNotes* notes = nullptr);
  // Hands a row that did not come from a client launch (an interval, the whole application) to
  // the sink, numbered in sequence with the launches.
  void emit(oa::LaunchRecord record, const power::EnergyReading* begin = nullptr,
            const power::EnergyReading* end = nullptr);
  // Workload signal for the simulator when no launches bracket the work (app mode).
  void set_busy(bool busy);

  std::uint64_t launches_recorded() const;
  std::uint64_t launches_dropped() const;
  // The source's perf stream records so far (zero for read-outs without a stream).
  gpu::PerfStreamCounts perf_stream_counts() const;
  // The register read-out's skew so far (nullopt for read-outs that write reports at once).
  std::optional<gpu::ReadoutSkew> readout_skew() const;

 private:
  // A launch being measured. A replayed launch repeats the before/after pair once per pass: the
  // counters sum the pairs' deltas (the restores between passes fall outside them), while the
  // energy window runs from the first 'before' to the last 'after'.
  struct Pending {
    // The latest read of the pass in progress: its 'before', or its latest periodic read.
    std::optional<oa::Report> before;
    std::chrono::steady_clock::time_point before_at;
    oa::CounterDeltas pass;    // of the pass in progress, up to `before`
    oa::CounterDeltas deltas;  // summed over the finished passes
    std::uint32_t pairs = 0;   // finished passes
    // The GPU frequency at the launch's first read, and whether a later read differed.
    std::optional<double> freq_mhz;
    bool freq_changed = false;
    std::optional<power::EnergyReading> energy_before;  // at the first 'before'
    std::optional<power::EnergyReading> energy_after;   // at the latest 'after'
    // A context switch undid the context-saved configuration during one of the passes (seen
    // at its 'after'): kept per launch, since another client's snapshot may come before the row.
    bool config_lost = false;
    // A 'before' or 'after' of one of its passes was read over an interrupted span. Periodic
    // reads in between do not count: their skew leaves one interval and enters the next.
    bool readout_interrupted = false;
    // Kernel replay across sets: the set of the pass in progress, the finished passes' deltas
    // and count per set, and whether a switch of the set hit a pass of this launch.
    std::size_t first_set = 0;  // the set of its first pass: the one the unit then held
    std::size_t pass_set = 0;
    std::vector<oa::CounterDeltas> set_deltas;
    std::vector<std::uint32_t> set_pairs;
    bool disturbed = false;
    // The perf stream's counts after the first 'before' and after the latest 'after': a loss
    // between them happened in this launch's window.
    gpu::PerfStreamCounts stream_before;
    gpu::PerfStreamCounts stream_after;
  };
  // Work an answer leaves for after its reply: reading the energy beside a snapshot (into the
  // launch's Pending).
  struct Deferred {
    std::uint64_t client_id;
    std::uint64_t launch_id;
    ipc::wire::Phase phase;
    bool read_energy;
  };
  std::optional<power::EnergyReading> read_energy_locked();
  // One snapshot, with the GPU frequency read just before it.
  struct Read {
    oa::Report report;
    std::optional<double> freq_mhz;
  };
  Read read_locked();
  // Notes the frequency of a read of `p`'s launch.
  static void note_freq(Pending& p, const std::optional<double>& freq_mhz);
  // Folds a read into `p`'s open pass: the interval from the pass's latest read to it.
  void fold_locked(Pending& p, const Read& read);
  void reader_loop(std::chrono::microseconds period, void (Session::*read)());
  // Sampled attribution: a launch with a sampled window waits for the timeline to pass its end.
  ipc::wire::Body sampled_launch(std::uint32_t pid, const oa::Launch& l);
  void read_timeline_locked();
  // The rows of the waiting launches the timeline covers (all of them when `final`).
  void attribute_waiting_locked(bool final);
  // A launch's window on the timeline (host_to_timeline_), its length kept.
  oa::Window to_timeline(const oa::SampledWindow& w) const;
  // One sampled launch's row: the timeline's counters over its window.
  void emit_sampled_locked(oa::LaunchRecord record);
  // The most reads the timeline keeps (each a CounterDeltas, under a kilobyte).
  static constexpr std::uint64_t kMaxTimelineReads = 16384;
  void stop_reader();
  void busy_locked(bool busy, const oa::KernelWork* work = nullptr);
  void settle_locked(std::uint64_t client_id);
  ipc::wire::Body snapshot(std::uint64_t client_id, const ipc::wire::Snapshot& s);
  // Kernel replay across sets: programs the set of `p`'s next pass if the unit holds another.
  void program_pass_set_locked(Pending& p);
  // The finished pass of `p` in its set's deltas.
  static void add_set_pass(Pending& p, std::size_t sets);
  // One record per set of a launch measured across sets.
  void emit_per_set_locked(const oa::LaunchRecord& record, const Pending& p);
  ipc::wire::Body launch(std::uint64_t client_id, std::uint32_t pid, const oa::Launch& l);
  void stop_locked();

  mutable std::mutex mu_;
  gpu::CounterSource& source_;
  oa::ReportFormat format_;
  Sink sink_;
  std::vector<PassSet> sets_;  // one, or one per set of a kernel replay across sets
  std::uint32_t passes_per_set_ = 1;
  std::size_t programmed_ = 0;  // which of sets_ the unit holds
  SwitchCost switch_cost_;
  power::EnergySource* energy_ = nullptr;
  std::chrono::nanoseconds energy_reuse_ = kRaplUpdateInterval;
  std::optional<power::EnergyReading> last_after_;  // the latest 'after' reading, and when
  std::chrono::steady_clock::time_point last_after_at_;
  std::function<void(bool)> busy_listener_;
  WorkResolver work_resolver_;
  bool started_ = false;
  std::map<std::pair<std::uint64_t, std::uint64_t>, Pending> pending_;  // (client, launch id)
  std::vector<Deferred> deferred_;
  std::optional<std::uint64_t> running_client_;
  std::uint64_t next_index_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint32_t next_report_id_ = 1;
  LaunchReadOptions reads_;
  std::optional<SampledOptions> sampled_;
  std::optional<oa::Accumulator> timeline_totals_;
  oa::CounterTimeline timeline_;          // on the GPU's time, from timeline_origin_ns_
  std::uint64_t timeline_origin_ns_ = 0;  // the first read's host time
  std::uint64_t last_read_ns_ = 0;        // the latest read's host time
  std::uint64_t last_timeline_ns_ = 0;    // and on the timeline
  // The latest reads' (host, timeline) times, and the line through them.
  static constexpr std::size_t kClockPairs = 256;
  std::deque<std::pair<std::uint64_t, std::uint64_t>> clock_pairs_;
  oa::ClockMap host_to_timeline_;
  std::vector<oa::LaunchRecord> sampled_waiting_;
  // The periodic reads' thread, and its own lock (stop() joins it without holding mu_).
  std::mutex reader_mu_;
  std::condition_variable reader_wake_;
  bool reader_stop_ = false;
  std::thread reader_;
};

}  // namespace oaprof::session
