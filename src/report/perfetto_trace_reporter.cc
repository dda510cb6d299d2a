// The Perfetto trace (--trace FILE.pftrace): TrackEvent packets written as rows arrive, each packet
// whole before the next begins, so a crash leaves a prefix that Perfetto reads. Tracks: one per
// process with a child per OpenCL queue (a slice per kernel launch, every CSV field of the row as
// an annotation), one per calling thread (an instant at each enqueue, the thread named as /proc
// names it), and a GPU track with counter tracks for the frequency, the iGPU power and every
// derived metric of the set. Times are CLOCK_MONOTONIC, and a clock snapshot relates them to
// Perfetto's default clock; GPU times (OpenCL profiling, the device's clock) are moved onto the
// host clock by the offset between a launch's API call and its QUEUED time.
#include <time.h>

#include <cmath>
#include <fstream>
#include <map>
#include <ostream>
#include <tuple>

#include <fmt/format.h>

#include "report/perfetto_fields.h"
#include "report/proto_writer.h"
#include "report/reporter.h"
#include "report/row.h"

namespace oaprof::report {
namespace {

namespace pf = perfetto;

constexpr std::uint32_t kSequenceId = 1;

std::uint64_t clock_ns(clockid_t id) {
  timespec ts{};
  ::clock_gettime(id, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// The name /proc gives a thread or process (at most 15 characters); empty when it is gone.
std::string proc_comm(const std::string& proc_root, std::uint32_t pid,
                      std::optional<std::uint32_t> tid) {
  const std::string path = tid ? fmt::format("{}/{}/task/{}/comm", proc_root, pid, *tid)
                               : fmt::format("{}/{}/comm", proc_root, pid);
  std::ifstream in(path);
  char buf[64] = {};
  in.read(buf, sizeof buf - 1);
  std::string s(buf, static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s;
}

void add_annotation(ProtoWriter& event, const Field& f) {
  ProtoWriter a;
  a.add_string(pf::kAnnotationName, f.name);
  if (const auto* u = std::get_if<std::uint64_t>(&f.value)) {
    a.add_uint(pf::kAnnotationUintValue, *u);
  } else if (const auto* d = std::get_if<double>(&f.value)) {
    a.add_double(pf::kAnnotationDoubleValue, *d);
  } else if (const auto* s = std::get_if<std::string>(&f.value)) {
    a.add_string(pf::kAnnotationStringValue, *s);
  } else {
    return;  // not measured: no annotation, as the CSV cell is empty
  }
  event.add_message(pf::kEventDebugAnnotations, a);
}

class PerfettoTraceReporter final : public Reporter {
 public:
  PerfettoTraceReporter(std::ostream& out, std::string proc_root)
      : out_(out), proc_root_(std::move(proc_root)) {}

  void begin(const RunInfo& info) override {
    info_ = info;
    write_clock_snapshot();
    gpu_track_ = next_uuid_++;
    write_track(
        gpu_track_, 0,
        fmt::format("GPU {}", info.device_detail.empty() ? info.device : info.device_detail));
    out_.flush();
  }

  void add(const oa::LaunchRecord& r, const RowEnergy& energy) override {
    const std::vector<Field> fields = launch_fields(r, energy, info_);
    const auto [start, end] = host_interval(r);
    const std::uint64_t queue = queue_track(r);
    write_slice(queue, start, end, r, fields);
    if (r.launch.tid != 0 && r.launch.api_ns != 0) write_enqueue(thread_track(r), r);
    write_counters(start, fields);
  }

  void flush() override { flush_or_throw(out_, "trace"); }
  void end() override { out_.flush(); }

 private:
  void write_packet(ProtoWriter& packet) {
    packet.add_uint(pf::kPacketTrustedSequenceId, kSequenceId);
    if (first_packet_) {
      packet.add_uint(pf::kPacketSequenceFlags, pf::kSeqIncrementalStateCleared);
      first_packet_ = false;
    }
    ProtoWriter trace;
    trace.add_message(pf::kTracePacket, packet);
    out_ << trace.bytes();
  }

  void write_clock_snapshot() {
    ProtoWriter snapshot;
    for (auto [id, clock] : {std::pair{pf::kBuiltinClockMonotonic, CLOCK_MONOTONIC},
                             std::pair{pf::kBuiltinClockBoottime, CLOCK_BOOTTIME}}) {
      ProtoWriter c;
      c.add_uint(pf::kClockId, id);
      c.add_uint(pf::kClockTimestamp, clock_ns(clock));
      snapshot.add_message(pf::kClockSnapshotClocks, c);
    }
    ProtoWriter packet;
    packet.add_message(pf::kPacketClockSnapshot, snapshot);
    write_packet(packet);
  }

  void write_track(std::uint64_t uuid, std::uint64_t parent, const std::string& name,
                   const ProtoWriter* process = nullptr, const ProtoWriter* thread = nullptr,
                   const std::string* counter_unit = nullptr) {
    ProtoWriter t;
    t.add_uint(pf::kTrackUuid, uuid);
    if (parent) t.add_uint(pf::kTrackParentUuid, parent);
    if (!name.empty()) t.add_string(pf::kTrackName, name);
    if (process) t.add_message(pf::kTrackProcess, *process);
    if (thread) t.add_message(pf::kTrackThread, *thread);
    if (counter_unit) {
      ProtoWriter c;
      if (!counter_unit->empty()) c.add_string(pf::kCounterUnitName, *counter_unit);
      t.add_message(pf::kTrackCounter, c);
    }
    ProtoWriter packet;
    packet.add_message(pf::kPacketTrackDescriptor, t);
    write_packet(packet);
  }

  void write_event(std::uint64_t ts, ProtoWriter& event) {
    ProtoWriter packet;
    packet.add_uint(pf::kPacketTimestamp, ts);
    packet.add_uint(pf::kPacketTimestampClockId, pf::kBuiltinClockMonotonic);
    packet.add_message(pf::kPacketTrackEvent, event);
    write_packet(packet);
  }

  std::uint64_t process_track(std::uint32_t pid) {
    auto [it, fresh] = processes_.try_emplace(pid, 0);
    if (!fresh) return it->second;
    it->second = next_uuid_++;
    std::string name = proc_comm(proc_root_, pid, std::nullopt);
    if (name.empty() && !info_.command.empty()) name = info_.command.front();
    ProtoWriter p;
    p.add_int(pf::kProcessPid, pid);
    if (!name.empty()) p.add_string(pf::kProcessName, name);
    write_track(it->second, 0, "", &p);
    return it->second;
  }

  std::uint64_t thread_track(const oa::LaunchRecord& r) {
    auto [it, fresh] = threads_.try_emplace({r.pid, r.launch.tid}, 0);
    if (!fresh) return it->second;
    it->second = next_uuid_++;
    std::string name = proc_comm(proc_root_, r.pid, r.launch.tid);
    if (name.empty()) name = fmt::format("thread {}", r.launch.tid);
    ProtoWriter t;
    t.add_int(pf::kThreadPid, r.pid);
    t.add_int(pf::kThreadTid, r.launch.tid);
    t.add_string(pf::kThreadName, name);
    write_track(it->second, process_track(r.pid), "", nullptr, &t);
    return it->second;
  }

  // A track per queue (OpenCL, Level Zero) of each process; rows without a queue (sampled rows of
  // --mode app and --system-wide) go on one "GPU (sampled)" track under the GPU.
  std::uint64_t queue_track(const oa::LaunchRecord& r) {
    auto [it, fresh] = queues_.try_emplace({r.pid, r.launch.queue}, 0);
    if (!fresh) return it->second;
    it->second = next_uuid_++;
    if (r.launch.queue == 0) {
      write_track(it->second, gpu_track_, "GPU (sampled)");
    } else {
      // A Level Zero row's queue is its command queue, or its immediate list.
      const bool opencl = std::string_view(oa::launch_api_family(r.launch.api)) == "opencl";
      write_track(
          it->second, process_track(r.pid),
          fmt::format("{} 0x{:x}", opencl ? "OpenCL queue" : "Level Zero queue", r.launch.queue));
    }
    return it->second;
  }

  std::uint64_t counter_track(const std::string& name) {
    auto [it, fresh] = counters_.try_emplace(name, 0);
    if (!fresh) return it->second;
    it->second = next_uuid_++;
    const std::string unit;
    write_track(it->second, gpu_track_, name, nullptr, nullptr, &unit);
    return it->second;
  }

  // The launch's GPU interval on the host clock: OpenCL profiling times moved by the first
  // offset seen for its process and device (one offset, so GPU intervals keep their spacing);
  // without profiling, from the API call (or the previous row's end) for the GPU time measured;
  // a sampled launch's own window.
  std::pair<std::uint64_t, std::uint64_t> host_interval(const oa::LaunchRecord& r) {
    const auto& l = r.launch;
    // Sampled attribution put the window on the host's clock already.
    if (l.sampled) return {l.sampled->host_start_ns, l.sampled->host_end_ns};
    if (l.profiled && l.queued_ns != 0 && l.api_ns != 0 && l.end_ns >= l.start_ns) {
      auto [it, fresh] = offsets_.try_emplace({r.pid, l.device}, 0);
      if (fresh)
        it->second = static_cast<std::int64_t>(l.api_ns) - static_cast<std::int64_t>(l.queued_ns);
      const auto start =
          static_cast<std::uint64_t>(static_cast<std::int64_t>(l.start_ns) + it->second);
      return {start, start + (l.end_ns - l.start_ns)};
    }
    const double gpu_ns = oa::gpu_time_ns(r.deltas, info_.timestamp_hz);
    const std::uint64_t start = l.api_ns != 0 ? l.api_ns : last_end_;
    const std::uint64_t end =
        start + (std::isfinite(gpu_ns) && gpu_ns > 0 ? static_cast<std::uint64_t>(gpu_ns) : 0);
    last_end_ = end;
    return {start, end};
  }

  void write_slice(std::uint64_t track, std::uint64_t start, std::uint64_t end,
                   const oa::LaunchRecord& r, const std::vector<Field>& fields) {
    ProtoWriter begin;
    begin.add_uint(pf::kEventType, pf::kTypeSliceBegin);
    begin.add_uint(pf::kEventTrackUuid, track);
    begin.add_string(pf::kEventCategories, "opencl");
    begin.add_string(pf::kEventName, r.launch.kernel_name);
    for (const Field& f : fields) {
      // The run's host and rank are the same on every slice: the trace is one run's.
      if (f.name == "host" || f.name == "rank") continue;
      add_annotation(begin, f);
    }
    write_event(start, begin);
    ProtoWriter finish;
    finish.add_uint(pf::kEventType, pf::kTypeSliceEnd);
    finish.add_uint(pf::kEventTrackUuid, track);
    write_event(end, finish);
  }

  void write_enqueue(std::uint64_t track, const oa::LaunchRecord& r) {
    ProtoWriter e;
    e.add_uint(pf::kEventType, pf::kTypeInstant);
    e.add_uint(pf::kEventTrackUuid, track);
    e.add_string(pf::kEventCategories, oa::launch_api_family(r.launch.api));
    e.add_string(pf::kEventName, oa::launch_entry_point(r.launch.api));
    add_annotation(e, Field{"kernel", r.launch.kernel_name});
    add_annotation(e, Field{"launch", launch_ordinal(r)});
    write_event(r.launch.api_ns, e);
  }

  // The frequency, the iGPU power and every derived metric, as counters at the launch's start
  // (per launch; per sampling period in --mode app and --system-wide). A figure not measured
  // leaves its counter where it was.
  void write_counters(std::uint64_t ts, const std::vector<Field>& fields) {
    bool in_metrics = false;
    for (const Field& f : fields) {
      if (f.name == "device") in_metrics = false;
      const bool wanted = in_metrics || f.name == "avg_freq_mhz" || f.name == "igpu_power_w";
      if (f.name == "igpu_formula") in_metrics = true;
      if (!wanted) continue;
      double v = 0;
      if (const auto* u = std::get_if<std::uint64_t>(&f.value)) {
        v = static_cast<double>(*u);
      } else if (const auto* d = std::get_if<double>(&f.value)) {
        v = *d;
      } else {
        continue;
      }
      ProtoWriter e;
      e.add_uint(pf::kEventType, pf::kTypeCounter);
      e.add_uint(pf::kEventTrackUuid, counter_track(f.name));
      e.add_double(pf::kEventDoubleCounterValue, v);
      write_event(ts, e);
    }
  }

  std::ostream& out_;
  std::string proc_root_;
  RunInfo info_;
  bool first_packet_ = true;
  std::uint64_t next_uuid_ = 1;  // 0 is Perfetto's implicit global track
  std::uint64_t gpu_track_ = 0;
  std::uint64_t last_end_ = 0;
  std::map<std::uint32_t, std::uint64_t> processes_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> threads_;
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint64_t> queues_;
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::int64_t> offsets_;
  std::map<std::string, std::uint64_t> counters_;
};

}  // namespace

std::unique_ptr<Reporter> make_perfetto_trace_reporter(std::ostream& out, std::string proc_root) {
  return std::make_unique<PerfettoTraceReporter>(out, std::move(proc_root));
}

}  // namespace oaprof::report
