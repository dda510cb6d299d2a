#include "ipc/wire.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

#include "oa/report_format.h"

namespace oaprof::ipc::wire {
namespace {

class Writer {
 public:
  template <typename T>
  void put(T value) {
    static_assert(std::is_integral_v<T>);
    std::uint8_t raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));  // little-endian host, as the format
    out_.insert(out_.end(), raw, raw + sizeof(T));
  }
  // A value that names something (a path, a set, a device) is refused when too long: cut, it
  // would name something else, such as another file for the daemon to open.
  void put_string16(const std::string& s, std::size_t limit, std::string_view field) {
    if (s.size() > limit) {
      throw std::length_error(fmt::format(
          "its {} is {} bytes, more than the {} the protocol carries (cut, it would name "
          "something else); use a shorter one",
          field, s.size(), limit));
    }
    put_bytes16(s);
  }
  // Prose for a person (reasons, labels) is shortened instead, visibly, so that a reply can
  // always be sent.
  void put_text16(const std::string& s, std::size_t limit) {
    if (s.size() <= limit) {
      put_bytes16(s);
      return;
    }
    constexpr std::string_view kCut = " [...]";
    std::size_t n = limit - kCut.size();
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // whole UTF-8
    put_bytes16(s.substr(0, n) + std::string(kCut));
  }
  std::vector<std::uint8_t>& bytes() { return out_; }

 private:
  void put_bytes16(const std::string& s) {
    put(static_cast<std::uint16_t>(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
  }

  std::vector<std::uint8_t> out_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> in) : in_(in) {}

  template <typename T>
  bool get(T& value) {
    if (in_.size() - pos_ < sizeof(T)) return false;
    std::memcpy(&value, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool get_string16(std::string& s, std::size_t limit) {
    std::uint16_t n = 0;
    return get(n) && n <= limit && get_bytes(s, n);
  }
  // `n` bytes whose length came before them.
  bool get_bytes(std::string& s, std::size_t n) {
    if (in_.size() - pos_ < n) return false;
    s.assign(reinterpret_cast<const char*>(in_.data() + pos_), n);
    pos_ += n;
    return true;
  }
  bool at_end() const { return pos_ == in_.size(); }

 private:
  std::span<const std::uint8_t> in_;
  std::size_t pos_ = 0;
};

Type type_of(const Body& body) {
  return std::visit(
      [](const auto& b) {
        using T = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<T, Hello>) return Type::kHello;
        if constexpr (std::is_same_v<T, Snapshot>) return Type::kSnapshot;
        if constexpr (std::is_same_v<T, Launch>) return Type::kLaunch;
        if constexpr (std::is_same_v<T, Ok>) return Type::kOk;
        if constexpr (std::is_same_v<T, Error>) return Type::kError;
        if constexpr (std::is_same_v<T, Open>) return Type::kOpen;
        if constexpr (std::is_same_v<T, Opened>) return Type::kOpened;
        if constexpr (std::is_same_v<T, Sample>) return Type::kSample;
        if constexpr (std::is_same_v<T, Sampled>) return Type::kSampled;
        if constexpr (std::is_same_v<T, Kernel>) return Type::kKernel;
        if constexpr (std::is_same_v<T, Close>) return Type::kClose;
        if constexpr (std::is_same_v<T, Summary>) return Type::kSummary;
        if constexpr (std::is_same_v<T, SwitchSet>) return Type::kSwitchSet;
        if constexpr (std::is_same_v<T, Selftest>) return Type::kSelftest;
        if constexpr (std::is_same_v<T, SelftestFetch>) return Type::kSelftestFetch;
        if constexpr (std::is_same_v<T, SelftestReport>) return Type::kSelftestReport;
      },
      body);
}

void put_payload(Writer& w, const Hello& h) {
  w.put(h.pid);
  w.put(h.flags);
}
void put_payload(Writer& w, const Snapshot& s) {
  w.put(s.launch_id);
  w.put(static_cast<std::uint8_t>(static_cast<std::uint8_t>(s.phase) |
                                  (s.energy_first ? kSnapshotEnergyFirst : 0)));
  if (!s.work) return;  // as from a layer that predates hints
  if (s.phase != Phase::kBefore) {
    throw std::invalid_argument("a work hint belongs to a 'before' snapshot only");
  }
  if (!sendable(*s.work)) {
    throw std::length_error(fmt::format(
        "a work hint's name is 1 to {} bytes and its size 1 to {} work-items; leave it out",
        kMaxWorkNameBytes, kMaxWorkItems));
  }
  w.put(s.work->global_size);
  w.put_string16(s.work->kernel_name, kMaxWorkNameBytes, "kernel name");
}
void put_payload(Writer& w, const Launch& l) {
  w.put(l.launch_id);
  w.put(l.work_dim);
  for (auto v : l.global) w.put(v);
  for (auto v : l.local) w.put(v);
  for (auto v : l.offset) w.put(v);
  w.put(l.queued_ns);
  w.put(l.submit_ns);
  w.put(l.start_ns);
  w.put(l.end_ns);
  w.put(static_cast<std::uint8_t>(l.profiled ? 1 : 0));
  w.put(l.queue);
  w.put(l.context);
  w.put(l.device);
  w.put(l.tid);
  w.put(l.api_ns);
  w.put(static_cast<std::uint8_t>(l.api));
  w.put(l.passes);
  w.put(l.restore_bytes);
  w.put(l.restore_ns);
  // The kernel name only labels the row, and the layer must never fail the program it is in
  // over a label: a longer one is shortened, visibly.
  w.put_text16(l.kernel_name, kMaxNameBytes);
  const std::uint32_t flags = l.sampled ? l.flags | kLaunchSampled : l.flags & ~kLaunchSampled;
  if (flags != 0) w.put(flags);  // absent means none, as from a layer that predates them
  if (l.sampled) {
    w.put(l.sampled->host_start_ns);
    w.put(l.sampled->host_end_ns);
    w.put(l.sampled->overlap_ppm);
    w.put(static_cast<std::uint8_t>(l.sampled->clock));
  }
}
void put_payload(Writer&, const Ok&) {}
void put_payload(Writer& w, const Error& e) {
  w.put(static_cast<std::uint32_t>(e.code));
  w.put_text16(e.message, kMaxMessageBytes - kHeaderBytes - 6);
}

void put_payload(Writer& w, const Open& o) {
  w.put(o.pid);
  w.put(o.flags);
  w.put_string16(o.device, kMaxTextBytes, "device");
  w.put_string16(o.access, kMaxTextBytes, "access");
  w.put_string16(o.format, kMaxTextBytes, "format");
  w.put_string16(o.metric_set, kMaxTextBytes, "metric set");
  w.put_string16(o.metrics_xml, kMaxTextBytes, "metrics XML path");
  w.put_string16(o.energy, kMaxTextBytes, "energy backend");
}

static_assert(kMaxReportBytes == static_cast<std::size_t>(oa::kMaxReportBytes),
              "the protocol carries the largest report any format has");

// Notes are prose for doctor and metadata; short enough that an Opened reply always fits.
constexpr std::size_t kMaxNoteBytes = 400;
// The optional counts after the facts (xe's queries): which of them follow.
constexpr std::uint8_t kFactL3Banks = 1;
constexpr std::uint8_t kFactComputeEngines = 2;
constexpr std::uint8_t kFactL3Nodes = 4;
constexpr std::uint8_t kFactCopyEngines = 8;
constexpr std::uint8_t kFactSqidis = 16;
constexpr std::uint8_t kFactAll =
    kFactL3Banks | kFactComputeEngines | kFactL3Nodes | kFactCopyEngines | kFactSqidis;

// Each count after the facts: its bit, where it lives, and the least a part can have (a part has
// L3 banks and nodes; it may have no compute engine: Tiger Lake's OAG counts rcs0 alone).
struct FactCount {
  std::uint8_t bit;
  std::optional<std::uint64_t> oa::DeviceFacts::*field;
  std::uint64_t least;
};
constexpr FactCount kFactCounts[] = {
    {kFactL3Banks, &oa::DeviceFacts::l3_banks, 1},
    {kFactComputeEngines, &oa::DeviceFacts::compute_engines, 0},
    {kFactL3Nodes, &oa::DeviceFacts::l3_nodes, 1},
    {kFactCopyEngines, &oa::DeviceFacts::copy_engines, 1},
    {kFactSqidis, &oa::DeviceFacts::sqidis, 1},
};
// No part has more L3 banks or compute engines than this; a larger count is a corrupt message.
constexpr std::uint64_t kMaxFactCount = 4096;

void put_facts(Writer& w, const oa::DeviceFacts& f) {
  const oa::Topology& t = f.topology;
  w.put(static_cast<std::uint8_t>(f.topology_source));
  for (int v : {t.max_slices, t.max_subslices, t.max_eus_per_subslice}) {
    w.put(static_cast<std::uint16_t>(v));
  }
  w.put(t.slice_mask);
  w.put(t.subslice_mask);
  for (int v : {t.slices, t.subslices, t.eus}) w.put(static_cast<std::uint16_t>(v));
  w.put_text16(f.topology_note, kMaxNoteBytes);
  w.put(static_cast<std::uint64_t>(f.timestamp_hz));
  w.put(static_cast<std::uint8_t>(f.timestamp_source));
  w.put_text16(f.timestamp_note, kMaxNoteBytes);
  std::uint8_t which = 0;
  for (const FactCount& c : kFactCounts) {
    if (f.*c.field) which = static_cast<std::uint8_t>(which | c.bit);
  }
  if (which == 0) return;  // an i915 part: nothing a client that predates the counts would miss
  w.put(which);
  for (const FactCount& c : kFactCounts) {
    if (f.*c.field) w.put(*(f.*c.field));
  }
}

// The device byte of an Opened: what the daemon serves.
constexpr std::uint8_t kOpenedSimulated = 1;
constexpr std::uint8_t kOpenedXe = 2;

void put_payload(Writer& w, const Opened& o) {
  w.put_text16(o.label, kMaxTextBytes);
  w.put_text16(o.detail, kMaxTextBytes);
  w.put(o.pci_id);
  w.put(static_cast<std::uint8_t>((o.simulated ? kOpenedSimulated : 0) | (o.xe ? kOpenedXe : 0)));
  w.put_string16(o.format, kMaxTextBytes, "format");
  w.put_string16(o.metric_set, kMaxTextBytes, "metric set");
  w.put_string16(o.metrics_file, kMaxTextBytes, "metrics file path");
  w.put_string16(o.energy_backend, kMaxTextBytes, "energy backend");
  const std::size_t n = std::min(o.energy_domains.size(), kMaxEnergyDomains);
  w.put(static_cast<std::uint8_t>(n));
  for (std::size_t i = 0; i < n; ++i) w.put(o.energy_domains[i]);
  w.put_text16(o.energy_reason, kMaxTextBytes);
  put_facts(w, o.facts);
}
void put_payload(Writer& w, const Sample& s) {
  w.put(s.report_id);
  w.put(s.what);
}
void put_payload(Writer& w, const Sampled& s) {
  w.put(static_cast<std::uint8_t>((s.report ? kSampleReport : 0) | (s.energy ? kSampleEnergy : 0) |
                                  (s.config_lost ? kSampledConfigLost : 0) |
                                  (s.stream_losses ? kSampledStreamLosses : 0) |
                                  (s.readout_interrupted ? kSampledReadoutInterrupted : 0)));
  if (s.report) {
    const std::size_t n = std::min(s.report->size(), kMaxReportBytes);
    w.put(static_cast<std::uint16_t>(n));
    w.bytes().insert(w.bytes().end(), s.report->begin(),
                     s.report->begin() + static_cast<std::ptrdiff_t>(n));
  }
  if (s.energy) {
    w.put(s.energy->time_ns);
    const std::size_t n = std::min(s.energy->energy_uj.size(), kMaxEnergyDomains);
    w.put(static_cast<std::uint8_t>(n));
    for (std::size_t i = 0; i < n; ++i) {
      w.put(s.energy->energy_uj[i].first);
      w.put(s.energy->energy_uj[i].second);
    }
  }
  if (s.stream_losses) {
    w.put(s.stream_losses->reports_lost);
    w.put(s.stream_losses->buffer_lost);
  }
}
// oa::KernelWork's figures in their wire order.
constexpr double oa::KernelWork::*kWorkFields[] = {
    &oa::KernelWork::work_items,      &oa::KernelWork::fp32_ops,
    &oa::KernelWork::fp64_ops,        &oa::KernelWork::int_ops,
    &oa::KernelWork::flops,           &oa::KernelWork::global_bytes,
    &oa::KernelWork::footprint_bytes, &oa::KernelWork::global_accesses,
    &oa::KernelWork::slm_bytes,
};
static_assert(sizeof(oa::KernelWork) ==
                  sizeof(kWorkFields) / sizeof(kWorkFields[0]) * sizeof(double),
              "every figure of oa::KernelWork goes on the wire");

// A figure as the wire carries it: whole, within kMaxWorkCount (NaN and negatives are none).
std::uint64_t work_count(double value) {
  if (!(value > 0)) return 0;
  if (value >= static_cast<double>(kMaxWorkCount)) return kMaxWorkCount;
  return static_cast<std::uint64_t>(std::llround(value));
}

void put_payload(Writer& w, const Kernel& k) {
  w.put(static_cast<std::uint8_t>(k.running ? 1 : 0));
  if (!k.work) return;  // as from a client that predates the work
  if (!k.running) throw std::invalid_argument("a kernel's work goes with its start only");
  for (auto field : kWorkFields) w.put(work_count((*k.work).*field));
}
void put_payload(Writer&, const Close&) {}
void put_payload(Writer& w, const SwitchSet& s) {
  w.put_string16(s.metric_set, kMaxTextBytes, "metric set");
}
void put_payload(Writer& w, const Summary& s) {
  const std::size_t n = std::min(s.kernels.size(), kMaxSummaryKernels);
  w.put(static_cast<std::uint8_t>(n));
  for (std::size_t i = 0; i < n; ++i) {
    const KernelSummary& k = s.kernels[i];
    w.put_text16(k.kernel, kMaxSummaryName);
    w.put(k.launches);
    w.put(k.gpu_ns);
    w.put(k.energy_uj);
  }
  if (s.share_names) w.put(kSummaryShareNames);
}

void put_payload(Writer& w, const Selftest& s) {
  w.put(static_cast<std::uint8_t>(s.quick ? kSelftestQuick : 0));
  w.put_string16(s.device, kMaxTextBytes, "device");
  w.put_string16(s.access, kMaxTextBytes, "access");
}
void put_payload(Writer& w, const SelftestFetch& f) { w.put(f.offset); }
void put_payload(Writer& w, const SelftestReport& r) {
  if (r.chunk.size() > kMaxSelftestChunkBytes || r.total > kMaxSelftestReportBytes) {
    throw std::length_error(
        fmt::format("a selftest report travels in chunks of at most {} bytes of at most {} in all",
                    kMaxSelftestChunkBytes, kMaxSelftestReportBytes));
  }
  w.put(static_cast<std::uint8_t>(r.done ? 1 : 0));
  w.put_text16(r.check, kMaxTextBytes);
  w.put(r.total);
  w.put(static_cast<std::uint16_t>(r.chunk.size()));
  w.bytes().insert(w.bytes().end(), r.chunk.begin(), r.chunk.end());
}

bool get_payload(Reader& r, Hello& h) { return r.get(h.pid) && r.get(h.flags); }
bool get_payload(Reader& r, Snapshot& s) {
  std::uint8_t phase = 0;
  if (!r.get(s.launch_id) || !r.get(phase)) return false;
  s.energy_first = (phase & kSnapshotEnergyFirst) != 0;
  phase &= static_cast<std::uint8_t>(~kSnapshotEnergyFirst);
  if (phase > 1) return false;
  s.phase = static_cast<Phase>(phase);
  if (r.at_end()) return true;  // no hint: a real device, or a layer that predates hints
  WorkHint hint;
  if (s.phase != Phase::kBefore || !r.get(hint.global_size) ||
      !r.get_string16(hint.kernel_name, kMaxWorkNameBytes) || !sendable(hint)) {
    return false;
  }
  s.work = std::move(hint);
  return true;
}
bool get_sampled_window(Reader& r, Launch& l) {
  SampledWindow w;
  std::uint8_t clock = 0;
  if (!r.get(w.host_start_ns) || !r.get(w.host_end_ns) || !r.get(w.overlap_ppm) || !r.get(clock)) {
    return false;
  }
  if (w.host_end_ns < w.host_start_ns || w.overlap_ppm > 1'000'000 || clock > 1) return false;
  w.clock = static_cast<ClockCalibration>(clock);
  l.sampled = w;
  return true;
}
bool get_payload(Reader& r, Launch& l) {
  std::uint8_t profiled = 0, api = 0;
  bool ok = r.get(l.launch_id) && r.get(l.work_dim);
  for (auto& v : l.global) ok = ok && r.get(v);
  for (auto& v : l.local) ok = ok && r.get(v);
  for (auto& v : l.offset) ok = ok && r.get(v);
  ok = ok && r.get(l.queued_ns) && r.get(l.submit_ns) && r.get(l.start_ns) && r.get(l.end_ns) &&
       r.get(profiled) && profiled <= 1 && r.get(l.queue) && r.get(l.context) && r.get(l.device) &&
       r.get(l.tid) && r.get(l.api_ns) && r.get(api) && api <= oa::kMaxLaunchApi &&
       r.get(l.passes) && r.get(l.restore_bytes) && r.get(l.restore_ns) &&
       r.get_string16(l.kernel_name, kMaxNameBytes);
  if (ok && !r.at_end()) ok = r.get(l.flags) && (l.flags & ~kLaunchKnownFlags) == 0;
  if (ok && (l.flags & kLaunchSampled) != 0) ok = get_sampled_window(r, l);
  l.profiled = profiled == 1;
  l.api = static_cast<LaunchApi>(api);
  return ok && l.work_dim >= 1 && l.work_dim <= 3 && l.passes >= 1;
}
bool get_payload(Reader&, Ok&) { return true; }
bool get_payload(Reader& r, Error& e) {
  std::uint32_t code = 0;
  if (!r.get(code)) return false;
  e.code = static_cast<ErrorCode>(code);
  return r.get_string16(e.message, kMaxMessageBytes);
}

bool get_payload(Reader& r, Open& o) {
  bool ok = r.get(o.pid) && r.get(o.flags);
  for (std::string* s :
       {&o.device, &o.access, &o.format, &o.metric_set, &o.metrics_xml, &o.energy}) {
    ok = ok && r.get_string16(*s, kMaxTextBytes);
  }
  return ok;
}
// The optional counts after the facts, when any follow: the facts end an Opened, so anything
// left is theirs.
bool get_fact_counts(Reader& r, oa::DeviceFacts& f) {
  if (r.at_end()) return true;
  std::uint8_t which = 0;
  if (!r.get(which) || which == 0 || (which & ~kFactAll) != 0) return false;
  for (const FactCount& c : kFactCounts) {
    if ((which & c.bit) == 0) continue;
    std::uint64_t v = 0;
    if (!r.get(v) || v < c.least || v > kMaxFactCount) return false;
    f.*c.field = v;
  }
  return true;
}

// Counts that agree with their masks, known sources, a timestamp frequency below 10 GHz.
bool get_facts(Reader& r, oa::DeviceFacts& f) {
  std::uint8_t topology_source = 0, timestamp_source = 0;
  std::uint16_t v[6] = {};
  std::uint64_t hz = 0;
  oa::Topology& t = f.topology;
  bool ok = r.get(topology_source) && r.get(v[0]) && r.get(v[1]) && r.get(v[2]) &&
            r.get(t.slice_mask) && r.get(t.subslice_mask) && r.get(v[3]) && r.get(v[4]) &&
            r.get(v[5]) && r.get_string16(f.topology_note, kMaxNoteBytes) && r.get(hz) &&
            r.get(timestamp_source) && r.get_string16(f.timestamp_note, kMaxNoteBytes);
  ok = ok && topology_source <= static_cast<std::uint8_t>(oa::TopologySource::kXeQuery) &&
       timestamp_source <= static_cast<std::uint8_t>(oa::TimestampSource::kXeOaUnit) &&
       std::popcount(t.slice_mask) == v[3] && std::popcount(t.subslice_mask) == v[4] &&
       v[5] <= 64 * 32 && hz < 10'000'000'000u;
  t.max_slices = v[0];
  t.max_subslices = v[1];
  t.max_eus_per_subslice = v[2];
  t.slices = v[3];
  t.subslices = v[4];
  t.eus = v[5];
  f.topology_source = static_cast<oa::TopologySource>(topology_source);
  f.timestamp_source = static_cast<oa::TimestampSource>(timestamp_source);
  f.timestamp_hz = static_cast<double>(hz);
  return ok && get_fact_counts(r, f);
}

bool get_payload(Reader& r, Opened& o) {
  std::uint8_t device = 0, n = 0;
  bool ok = r.get_string16(o.label, kMaxTextBytes) && r.get_string16(o.detail, kMaxTextBytes) &&
            r.get(o.pci_id) && r.get(device) && (device & ~(kOpenedSimulated | kOpenedXe)) == 0;
  for (std::string* s : {&o.format, &o.metric_set, &o.metrics_file, &o.energy_backend}) {
    ok = ok && r.get_string16(*s, kMaxTextBytes);
  }
  ok = ok && r.get(n) && n <= kMaxEnergyDomains;
  o.energy_domains.assign(ok ? n : 0, 0);
  for (auto& d : o.energy_domains) ok = ok && r.get(d);
  o.simulated = (device & kOpenedSimulated) != 0;
  o.xe = (device & kOpenedXe) != 0;
  return ok && r.get_string16(o.energy_reason, kMaxTextBytes) && get_facts(r, o.facts);
}
bool get_payload(Reader& r, Sample& s) {
  return r.get(s.report_id) && r.get(s.what) && s.what != 0 &&
         (s.what & ~(kSampleReport | kSampleEnergy)) == 0;
}
bool get_payload(Reader& r, Sampled& s) {
  std::uint8_t flags = 0;
  constexpr unsigned kKnown = kSampleReport | kSampleEnergy | kSampledConfigLost |
                              kSampledStreamLosses | kSampledReadoutInterrupted;
  if (!r.get(flags) || (flags & ~kKnown) != 0) return false;
  s.config_lost = (flags & kSampledConfigLost) != 0;
  s.readout_interrupted = (flags & kSampledReadoutInterrupted) != 0;
  if (flags & kSampleReport) {
    std::uint16_t n = 0;
    if (!r.get(n) || n > kMaxReportBytes) return false;
    std::vector<std::uint8_t> bytes(n);
    for (auto& b : bytes) {
      if (!r.get(b)) return false;
    }
    s.report = std::move(bytes);
  }
  if (flags & kSampleEnergy) {
    EnergyValues e;
    std::uint8_t n = 0;
    if (!r.get(e.time_ns) || !r.get(n) || n > kMaxEnergyDomains) return false;
    e.energy_uj.resize(n);
    for (auto& [domain, uj] : e.energy_uj) {
      if (!r.get(domain) || !r.get(uj)) return false;
    }
    s.energy = std::move(e);
  }
  if (flags & kSampledStreamLosses) {
    StreamLosses losses;
    if (!r.get(losses.reports_lost) || !r.get(losses.buffer_lost)) return false;
    s.stream_losses = losses;
  }
  return true;
}
bool get_payload(Reader& r, Kernel& k) {
  std::uint8_t running = 0;
  if (!r.get(running) || running > 1) return false;
  k.running = running == 1;
  if (r.at_end()) return true;  // no work: unknown, or a client that predates it
  if (!k.running) return false;
  oa::KernelWork work;
  for (auto field : kWorkFields) {
    std::uint64_t v = 0;
    if (!r.get(v) || v > kMaxWorkCount) return false;
    work.*field = static_cast<double>(v);
  }
  k.work = work;
  return true;
}
bool get_payload(Reader&, Close&) { return true; }
bool get_payload(Reader& r, SwitchSet& s) { return r.get_string16(s.metric_set, kMaxTextBytes); }
bool get_payload(Reader& r, Summary& s) {
  std::uint8_t n = 0;
  if (!r.get(n) || n > kMaxSummaryKernels) return false;
  s.kernels.resize(n);
  for (KernelSummary& k : s.kernels) {
    if (!r.get_string16(k.kernel, kMaxSummaryName) || !r.get(k.launches) || !r.get(k.gpu_ns) ||
        !r.get(k.energy_uj)) {
      return false;
    }
  }
  if (r.at_end()) return true;  // a client that shares no names, or predates the flags
  std::uint8_t flags = 0;
  // Written only when a flag is set: a zero byte would be a second encoding of the same summary.
  if (!r.get(flags) || flags == 0 || (flags & ~kSummaryShareNames) != 0) return false;
  s.share_names = (flags & kSummaryShareNames) != 0;
  return true;
}

bool get_payload(Reader& r, Selftest& s) {
  std::uint8_t flags = 0;
  if (!r.get(flags) || (flags & ~kSelftestQuick) != 0) return false;
  s.quick = (flags & kSelftestQuick) != 0;
  return r.get_string16(s.device, kMaxTextBytes) && r.get_string16(s.access, kMaxTextBytes);
}
bool get_payload(Reader& r, SelftestFetch& f) { return r.get(f.offset); }
// Running: no bytes yet. Done: a chunk within its bound and the report's.
bool get_payload(Reader& r, SelftestReport& s) {
  std::uint8_t done = 0;
  std::uint16_t n = 0;
  if (!r.get(done) || done > 1 || !r.get_string16(s.check, kMaxTextBytes) || !r.get(s.total) ||
      !r.get(n) || n > kMaxSelftestChunkBytes || s.total > kMaxSelftestReportBytes || n > s.total) {
    return false;
  }
  s.done = done == 1;
  if (!s.done && (s.total != 0 || n != 0)) return false;
  return r.get_bytes(s.chunk, n);
}

template <typename T>
std::variant<Message, DecodeError> decode_body(Reader& r, std::uint32_t id, std::string_view what) {
  T body;
  if (!get_payload(r, body) || !r.at_end()) {
    return DecodeError{ErrorCode::kBadMessage, id, fmt::format("malformed {} payload", what)};
  }
  return Message{id, body};
}

}  // namespace

bool sendable(const WorkHint& hint) {
  return !hint.kernel_name.empty() && hint.kernel_name.size() <= kMaxWorkNameBytes &&
         hint.global_size >= 1 && hint.global_size <= kMaxWorkItems;
}

std::vector<std::uint8_t> encode(const Message& message) {
  Writer payload;
  std::visit([&](const auto& b) { put_payload(payload, b); }, message.body);
  Writer w;
  w.put(kMagic);
  w.put(kVersion);
  w.put(static_cast<std::uint16_t>(type_of(message.body)));
  w.put(message.request_id);
  w.put(static_cast<std::uint32_t>(payload.bytes().size()));
  auto out = std::move(w.bytes());
  out.insert(out.end(), payload.bytes().begin(), payload.bytes().end());
  return out;
}

std::variant<Message, DecodeError> decode(std::span<const std::uint8_t> bytes) {
  if (bytes.size() > kMaxMessageBytes) {
    return DecodeError{ErrorCode::kBadMessage, 0,
                       fmt::format("message of {} bytes exceeds the {}-byte limit", bytes.size(),
                                   kMaxMessageBytes)};
  }
  Reader header(bytes);
  std::uint32_t magic = 0, id = 0, len = 0;
  std::uint16_t version = 0, type = 0;
  if (!header.get(magic) || !header.get(version) || !header.get(type) || !header.get(id) ||
      !header.get(len)) {
    return DecodeError{
        ErrorCode::kBadMessage, 0,
        fmt::format("truncated header ({} of {} bytes)", bytes.size(), kHeaderBytes)};
  }
  if (magic != kMagic) {
    return DecodeError{ErrorCode::kBadMessage, 0, fmt::format("bad magic 0x{:08x}", magic)};
  }
  if (version != kVersion) {
    return DecodeError{
        ErrorCode::kUnsupportedVersion, id,
        fmt::format("protocol version {} not supported (this side speaks {})", version, kVersion)};
  }
  if (len != bytes.size() - kHeaderBytes) {
    return DecodeError{ErrorCode::kBadMessage, id,
                       fmt::format("payload length {} but {} bytes follow the header", len,
                                   bytes.size() - kHeaderBytes)};
  }
  Reader r(bytes.subspan(kHeaderBytes));
  switch (static_cast<Type>(type)) {
    case Type::kHello:
      return decode_body<Hello>(r, id, "hello");
    case Type::kSnapshot:
      return decode_body<Snapshot>(r, id, "snapshot");
    case Type::kLaunch:
      return decode_body<Launch>(r, id, "launch");
    case Type::kOk:
      return decode_body<Ok>(r, id, "ok");
    case Type::kError:
      return decode_body<Error>(r, id, "error");
    case Type::kOpen:
      return decode_body<Open>(r, id, "open");
    case Type::kOpened:
      return decode_body<Opened>(r, id, "opened");
    case Type::kSample:
      return decode_body<Sample>(r, id, "sample");
    case Type::kSampled:
      return decode_body<Sampled>(r, id, "sampled");
    case Type::kKernel:
      return decode_body<Kernel>(r, id, "kernel");
    case Type::kClose:
      return decode_body<Close>(r, id, "close");
    case Type::kSummary:
      return decode_body<Summary>(r, id, "summary");
    case Type::kSwitchSet:
      return decode_body<SwitchSet>(r, id, "switch set");
    case Type::kSelftest:
      return decode_body<Selftest>(r, id, "selftest");
    case Type::kSelftestFetch:
      return decode_body<SelftestFetch>(r, id, "selftest fetch");
    case Type::kSelftestReport:
      return decode_body<SelftestReport>(r, id, "selftest report");
  }
  return DecodeError{ErrorCode::kUnknownType, id, fmt::format("unknown message type {}", type)};
}

}  // namespace oaprof::ipc::wire
