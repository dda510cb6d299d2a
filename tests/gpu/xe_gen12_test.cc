// Tiger Lake and Meteor Lake bound to xe (xe.force_probe): xe's observation uapi as xe_oa.c @
// torvalds/linux 0755a4e3e809 answers it on Gen12 and Xe-LPG (the part's own register lists and
// OAG formats, one OAG unit with rcs0 alone on Tiger Lake, a 36-bit ENGINE_CYCLES), the simulated
// kernel side programming the simulated registers, and the read-out placing Gen12 snapshots by
// the engine's timestamp in the report's 32 bits.
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpu/counter_source.h"
#include "gpu/device.h"
#include "gpu/sim/sim_xe_observation.h"
#include "gpu/xe/xe_observation.h"
#include "mmio/registers.h"
#include "mmio/sim_gpu.h"
#include "oa/delta.h"
#include "oa/metric_xml.h"
#include "oa/report.h"
#include "oa/report_format.h"

namespace oaprof::gpu {
namespace {

constexpr const char* kGen12Uuid = "12f20772-0044-44ff-bcc0-d2bc252d140e";

xe::OaConfigParam config_param(const std::string& uuid, const std::vector<std::uint32_t>& regs) {
  xe::OaConfigParam c;
  std::memcpy(c.uuid, uuid.data(), sizeof c.uuid);
  c.n_regs = static_cast<std::uint32_t>(regs.size() / 2);
  c.regs_ptr = reinterpret_cast<std::uintptr_t>(regs.data());
  return c;
}

oa::MetricFile igt_xe_file(const std::string& name) {
  const std::filesystem::path path =
      std::filesystem::path(OAPROF_IGT_XE_METRICS_DIR) / ("oa-" + name + ".xml");
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return oa::import_metrics_xml(text.str(), path.filename().string());
}

std::vector<std::uint32_t> flat_registers(const oa::MetricSet& set) {
  std::vector<std::uint32_t> regs;
  for (const oa::RegisterConfig& c : set.register_configs()) {
    for (const oa::RegisterWrite& w : c.writes) regs.insert(regs.end(), {w.address, w.value});
  }
  return regs;
}

// One simulated part under xe: its registers (SimGpu) and xe's kernel side over them.
class SimulatedXePart {
 public:
  explicit SimulatedXePart(const std::string& sim_name, SimXeOptions options = {})
      : platform_(mmio::sim_platform_by_name(sim_name)),
        gpu_(sim_config(platform_), clock_),
        device_(platform_, clock_, options, &gpu_),
        xe_(make_sim_xe_observation(device_)) {}

  static mmio::SimConfig sim_config(const oa::Platform& p) {
    mmio::SimConfig c;
    c.platform = p;
    c.i915 = false;
    return c;
  }
  int open(std::uint64_t format, std::uint32_t unit = 0, int exponent = 10) {
    XeOaStreamParams p;
    p.oa_unit_id = unit;
    p.metric_set = config_id_;
    p.oa_format = format;
    p.period_exponent = exponent;
    const XePropertyChain chain(p);
    return xe_->open_stream(chain.head());
  }
  // RenderBasic from IGT's xe file for the part, added once.
  void add_render_basic(const std::string& file) {
    const oa::MetricFile f = igt_xe_file(file);
    const oa::MetricSet& set = *f.find("RenderBasic");
    const int id = xe_->add_config(config_param(set.guid(), flat_registers(set)));
    ASSERT_GT(id, 0) << std::strerror(-id);
    config_id_ = static_cast<std::uint64_t>(id);
  }

  oa::Platform platform_;
  mmio::ManualClock clock_;
  mmio::SimGpu gpu_;
  SimXeDevice device_;
  std::unique_ptr<XeObservation> xe_;
  std::uint64_t config_id_ = 0;
};

TEST(XeGen12Test, TigerLakesOagCountsRcs0AloneAndItsEngineClockHas36Bits) {
  SimulatedXePart tgl("tglgt2-xe");
  const std::vector<XeOaUnit> units = tgl.device_.oa_units();
  ASSERT_EQ(units.size(), 1u);  // video engines have no OA unit before 12.70, copy engines none
  EXPECT_EQ(units[0].type, xe::kOaUnitTypeOag);
  ASSERT_EQ(units[0].engines.size(), 1u);
  EXPECT_EQ(units[0].engines[0].engine_class, xe::kEngineClassRender);
  xe::QueryEngineCycles q;
  q.eci = units[0].engines[0];
  q.clockid = CLOCK_MONOTONIC;
  tgl.clock_.advance_ns(5'000'000'000);
  ASSERT_EQ(tgl.device_.engine_cycles(q), 0);
  EXPECT_EQ(q.width, 36u);
  // The engine's timestamp is the registers' RING_TIMESTAMP: 5 s at the part's clock.
  EXPECT_NEAR(static_cast<double>(q.engine_cycles), 5 * tgl.platform_.timestamp_hz, 1.0);

  SimulatedXePart mtl("mtlgt2-xe");
  const std::vector<XeOaUnit> mtl_units = mtl.device_.oa_units();
  ASSERT_EQ(mtl_units.size(), 2u);             // the OAG on GT 0, an OAM on the media GT
  EXPECT_EQ(mtl_units[0].engines.size(), 2u);  // rcs0 and ccs0
  EXPECT_EQ(mtl_units[1].type, xe::kOaUnitTypeOam);
}

// Every register of every set in IGT's xe files for Gen12 and Xe-LPG parts is in that part's
// lists; each part refuses the other's mux registers and Xe2's.
TEST(XeGen12Test, AddConfigTakesIgtsSetsAndChecksEachPartsOwnMuxList) {
  const std::pair<const char*, std::vector<const char*>> parts[] = {
      {"tglgt2-xe", {"tglgt1", "tglgt2", "rkl", "adl", "dg1"}},
      {"mtlgt2-xe", {"mtlgt2", "mtlgt3"}},
  };
  for (const auto& [sim, files] : parts) {
    SimulatedXePart part(sim);
    for (const char* file : files) {
      for (const oa::MetricSet& set : igt_xe_file(file).sets) {
        SCOPED_TRACE(std::string(file) + " " + set.symbol());
        const int id = part.xe_->add_config(config_param(set.guid(), flat_registers(set)));
        ASSERT_GT(id, 0) << std::strerror(-id);
        EXPECT_EQ(part.xe_->remove_config(static_cast<std::uint64_t>(id)), 0);
      }
    }
  }
  const auto add = [](SimulatedXePart& part, std::uint32_t address) {
    return part.xe_->add_config(config_param(kGen12Uuid, {address, 0}));
  };
  SimulatedXePart tgl("tglgt2-xe");
  EXPECT_EQ(add(tgl, 0x38d100), -EINVAL);  // MTL's VISACTL
  EXPECT_EQ(add(tgl, 0x13000), -EINVAL);   // an Xe2 mux register
  EXPECT_EQ(add(tgl, 0x394200), -EINVAL);  // an Xe2 boolean counter
  EXPECT_GT(add(tgl, 0x20cc), 0);          // WAIT_FOR_RC6_EXIT
  SimulatedXePart mtl("mtlgt2-xe");
  EXPECT_EQ(add(mtl, 0x20cc), -EINVAL);  // not in mtl_oa_mux_regs
  EXPECT_GT(add(mtl, 0x38d100), 0);
}

TEST(XeGen12Test, StreamOpenTakesOnlyThePartsOwnOagFormats) {
  SimulatedXePart tgl("tglgt2-xe");
  tgl.add_render_basic("tglgt2");
  EXPECT_EQ(tgl.open(0x700), -EINVAL);     // C4_B8: xe's format 0
  EXPECT_EQ(tgl.open(0x10105), -EINVAL);   // PEC64u64: Xe2's
  EXPECT_EQ(tgl.open(0x501), -EINVAL);     // OAR: not a Gen12 format
  EXPECT_EQ(tgl.open(0x500, 1), -EINVAL);  // no second unit
  const int stream =
      tgl.open(oa::to_xe_oa_format(oa::ReportFormat::kA32u40_A4u32_B8_C8, oa::Generation::kGen12));
  ASSERT_GT(stream, 0) << std::strerror(-stream);
  EXPECT_EQ(tgl.open(0x200), -EBUSY);  // A12_B8_C8 would do, but the unit is held
  tgl.xe_->close_stream(stream);
  const int a12 = tgl.open(0x200);
  EXPECT_GT(a12, 0);
  tgl.xe_->close_stream(a12);

  SimulatedXePart mtl("mtlgt2-xe");
  mtl.add_render_basic("mtlgt2");
  EXPECT_EQ(mtl.open(0x000), -EINVAL);     // A12 is not among Xe-LPG's formats
  EXPECT_EQ(mtl.open(0x102, 0), -EINVAL);  // an OAM format on the OAG
  const int a24 =
      mtl.open(oa::to_xe_oa_format(oa::ReportFormat::kA24u40_A14u32_B8_C8, oa::Generation::kXeLpg));
  EXPECT_GT(a24, 0) << std::strerror(-a24);
  mtl.xe_->close_stream(a24);
}

// Meteor Lake's MPEC8u64_B8_C8 and MPEC8u32_B8_C8 are type OAM_MPEC (4) in xe's oa_formats[]
// (@ 0755a4e3e809), never OAM (2). A format that decodes gets past decode_oa_format to the
// privilege check (EACCES when unprivileged); one that does not stops there (EINVAL).
TEST(XeGen12Test, MeteorLakesMpecFormatsAreTypeOamMpec) {
  SimulatedXePart mtl("mtlgt2-xe");
  mtl.add_render_basic("mtlgt2");
  mtl.device_.options().perfmon_capable = false;
  mtl.device_.options().observation_paranoid = 1;
  EXPECT_EQ(mtl.open(0x104, 1), -EACCES);  // OAM_MPEC, select 1: MPEC8u64_B8_C8
  EXPECT_EQ(mtl.open(0x204, 1), -EACCES);  // OAM_MPEC, select 2: MPEC8u32_B8_C8
  EXPECT_EQ(mtl.open(0x102, 1), -EINVAL);  // OAM, select 1: no such Xe-LPG format
  EXPECT_EQ(mtl.open(0x202, 1), -EINVAL);
}

// xe_oa_stream_open_ioctl refuses to wait for more reports than the OA buffer holds.
TEST(XeGen12Test, WaitNumReportsIsBoundByTheOaBuffer) {
  SimulatedXePart mtl("mtlgt2-xe");
  mtl.add_render_basic("mtlgt2");
  const std::uint64_t format =
      oa::to_xe_oa_format(oa::ReportFormat::kA24u40_A14u32_B8_C8, oa::Generation::kXeLpg);
  const auto open_with = [&](std::uint64_t buffer_bytes, std::uint64_t wait) {
    std::vector<xe::ExtSetProperty> links(6);
    const std::pair<std::uint32_t, std::uint64_t> props[] = {
        {xe::kOaPropOaUnitId, 0},
        {xe::kOaPropSampleOa, 1},
        {xe::kOaPropOaMetricSet, mtl.config_id_},
        {xe::kOaPropOaFormat, format},
        {xe::kOaPropOaBufferSize, buffer_bytes},
        {xe::kOaPropWaitNumReports, wait}};
    for (std::size_t i = 0; i < links.size(); ++i) {
      links[i].property = props[i].first;
      links[i].value = props[i].second;
      if (i + 1 < links.size()) {
        links[i].base.next_extension = reinterpret_cast<std::uintptr_t>(&links[i + 1]);
      }
    }
    const int fd = mtl.xe_->open_stream(reinterpret_cast<std::uintptr_t>(links.data()));
    if (fd >= 0) mtl.xe_->close_stream(fd);
    return fd;
  };
  const std::uint64_t kib128 = 128u << 10;
  EXPECT_GE(open_with(kib128, kib128 / 256), 0);  // 512 reports of 256 bytes fit
  EXPECT_EQ(open_with(kib128, kib128 / 256 + 1), -EINVAL);
}

// The stream programs the simulated OAG unit: periodic reports in the asked format, one every
// (2 << exponent) ticks, counting the busy clocks between them; closing restores the registers.
TEST(XeGen12Test, ReportsAreTheRegistersOaUnitInTheStreamsFormat) {
  SimulatedXePart tgl("tglgt2-xe");
  tgl.add_render_basic("tglgt2");
  const oa::FormatLayout& layout = oa::layout_of(oa::ReportFormat::kA32u40_A4u32_B8_C8);
  const std::uint32_t oa_control = mmio::reg::oa_block(oa::Generation::kGen12).oa_control;
  const std::uint32_t control_before = tgl.gpu_.read32(oa_control);
  const int stream = tgl.open(0x500);
  ASSERT_GT(stream, 0);
  EXPECT_NE(tgl.gpu_.read32(oa_control), control_before);
  tgl.device_.set_busy(true);
  tgl.clock_.advance_ns(1'000'000);  // 1 ms: about 9 periods of 2048 ticks
  tgl.device_.set_busy(false);
  std::vector<std::uint8_t> buf(64 * 256);
  const ssize_t n = tgl.xe_->read_stream(stream, buf);
  ASSERT_GT(n, 0);
  ASSERT_EQ(n % 256, 0);
  const std::size_t reports = static_cast<std::size_t>(n) / 256;
  const double expected = 1e-3 * tgl.platform_.timestamp_hz / 2048;
  EXPECT_NEAR(static_cast<double>(reports), expected, 1.0);
  ASSERT_GE(reports, 2u);
  const oa::Report first = oa::decode(layout.format, std::span(buf).first(256));
  const oa::Report second = oa::decode(layout.format, std::span(buf).subspan(256, 256));
  EXPECT_NE(first.rpt_id, 0u);
  EXPECT_EQ(second.timestamp - first.timestamp, 2048u);
  EXPECT_GT(second.a[0], first.a[0]);  // GPU busy counted while busy
  EXPECT_EQ(tgl.xe_->read_stream(stream, buf), -EAGAIN);
  tgl.xe_->close_stream(stream);
  EXPECT_EQ(tgl.gpu_.read32(oa_control), control_before);
}

TEST(XeGen12Test, AFullOaBufferIsEioThenStatusAndTheStreamGoesOn) {
  SimulatedXePart tgl("tglgt2-xe", SimXeOptions{.oa_buffer_bytes = 4 * 256});
  tgl.add_render_basic("tglgt2");
  const int stream = tgl.open(0x500);
  ASSERT_GT(stream, 0);
  tgl.clock_.advance_ns(10'000'000);  // far more reports than four
  std::vector<std::uint8_t> buf(64 * 256);
  EXPECT_EQ(tgl.xe_->read_stream(stream, buf), -EIO);
  std::uint64_t status = 0;
  ASSERT_EQ(tgl.xe_->stream_status(stream, status), 0);
  EXPECT_NE(status & xe::kOaStatusBufferOverflow, 0u);
  tgl.clock_.advance_ns(300'000);
  EXPECT_GT(tgl.xe_->read_stream(stream, buf), 0);  // restarted on an empty buffer
  tgl.xe_->close_stream(stream);
}

// The steady clock moved so that the GPU timestamp starts at `ticks`: a part up for days, whose
// 36-bit engine timestamp has bits above the report's 32.
class ShiftedClock final : public mmio::Clock {
 public:
  ShiftedClock(std::uint64_t ticks, double hz)
      : offset_ns_(static_cast<std::uint64_t>(static_cast<double>(ticks) / hz * 1e9) -
                   steady_.now_ns()) {}
  std::uint64_t now_ns() override { return steady_.now_ns() + offset_ns_; }  // mod 2^64

 private:
  mmio::SteadyClock steady_;
  std::uint64_t offset_ns_;
};

Device xe_bound_sim(const std::string& name) {
  mmio::SimConfig config;
  config.platform = mmio::sim_platform_by_name(name);
  config.i915 = false;
  const std::uint64_t start_ticks = (std::uint64_t{1} << 44) + (std::uint64_t{1} << 35);
  Device d = make_sim_device(
      std::make_unique<ShiftedClock>(start_ticks, config.platform.timestamp_hz), config);
  d.perf_period_exponent = 10;  // 2048 ticks, 107 us
  return d;
}

mmio::OaConfig render_basic_config(const std::string& file) {
  const oa::MetricFile f = igt_xe_file(file);
  const oa::MetricSet& set = *f.find("RenderBasic");
  mmio::OaConfig c;
  c.guid = set.guid();
  for (const oa::RegisterConfig& rc : set.register_configs()) {
    for (const oa::RegisterWrite& w : rc.writes) c.mux.push_back(w);
  }
  return c;
}

// Gen12 under xe: each snapshot is the first report at or after the engine's timestamp, compared
// in the 32 bits the report holds; the register read-outs stay refused.
TEST(XeGen12Test, TigerLakeSnapshotsArePlacedByTheEnginesTimestamp) {
  Device d = xe_bound_sim("tglgt2-xe");
  ASSERT_NE(d.sim_xe, nullptr);
  EXPECT_EQ(d.platform.driver, oa::KernelDriver::kXe);
  EXPECT_THROW(make_counter_source("mmio", d), std::invalid_argument);
  EXPECT_THROW(make_counter_source("rpc", d), std::invalid_argument);
  auto source = make_counter_source("perf", d);
  const oa::ReportFormat format = oa::ReportFormat::kA32u40_A4u32_B8_C8;
  source->start(format, render_basic_config("tglgt2"));
  const oa::FormatLayout& layout = oa::layout_of(format);
  for (int i = 0; i < 3; ++i) {
    const oa::RawReport r = source->snapshot(0);
    ASSERT_EQ(r.size, 256);
    const std::uint64_t engine = d.sim_xe->last_engine_cycles().engine_cycles;
    EXPECT_GE(engine, std::uint64_t{1} << 32);  // more bits than the report's
    const std::uint64_t asked = engine & 0xffffffffu;
    const std::uint64_t ts = oa::read_timestamp_field(layout, r.bytes.data());
    EXPECT_LE((ts - asked) & 0xffffffffu, 2048u) << "snapshot " << i;
  }
  EXPECT_EQ(source->perf_stream_counts().snapshots_waited, 0);
  source->kernel_running(true);
  const oa::RawReport before = source->snapshot(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const oa::RawReport after = source->snapshot(1);
  source->kernel_running(false);
  const oa::CounterDeltas dl =
      oa::compute_deltas(oa::decode(format, std::span(before.bytes).first(256)),
                         oa::decode(format, std::span(after.bytes).first(256)));
  EXPECT_GE(dl.a[0], 2'000'000u);  // 2 ms busy at 1150 MHz: GPU busy clocks
  source->stop();
}

// Xe-LPG's OA timestamp counts at a rate scaled from the engine's (Wa_18013179988): its
// snapshots wait out xe's poll, each still after the asking, and the run says how many.
TEST(XeGen12Test, MeteorLakeSnapshotsWaitAndSaySo) {
  Device d = xe_bound_sim("mtlgt2-xe");
  auto source = make_counter_source("perf", d);
  source->start(oa::ReportFormat::kA24u40_A14u32_B8_C8, render_basic_config("mtlgt2"));
  for (int i = 0; i < 2; ++i) EXPECT_EQ(source->snapshot(0).size, 256);
  EXPECT_EQ(source->perf_stream_counts().snapshots_waited, 2);
  const std::string warning = snapshot_placement_warning(source->perf_stream_counts());
  EXPECT_NE(warning.find("2 snapshots were taken after waiting"), std::string::npos) << warning;
  EXPECT_NE(warning.find("Xe-LPG"), std::string::npos) << warning;
  EXPECT_THROW(
      source->start(oa::ReportFormat::kOar_A32u40_A4u32_B8_C8, render_basic_config("mtlgt2")),
      std::invalid_argument);
}

}  // namespace
}  // namespace oaprof::gpu
