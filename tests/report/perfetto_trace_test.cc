#include <gtest/gtest.h>

#include <bit>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "report/perfetto_fields.h"
#include "report/reporter.h"
#include "tests/report/proto_decode.h"

namespace oaprof::report {
namespace {

namespace pf = perfetto;
using oaprof::testing::decode_proto;
using oaprof::testing::find_field;
using oaprof::testing::ProtoField;

RunInfo trace_info() {
  RunInfo i;
  i.device = "simulated";
  i.device_detail = "simulated KBL GT2";
  i.timestamp_hz = 12e6;
  i.command = {"app"};
  return i;
}

RowEnergy trace_no_energy() {
  RowEnergy e;
  e.window = power::unavailable_energy_window("no RAPL in this test");
  return e;
}

oa::LaunchRecord launch(std::uint64_t index, std::uint64_t api, std::uint64_t queued,
                        std::uint64_t start, std::uint64_t end) {
  oa::LaunchRecord r;
  r.index = index;
  r.pid = 4242;
  r.launch.tid = 4243;
  r.launch.kernel_name = "k" + std::to_string(index);
  r.launch.work_dim = 1;
  r.launch.global = {64, 0, 0};
  r.launch.queue = 0x1000;
  r.launch.device = 0x2000;
  r.launch.profiled = true;
  r.launch.api_ns = api;
  r.launch.queued_ns = queued;
  r.launch.start_ns = start;
  r.launch.end_ns = end;
  return r;
}

// Every TracePacket of a trace, each decoded into its fields.
std::vector<std::vector<ProtoField>> packets(const std::string& trace) {
  std::vector<std::vector<ProtoField>> out;
  const auto top = decode_proto(trace);
  EXPECT_TRUE(top.has_value()) << "not a whole sequence of packets";
  if (!top) return out;
  for (const auto& f : *top) {
    EXPECT_EQ(f.number, pf::kTracePacket);
    auto p = decode_proto(f.bytes);
    EXPECT_TRUE(p.has_value());
    if (p) out.push_back(*p);
  }
  return out;
}

struct Slice {
  std::uint64_t ts;
  std::uint64_t type;
  std::string name;
  std::map<std::string, std::string> annotations;  // as text
};

std::vector<Slice> slice_events(const std::string& trace) {
  std::vector<Slice> out;
  for (const auto& p : packets(trace)) {
    const ProtoField* ev = find_field(p, pf::kPacketTrackEvent);
    if (!ev) continue;
    const auto e = decode_proto(ev->bytes).value();
    const std::uint64_t type = find_field(e, pf::kEventType)->value;
    if (type != pf::kTypeSliceBegin && type != pf::kTypeSliceEnd) continue;
    Slice s{find_field(p, pf::kPacketTimestamp)->value, type, "", {}};
    if (const auto* n = find_field(e, pf::kEventName)) s.name = n->bytes;
    for (const auto& f : e) {
      if (f.number != pf::kEventDebugAnnotations) continue;
      const auto a = decode_proto(f.bytes).value();
      const std::string name = find_field(a, pf::kAnnotationName)->bytes;
      if (const auto* u = find_field(a, pf::kAnnotationUintValue))
        s.annotations[name] = std::to_string(u->value);
      if (const auto* st = find_field(a, pf::kAnnotationStringValue))
        s.annotations[name] = st->bytes;
    }
    out.push_back(std::move(s));
  }
  return out;
}

TEST(PerfettoTraceTest, EveryRowLeavesWholePackets) {
  std::ostringstream out;
  auto r = make_perfetto_trace_reporter(out, "/nonexistent");
  r->begin(trace_info());
  EXPECT_FALSE(packets(out.str()).empty());
  for (std::uint64_t i = 0; i < 3; ++i) {
    r->add(launch(i, 1000 + 1000 * i, 500 + 1000 * i, 600 + 1000 * i, 900 + 1000 * i),
           trace_no_energy());
    r->flush();
    const std::string now = out.str();
    ASSERT_TRUE(decode_proto(now).has_value()) << "after row " << i;
    // A crash in the middle of the next row's write leaves a prefix: not whole, but every packet
    // before the cut still decodes (what Perfetto reads of a truncated trace).
    ASSERT_FALSE(decode_proto(now.substr(0, now.size() - 1)).has_value());
  }
}

TEST(PerfettoTraceTest, SlicesSitOnTheHostClockByTheFirstOffset) {
  std::ostringstream out;
  auto r = make_perfetto_trace_reporter(out, "/nonexistent");
  r->begin(trace_info());
  // Offset host - device = 1000 - 500 = 500 from the first launch of the process and device.
  r->add(launch(0, 1000, 500, 600, 900), trace_no_energy());
  // The second launch's own offset differs (2000 - 1600 = 400); the first one is kept, so the two
  // GPU intervals keep their spacing on the GPU's clock.
  r->add(launch(1, 2000, 1600, 1700, 2000), trace_no_energy());
  const auto s = slice_events(out.str());
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].type, pf::kTypeSliceBegin);
  EXPECT_EQ(s[0].ts, 1100u);
  EXPECT_EQ(s[1].type, pf::kTypeSliceEnd);
  EXPECT_EQ(s[1].ts, 1400u);
  EXPECT_EQ(s[2].ts, 2200u);
  EXPECT_EQ(s[3].ts, 2500u);
  EXPECT_EQ(s[0].name, "k0");
  EXPECT_EQ(s[2].annotations.at("launch"), "1");
  EXPECT_EQ(s[2].annotations.at("global_size"), "64");
  EXPECT_EQ(s[2].annotations.count("local_size"), 0u) << "not measured: no annotation";
}

// Issue 17: a sampled launch's window is on the host's clock already (the layer mapped it), and
// its slice is that window, whatever its OpenCL times.
TEST(PerfettoTraceTest, ASampledLaunchIsSlicedAtItsHostWindow) {
  std::ostringstream out;
  auto r = make_perfetto_trace_reporter(out, "/nonexistent");
  r->begin(trace_info());
  oa::LaunchRecord sampled = launch(0, 1000, 0, 600, 900);
  sampled.launch.sampled = oa::SampledWindow{5000, 5300, 0, oa::ClockCalibration::kMarker};
  r->add(sampled, trace_no_energy());
  const auto s = slice_events(out.str());
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].ts, 5000u);
  EXPECT_EQ(s[1].ts, 5300u);
}

TEST(PerfettoTraceTest, ThreadsAreNamedFromProc) {
  const auto root = std::filesystem::path(::testing::TempDir()) / "perfetto-proc";
  std::filesystem::create_directories(root / "4242/task/4243");
  std::ofstream(root / "4242/comm") << "myapp\n";
  std::ofstream(root / "4242/task/4243/comm") << "worker-7\n";
  std::ostringstream out;
  auto r = make_perfetto_trace_reporter(out, root.string());
  r->begin(trace_info());
  r->add(launch(0, 1000, 500, 600, 900), trace_no_energy());
  std::string thread_name, process_name;
  for (const auto& p : packets(out.str())) {
    const ProtoField* td = find_field(p, pf::kPacketTrackDescriptor);
    if (!td) continue;
    const auto t = decode_proto(td->bytes).value();
    if (const auto* th = find_field(t, pf::kTrackThread)) {
      const auto d = decode_proto(th->bytes).value();
      thread_name = find_field(d, pf::kThreadName)->bytes;
      EXPECT_EQ(find_field(d, pf::kThreadTid)->value, 4243u);
    }
    if (const auto* pr = find_field(t, pf::kTrackProcess)) {
      process_name = find_field(decode_proto(pr->bytes).value(), pf::kProcessName)->bytes;
    }
  }
  EXPECT_EQ(thread_name, "worker-7");
  EXPECT_EQ(process_name, "myapp");
}

TEST(PerfettoTraceTest, SampledRowsGoOnTheGpuTrackFromTheirStart) {
  std::ostringstream out;
  auto r = make_perfetto_trace_reporter(out, "/nonexistent");
  r->begin(trace_info());
  oa::LaunchRecord row;
  row.launch.kernel_name = "(system)";
  row.launch.api_ns = 5000;    // the sampled row's start, CLOCK_MONOTONIC
  row.deltas.timestamp = 120;  // 120 ticks at 12 MHz: 10 µs
  r->add(row, trace_no_energy());
  const auto s = slice_events(out.str());
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].ts, 5000u);
  EXPECT_EQ(s[1].ts, 15000u);
}

}  // namespace
}  // namespace oaprof::report
