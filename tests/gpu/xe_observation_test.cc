// xe's OA observation uapi as oaprof drives it: the property chain against the kernel's walk,
// ADD_CONFIG with every register of IGT's LNL/BMG/PTL sets against xe's Xe2 lists, STREAM_OPEN's
// refusals (EBUSY for a second stream), and a stream's reports, losses (EIO, then STATUS) and
// overflow, on SimXeDevice, which answers as xe_oa.c does.
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "gpu/counter_source.h"
#include "gpu/device.h"
#include "gpu/sim/sim_xe_observation.h"
#include "gpu/xe/xe_observation.h"
#include "oa/delta.h"
#include "oa/metric_xml.h"
#include "oa/report.h"
#include "oa/report_format.h"

namespace oaprof::gpu {
namespace {

bool read_memory(std::uint64_t addr, void* out, std::size_t n) {
  if (addr == 0) return false;
  std::memcpy(out, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(addr)), n);
  return true;
}

constexpr const char* kUuid = "12f20772-0044-44ff-bcc0-d2bc252d140e";

xe::OaConfigParam config_param(const char* uuid, const std::vector<std::uint32_t>& regs) {
  xe::OaConfigParam c;
  std::memcpy(c.uuid, uuid, sizeof c.uuid);
  c.n_regs = static_cast<std::uint32_t>(regs.size() / 2);
  c.regs_ptr = reinterpret_cast<std::uintptr_t>(regs.data());
  return c;
}

class XeObservationTest : public ::testing::Test {
 protected:
  mmio::ManualClock clock_;
  SimXeDevice device_{oa::require_platform_by_name("lnl"), clock_};
  std::unique_ptr<XeObservation> xe_ = make_sim_xe_observation(device_);
  const std::vector<std::uint32_t> regs_ = {0x13000, 1, 0xdc40, 2, 0xe458, 3};

  int add_config() { return xe_->add_config(config_param(kUuid, regs_)); }
  int open(XeOaStreamParams p) {
    const XePropertyChain chain(p);
    return xe_->open_stream(chain.head());
  }
  XeOaStreamParams pec_params(std::uint64_t metric_set, int exponent = 10) {
    XeOaStreamParams p;
    p.metric_set = metric_set;
    p.oa_format = oa::to_xe_oa_format(oa::ReportFormat::kPec64u64, oa::Generation::kXe2);
    p.period_exponent = exponent;
    return p;
  }
  // 1 ms idle, 2 ms busy, 1 ms idle, then every report of `stream` (of `bytes` each).
  std::vector<std::vector<std::uint8_t>> reports_around_2ms_busy(int stream, int bytes,
                                                                 XeStreamCounts& counts) {
    clock_.advance_ns(1'000'000);
    device_.set_busy(true);
    clock_.advance_ns(2'000'000);
    device_.set_busy(false);
    clock_.advance_ns(1'000'000);
    std::vector<std::vector<std::uint8_t>> reports;
    drain_xe_stream(
        *xe_, stream, bytes, counts, 16u << 20,
        [](std::span<const std::uint8_t> r, void* ctx) {
          static_cast<std::vector<std::vector<std::uint8_t>>*>(ctx)->emplace_back(r.begin(),
                                                                                  r.end());
        },
        &reports);
    return reports;
  }
};

TEST(XeUapiTest, ObservationIoctlNumbersAreTheKernels) {
  // DRM_IOW(0x40 + 0x0b, struct drm_xe_observation_param): dir write, size 32, 'd', nr 0x4b.
  EXPECT_EQ(xe::kIoctlObservation, 0x4020644Bul);
  EXPECT_EQ(xe::kIoctlStreamEnable, 0x6900ul);  // _IO('i', 0)
  EXPECT_EQ(xe::kIoctlStreamStatus, 0x6903ul);  // _IO('i', 3)
}

TEST(XePropertyChainTest, TheKernelsWalkReadsBackWhatWasAsked) {
  XeOaStreamParams p;
  p.oa_unit_id = 3;
  p.metric_set = 42;
  p.oa_format = 0x10105;
  p.period_exponent = 12;
  p.disabled = true;
  const XePropertyChain chain(p);
  EXPECT_EQ(chain.size(), 6u);
  XeParsedOpen parsed;
  ASSERT_EQ(parse_xe_oa_properties(chain.head(), read_memory, parsed), 0);
  EXPECT_EQ(parsed.params.oa_unit_id, 3u);
  EXPECT_TRUE(parsed.params.sample);
  EXPECT_EQ(parsed.params.metric_set, 42u);
  EXPECT_EQ(parsed.params.oa_format, 0x10105u);
  EXPECT_EQ(parsed.params.period_exponent, 12);
  EXPECT_TRUE(parsed.params.disabled);
  EXPECT_TRUE(parsed.has_format);
  p.period_exponent = -1;
  p.disabled = false;
  EXPECT_EQ(XePropertyChain(p).size(), 4u);  // no exponent, not disabled: left out
}

TEST(XePropertyChainTest, TheWalkRefusesWhatXeRefuses) {
  auto parse_one = [](xe::ExtSetProperty ext) {
    XeParsedOpen out;
    return parse_xe_oa_properties(reinterpret_cast<std::uintptr_t>(&ext), read_memory, out);
  };
  xe::ExtSetProperty ok;
  ok.property = xe::kOaPropSampleOa;
  ok.value = 1;
  EXPECT_EQ(parse_one(ok), 0);
  xe::ExtSetProperty bad = ok;
  bad.pad = 1;
  EXPECT_EQ(parse_one(bad), -EINVAL);
  bad = ok;
  bad.base.pad = 1;
  EXPECT_EQ(parse_one(bad), -EINVAL);
  bad = ok;
  bad.base.name = 1;
  EXPECT_EQ(parse_one(bad), -EINVAL);
  bad = ok;
  bad.property = 0;
  EXPECT_EQ(parse_one(bad), -EINVAL);
  bad.property = xe::kOaPropWaitNumReports + 1;
  EXPECT_EQ(parse_one(bad), -EINVAL);
  bad = ok;
  bad.property = xe::kOaPropOaPeriodExponent;
  bad.value = 32;
  EXPECT_EQ(parse_one(bad), -EINVAL);
  // 17 links: MAX_USER_EXTENSIONS is 16.
  std::vector<xe::ExtSetProperty> links(17, ok);
  for (std::size_t i = 0; i + 1 < links.size(); ++i) {
    links[i].base.next_extension = reinterpret_cast<std::uintptr_t>(&links[i + 1]);
  }
  XeParsedOpen out;
  EXPECT_EQ(
      parse_xe_oa_properties(reinterpret_cast<std::uintptr_t>(links.data()), read_memory, out),
      -E2BIG);
  links[15].base.next_extension = 0;
  EXPECT_EQ(
      parse_xe_oa_properties(reinterpret_cast<std::uintptr_t>(links.data()), read_memory, out), 0);
  auto unreadable = [](std::uint64_t, void*, std::size_t) { return false; };
  EXPECT_EQ(parse_xe_oa_properties(0x1000, unreadable, out), -EFAULT);
}

// OA_BUFFER_SIZE (12) and WAIT_NUM_REPORTS (13) are xe properties since 6.14; the walk takes
// them with xe's own checks (xe_oa_set_prop_oa_buffer_size, xe_oa_set_prop_wait_num_reports).
TEST(XePropertyChainTest, TheWalkTakesBufferSizeAndWaitNumReportsAsXeChecksThem) {
  auto parse_one = [](std::uint32_t property, std::uint64_t value, XeParsedOpen& out) {
    xe::ExtSetProperty ext;
    ext.property = property;
    ext.value = value;
    return parse_xe_oa_properties(reinterpret_cast<std::uintptr_t>(&ext), read_memory, out);
  };
  XeParsedOpen out;
  for (const std::uint64_t bytes : {128ull << 10, 16ull << 20, 128ull << 20}) {
    EXPECT_EQ(parse_one(xe::kOaPropOaBufferSize, bytes, out), 0) << bytes;
    EXPECT_EQ(out.oa_buffer_bytes, bytes);
  }
  for (const std::uint64_t bytes : {0ull, 64ull << 10, 256ull << 20, (128ull << 10) + 64}) {
    EXPECT_EQ(parse_one(xe::kOaPropOaBufferSize, bytes, out), -EINVAL) << bytes;
  }
  EXPECT_EQ(parse_one(xe::kOaPropWaitNumReports, 1, out), 0);
  EXPECT_EQ(out.wait_num_reports, 1u);
  EXPECT_EQ(parse_one(xe::kOaPropWaitNumReports, 100, out), 0);
  EXPECT_EQ(out.wait_num_reports, 100u);
  EXPECT_EQ(parse_one(xe::kOaPropWaitNumReports, 0, out), -EINVAL);
}

TEST_F(XeObservationTest, AddConfigTakesEveryRegisterOfIgtsXe2SetsAndChecksTheRest) {
  for (const char* name : {"lnl", "bmg", "ptl"}) {
    const std::filesystem::path path =
        std::filesystem::path(OAPROF_IGT_XE_METRICS_DIR) / (std::string("oa-") + name + ".xml");
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    const oa::MetricFile file = oa::import_metrics_xml(text.str(), path.filename().string());
    for (const oa::MetricSet& set : file.sets) {
      SCOPED_TRACE(std::string(name) + " " + set.symbol());
      std::vector<std::uint32_t> regs;
      for (const oa::RegisterConfig& c : set.register_configs()) {
        for (const oa::RegisterWrite& w : c.writes) regs.insert(regs.end(), {w.address, w.value});
      }
      ASSERT_FALSE(regs.empty());
      const int id = xe_->add_config(config_param(set.guid().c_str(), regs));
      ASSERT_GT(id, 0) << std::strerror(-id);
      EXPECT_EQ(xe_->find_config_id(set.guid()), static_cast<std::uint64_t>(id));
      EXPECT_EQ(xe_->remove_config(static_cast<std::uint64_t>(id)), 0);
    }
  }
  EXPECT_EQ(add_config(), 1 + 14 * 3);  // ids keep counting up, from 1
  EXPECT_EQ(add_config(), -EADDRINUSE);
  EXPECT_EQ(xe_->add_config(config_param("not-a-uuid-at-all-not-a-uuid-at-all", regs_)), -EINVAL);
  // VISACTL, in xe2_oa_mux_regs since torvalds/linux c26f22dac344; 0xD0DC and 0xD0F8 are not.
  for (const std::uint32_t visactl : {0xd0e0u, 0xd0f4u}) {
    const std::vector<std::uint32_t> one = {visactl, 0};
    const int vid = xe_->add_config(config_param("00000000-0000-0000-0000-0000000000aa", one));
    EXPECT_GT(vid, 0) << std::hex << visactl;
    if (vid > 0) xe_->remove_config(static_cast<std::uint64_t>(vid));
  }
  for (const std::uint32_t beside : {0xd0dcu, 0xd0f8u}) {
    const std::vector<std::uint32_t> one = {beside, 0};
    EXPECT_EQ(xe_->add_config(config_param("00000000-0000-0000-0000-0000000000ab", one)), -EINVAL);
  }
  const std::vector<std::uint32_t> outside = {0x2000, 0};  // not in any of xe's Xe2 lists
  EXPECT_EQ(xe_->add_config(config_param("00000000-0000-0000-0000-000000000001", outside)),
            -EINVAL);
  EXPECT_EQ(xe_->add_config(config_param("00000000-0000-0000-0000-000000000002", {})), -EINVAL);
  EXPECT_EQ(xe_->remove_config(999), -ENOENT);
  device_.options().perfmon_capable = false;
  EXPECT_EQ(xe_->add_config(config_param("00000000-0000-0000-0000-000000000003", regs_)), -EACCES);
  device_.options().observation_paranoid = 0;
  EXPECT_GT(xe_->add_config(config_param("00000000-0000-0000-0000-000000000003", regs_)), 0);
}

TEST_F(XeObservationTest, StreamOpenRefusesWhatXeRefusesAndOneStreamHoldsTheUnit) {
  const int id = add_config();
  ASSERT_GT(id, 0);
  XeOaStreamParams p = pec_params(static_cast<std::uint64_t>(id));
  p.oa_format = 5u << 8;  // OAG A32u40 (select 5): no Xe2 format
  EXPECT_EQ(open(p), -EINVAL);
  p.oa_format = oa::to_xe_oa_format(oa::ReportFormat::kXe2Mpec8u32_B8_C8, oa::Generation::kXe2);
  EXPECT_EQ(open(p), -EINVAL);  // a media format on the render/compute unit
  p = pec_params(static_cast<std::uint64_t>(id));
  p.sample = false;
  EXPECT_EQ(open(p), -EINVAL);
  EXPECT_EQ(open(pec_params(77)), -EINVAL);  // no such metric set
  p = pec_params(static_cast<std::uint64_t>(id));
  p.oa_unit_id = 9;
  EXPECT_EQ(open(p), -EINVAL);
  device_.options().perfmon_capable = false;
  EXPECT_EQ(open(pec_params(static_cast<std::uint64_t>(id))), -EACCES);
  device_.options().perfmon_capable = true;
  const int stream = open(pec_params(static_cast<std::uint64_t>(id)));
  ASSERT_GE(stream, 0);
  EXPECT_EQ(open(pec_params(static_cast<std::uint64_t>(id))), -EBUSY);
  xe_->close_stream(stream);
  const int again = open(pec_params(static_cast<std::uint64_t>(id)));
  EXPECT_GE(again, 0);
  xe_->close_stream(again);
}

TEST_F(XeObservationTest, PeriodicPecReportsCountTheBusyTimeBetweenThem) {
  const int id = add_config();
  // exponent 10: (2 << 10) ticks at 19.2 MHz = 106.67 us.
  const int stream = open(pec_params(static_cast<std::uint64_t>(id), 10));
  ASSERT_GE(stream, 0);
  const auto units = xe_->oa_units();
  ASSERT_EQ(units.size(), 2u);
  ASSERT_NE(render_oag(units), nullptr);
  EXPECT_EQ(render_oag(units)->id, 0u);
  XeStreamCounts counts;
  const auto reports = reports_around_2ms_busy(stream, 576, counts);
  EXPECT_EQ(counts.reports, reports.size());
  EXPECT_EQ(reports.size(), 37u);  // 4 ms / 106.67 us
  EXPECT_FALSE(counts.lost_anything());
  const oa::Report first = oa::decode(oa::ReportFormat::kPec64u64, reports.front());
  const oa::Report last = oa::decode(oa::ReportFormat::kPec64u64, reports.back());
  const oa::CounterDeltas d = oa::compute_deltas(first, last);
  EXPECT_EQ(d.timestamp, 36u * 2048u);  // 36 periods of 2 << 10 ticks
  // 2 ms busy at LNL's nominal 2050 MHz: 4.1 M clocks; PEC i counts (i % 4 + 1) / 4 of them.
  EXPECT_EQ(d.a[3], 4'100'000u);
  EXPECT_EQ(d.a[0], 1'025'000u);
  // Nothing more until the next period.
  XeStreamCounts none;
  drain_xe_stream(*xe_, stream, 576, none);
  EXPECT_EQ(none.reports, 0u);
  xe_->close_stream(stream);
}

// The simulated unit writes each Xe2 format in its own layout (metrics-discovery's offsets,
// oa/report_format.cc): a 32-bit PEC format holds 32-bit counters, not PEC64u64's qwords cut
// short, and the B/C format puts its PECs where PEC64u64 has them.
TEST_F(XeObservationTest, EachDecodableXe2FormatIsWrittenInItsOwnLayout) {
  const int id = add_config();
  struct Case {
    oa::ReportFormat format;
    std::uint64_t xe_value;  // type | select << 8 | counter size << 16 | B/C << 24
  };
  for (const Case c :
       {Case{oa::ReportFormat::kPec64u32, 5u | 1u << 8},
        Case{oa::ReportFormat::kPec64u64_B8_C8, 5u | 1u << 8 | 1u << 16 | 1u << 24}}) {
    SCOPED_TRACE(oa::layout_of(c.format).name);
    XeOaStreamParams p = pec_params(static_cast<std::uint64_t>(id), 10);
    p.oa_format = c.xe_value;
    const int stream = open(p);
    ASSERT_GE(stream, 0);
    XeStreamCounts counts;
    const int bytes = oa::layout_of(c.format).size_bytes;
    const auto reports = reports_around_2ms_busy(stream, bytes, counts);
    ASSERT_GE(reports.size(), 2u);
    EXPECT_EQ(reports.front().size(), static_cast<std::size_t>(bytes));
    const oa::CounterDeltas d = oa::compute_deltas(oa::decode(c.format, reports.front()),
                                                   oa::decode(c.format, reports.back()));
    EXPECT_EQ(d.a[0], 1'025'000u);  // PEC i counts (i % 4 + 1) / 4 of 4.1 M busy clocks
    EXPECT_EQ(d.a[3], 4'100'000u);
    EXPECT_EQ(d.a[63], 4'100'000u);
    xe_->close_stream(stream);
  }
}

TEST_F(XeObservationTest, AnOverflowIsEioThenStatusAndTheNewestReportsRemain) {
  device_.options().oa_buffer_bytes = 10 * 576;
  const int stream = open(pec_params(static_cast<std::uint64_t>(add_config()), 10));
  ASSERT_GE(stream, 0);
  clock_.advance_ns(100'000'000);  // ~937 reports due, 10 fit
  XeStreamCounts counts;
  drain_xe_stream(*xe_, stream, 576, counts);
  EXPECT_EQ(counts.buffer_overflow, 1);
  EXPECT_EQ(counts.reports, 10u);
  const oa::Report newest = oa::decode(oa::ReportFormat::kPec64u64, counts.last_report);
  // The newest report is the last one due before 100 ms: 937 periods of 2048 ticks past the
  // counter's base.
  EXPECT_EQ(newest.timestamp - device_.options().timestamp_base_ticks, 937u * 2048u);
  device_.inject_status(xe::kOaStatusReportLost);
  XeStreamCounts lost;
  drain_xe_stream(*xe_, stream, 576, lost);
  EXPECT_EQ(lost.report_lost, 1);
  EXPECT_EQ(lost.buffer_overflow, 0);
  xe_->close_stream(stream);
}

TEST_F(XeObservationTest, ADisabledStreamReadsNothingUntilEnabled) {
  XeOaStreamParams p = pec_params(static_cast<std::uint64_t>(add_config()), 10);
  p.disabled = true;
  const int stream = open(p);
  ASSERT_GE(stream, 0);
  clock_.advance_ns(1'000'000);
  std::vector<std::uint8_t> buf(576 * 4);
  EXPECT_EQ(xe_->read_stream(stream, buf), -EINVAL);
  ASSERT_EQ(xe_->enable_stream(stream, true), 0);
  EXPECT_EQ(xe_->read_stream(stream, buf), -EAGAIN);  // no period has passed since ENABLE
  clock_.advance_ns(300'000);
  EXPECT_EQ(xe_->read_stream(stream, std::span(buf).first(100)), -ENOSPC);
  EXPECT_EQ(xe_->read_stream(stream, buf), 2 * 576);
  xe_->close_stream(stream);
}

// `--access perf` on a simulated Lunar Lake: the xe read-out adds the set, opens the stream on
// the render OAG, and each snapshot is a periodic report after it was asked for; a second
// read-out finds the unit taken (EBUSY) and says so; the built-in set is refused.
TEST(XeCounterSourceTest, SnapshotsArePeriodicReportsAroundTheKernel) {
  mmio::SimConfig config;
  config.platform = oa::require_platform_by_name("lnl");
  config.i915 = false;
  Device d = make_sim_device(std::make_unique<mmio::SteadyClock>(), config);
  // xe's default here, 2048 ticks (107 us). With 128 ticks (6.7 us) the simulator wrote reports
  // faster than a loaded sanitizer build drained them: the 16 MiB buffer overflowed on every
  // read, and the read-out rightly gave up on a stream that keeps failing with EIO.
  d.perf_period_exponent = 10;
  ASSERT_NE(d.sim_xe, nullptr);
  auto source = make_counter_source("perf", d);
  EXPECT_THROW(source->start(oa::ReportFormat::kPec64u64), std::invalid_argument);
  mmio::OaConfig set;
  set.guid = kUuid;
  set.mux = {{0x13000, 1}};
  set.boolean = {{0xdc40, 2}};
  source->start(oa::ReportFormat::kPec64u64, set);
  auto second = make_counter_source("perf", d);
  try {
    second->start(oa::ReportFormat::kPec64u64, set);
    FAIL() << "two streams on one OA unit";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("another process holds the OA unit"), std::string::npos)
        << e.what();
  }
  const oa::RawReport before = source->snapshot(0);
  source->kernel_running(true);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  source->kernel_running(false);
  const oa::RawReport after = source->snapshot(1);
  EXPECT_EQ(before.size, 576);
  const oa::CounterDeltas dl = oa::compute_deltas(
      oa::decode(oa::ReportFormat::kPec64u64, std::span(before.bytes).first(576)),
      oa::decode(oa::ReportFormat::kPec64u64, std::span(after.bytes).first(576)));
  // At least the 2 ms of busy time at the simulator's 1150 MHz: PEC 3 counts every busy clock.
  EXPECT_GE(dl.a[3], 2'300'000u);
  EXPECT_GT(dl.timestamp, 0u);
  EXPECT_GT(source->perf_stream_counts().samples, 0);
  source->stop();
  second->start(oa::ReportFormat::kPec64u64, set);  // the unit is free again
  second->stop();
}

std::uint64_t report_timestamp(const oa::RawReport& r) {
  return oa::read_timestamp_field(oa::layout_of(oa::ReportFormat::kPec64u64), r.bytes.data());
}

class XeSnapshotPlacementTest : public ::testing::Test {
 protected:
  // A simulated Lunar Lake whose xe makes reports readable every 5 ms, as xe's buffer poll does.
  XeSnapshotPlacementTest() {
    mmio::SimConfig config;
    config.platform = oa::require_platform_by_name("lnl");
    config.i915 = false;
    device_ =
        std::make_unique<Device>(make_sim_device(std::make_unique<mmio::SteadyClock>(), config));
    device_->perf_period_exponent = 10;  // 2048 ticks, 107 us
    device_->sim_xe->options().poll_ns = 5'000'000;
  }
  std::unique_ptr<CounterSource> started() {
    auto source = make_counter_source("perf", *device_);
    mmio::OaConfig set;
    set.guid = kUuid;
    set.mux = {{0x13000, 1}};
    source->start(oa::ReportFormat::kPec64u64, set);
    return source;
  }
  // The GPU's timestamp now, as the OA unit counts it (the engine's less the skew under test).
  std::uint64_t gpu_now() {
    xe::QueryEngineCycles q;
    q.eci = render_oag(device_->sim_xe->oa_units())->engines.front();
    q.clockid = CLOCK_MONOTONIC;
    EXPECT_EQ(device_->sim_xe->engine_cycles(q), 0);
    return q.engine_cycles -
           static_cast<std::uint64_t>(device_->sim_xe->options().engine_cycles_skew_ticks);
  }
  std::unique_ptr<Device> device_;
  static constexpr std::uint64_t kPeriodTicks = 2048;
};

// With the engine's timestamp, a snapshot is the first report written after it was asked for:
// never before the engine's timestamp at asking, and at most one period after it, however late
// xe's poll made it readable. (Waiting the poll out instead takes the newest report readable
// then, up to 5 ms later.)
TEST_F(XeSnapshotPlacementTest, ASnapshotIsTheFirstReportAtOrAfterTheEnginesTimestamp) {
  auto source = started();
  for (int i = 0; i < 3; ++i) {
    const oa::RawReport r = source->snapshot(0);
    const std::uint64_t asked = device_->sim_xe->last_engine_cycles().engine_cycles;
    const std::uint64_t ts = report_timestamp(r);
    EXPECT_GE(ts, asked);
    EXPECT_LE(ts - asked, kPeriodTicks);
  }
  EXPECT_EQ(source->perf_stream_counts().snapshots_waited, 0);
  EXPECT_EQ(snapshot_placement_warning(source->perf_stream_counts()), "");
}

// A part whose engine timestamp were not the OA unit's clock (ahead or behind by a minute's
// ticks): the placement sees it, and the snapshots wait out xe's poll instead; each is still a
// report written after it was asked for, and the run says how many were placed so.
TEST_F(XeSnapshotPlacementTest, AnEngineClockThatIsNotTheOaUnitsFallsBackToWaiting) {
  for (const std::int64_t skew : {std::int64_t{-1'152'000'000}, std::int64_t{1'152'000'000}}) {
    device_->sim_xe->options().engine_cycles_skew_ticks = skew;
    auto source = started();
    for (int i = 0; i < 2; ++i) {
      const std::uint64_t asked = gpu_now();
      const oa::RawReport r = source->snapshot(0);
      EXPECT_GE(report_timestamp(r), asked) << "skew " << skew;
    }
    EXPECT_EQ(source->perf_stream_counts().snapshots_waited, 2) << "skew " << skew;
    EXPECT_NE(snapshot_placement_warning(source->perf_stream_counts()).find("2 of the xe"),
              std::string::npos);
    source->stop();
  }
}

TEST(XeObservationDrmTest, AMissingRenderNodeIsAClearError) {
  try {
    make_drm_xe_observation("/nonexistent/renderD128", "/nonexistent/card0");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/renderD128"), std::string::npos);
  }
}

}  // namespace
}  // namespace oaprof::gpu
