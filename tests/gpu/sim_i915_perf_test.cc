// The simulated i915 perf interface: it must refuse what i915 refuses, with i915's errno, and
// yield records exactly as i915's read() lays them out.
#include "gpu/sim/sim_i915_perf.h"

#include <cerrno>
#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpu/device.h"
#include "gpu/i915/perf_stream.h"
#include "mmio/registers.h"
#include "mmio/sim_gpu.h"
#include "oa/perf_record.h"
#include "oa/report.h"
#include "oa/report_format.h"

namespace oaprof::gpu {
namespace {

constexpr auto kI915Fmt = oa::ReportFormat::kA32u40_A4u32_B8_C8;
constexpr char kI915Uuid[] = "12994724-3a5a-4303-bb3c-ba0175d2c200";

struct Regs {
  std::vector<std::uint32_t> mux{0x9888, 0x166C01E0};
  std::vector<std::uint32_t> boolean{0x2710, 0x1};
  std::vector<std::uint32_t> flex{0xE458, 0x5};
};

drm_i915_perf_oa_config oa_config(Regs& r, const char* uuid = kI915Uuid) {
  drm_i915_perf_oa_config c{};
  std::memcpy(c.uuid, uuid, sizeof c.uuid);
  c.n_mux_regs = static_cast<std::uint32_t>(r.mux.size() / 2);
  c.n_boolean_regs = static_cast<std::uint32_t>(r.boolean.size() / 2);
  c.n_flex_regs = static_cast<std::uint32_t>(r.flex.size() / 2);
  c.mux_regs_ptr = reinterpret_cast<std::uintptr_t>(r.mux.data());
  c.boolean_regs_ptr = reinterpret_cast<std::uintptr_t>(r.boolean.data());
  c.flex_regs_ptr = reinterpret_cast<std::uintptr_t>(r.flex.data());
  return c;
}

class SimI915PerfTest : public ::testing::Test {
 protected:
  SimI915PerfTest() {
    auto c = std::make_unique<mmio::ManualClock>();
    clock_ = c.get();
    device_ = make_sim_device(std::move(c));
    perf_ = make_sim_i915_perf(*device_.sim);
  }

  int open(std::vector<std::uint64_t> props, std::uint32_t flags = I915_PERF_FLAG_FD_NONBLOCK,
           I915Perf* perf = nullptr) {
    drm_i915_perf_open_param p{};
    p.flags = flags;
    p.num_properties = static_cast<std::uint32_t>(props.size() / 2);
    p.properties_ptr = reinterpret_cast<std::uintptr_t>(props.data());
    return (perf ? *perf : *perf_).open_stream(p);
  }

  std::vector<std::uint8_t> read_all(int stream) {
    std::vector<std::uint8_t> buf(1 << 20);
    const ssize_t n = perf_->read_stream(stream, buf);
    EXPECT_GT(n, 0);
    buf.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return buf;
  }

  mmio::ManualClock* clock_ = nullptr;
  Device device_;
  std::unique_ptr<I915Perf> perf_;
};

TEST_F(SimI915PerfTest, AddConfigChecksLikeI915AndIdsStartAtTwo) {
  Regs r;
  auto c = oa_config(r);
  EXPECT_EQ(perf_->find_config_id(kI915Uuid), std::nullopt);
  EXPECT_EQ(perf_->add_config(c), 2);
  EXPECT_EQ(perf_->find_config_id(kI915Uuid), 2u);  // sysfs metrics/<uuid>/id
  EXPECT_EQ(perf_->add_config(c), -EADDRINUSE);
  // Another descriptor on the same device sees the same configurations.
  auto other = make_sim_i915_perf(*device_.sim);
  EXPECT_EQ(other->find_config_id(kI915Uuid), 2u);

  Regs bad_flex;
  bad_flex.flex = {0x2B00, 0};  // OACONTROL is not a flex register
  EXPECT_EQ(perf_->add_config(oa_config(bad_flex, "00000000-0000-0000-0000-000000000001")),
            -EINVAL);
  Regs bad_mux;
  bad_mux.mux = {0x1234, 0};
  EXPECT_EQ(perf_->add_config(oa_config(bad_mux, "00000000-0000-0000-0000-000000000001")), -EINVAL);
  EXPECT_EQ(perf_->add_config(oa_config(r, "not-a-uuid-at-all-but-36-characters!")), -EINVAL);
  Regs none;
  none.mux.clear();
  none.boolean.clear();
  none.flex.clear();
  // What the built-in set would ask for: no registers.
  EXPECT_EQ(perf_->add_config(oa_config(none, "00000000-0000-0000-0000-000000000002")), -EINVAL);

  SimI915Options unprivileged;
  unprivileged.perfmon_capable = false;
  auto user = make_sim_i915_perf(*device_.sim, unprivileged);
  EXPECT_EQ(user->add_config(oa_config(r, "00000000-0000-0000-0000-000000000003")), -EACCES);
  EXPECT_EQ(user->remove_config(2), -EACCES);

  EXPECT_EQ(perf_->add_config(oa_config(r, "00000000-0000-0000-0000-000000000004")), 3);
  EXPECT_EQ(perf_->remove_config(2), 0);
  EXPECT_EQ(perf_->remove_config(2), -ENOENT);
  EXPECT_EQ(perf_->find_config_id(kI915Uuid), std::nullopt);
  EXPECT_EQ(perf_->add_config(c), 2);  // the lowest free id again
}

TEST_F(SimI915PerfTest, OpenRefusesBadPropertiesAsI915Does) {
  Regs r;
  const auto id = static_cast<std::uint64_t>(perf_->add_config(oa_config(r)));
  const auto fmt = static_cast<std::uint64_t>(oa::to_uapi(kI915Fmt));
  EXPECT_EQ(open({}), -EINVAL);                      // no properties
  EXPECT_EQ(open({3, id, 4, fmt, 5, 16}), -EINVAL);  // no SAMPLE_OA
  EXPECT_EQ(open({2, 1, 3, 0, 4, fmt}), -EINVAL);    // metrics set 0
  EXPECT_EQ(open({2, 1, 3, 99, 4, fmt}), -EINVAL);   // unknown config id
  EXPECT_EQ(open({2, 1, 3, id, 4, 0}), -EINVAL);     // format 0
  EXPECT_EQ(open({2, 1, 3, id, 4, 999}), -EINVAL);   // out of range
  const auto hsw = static_cast<std::uint64_t>(oa::to_uapi(oa::ReportFormat::kA45_B8_C8));
  EXPECT_EQ(open({2, 1, 3, id, 4, hsw}), -EINVAL);           // not a Gen9 format
  EXPECT_EQ(open({2, 1, 3, id}), -EINVAL);                   // no format
  EXPECT_EQ(open({2, 1, 3, id, 4, fmt, 5, 32}), -EINVAL);    // exponent > 31
  EXPECT_EQ(open({2, 1, 3, id, 4, fmt, 0, 0}), -EINVAL);     // property id 0
  EXPECT_EQ(open({2, 1, 3, id, 4, fmt, 99, 0}), -EINVAL);    // unknown property
  EXPECT_EQ(open({1, 7, 2, 1, 3, id, 4, fmt}), -ENOENT);     // no such context
  EXPECT_EQ(open({2, 1, 3, id, 4, fmt, 6, 1}), -EINVAL);     // hold preemption, no ctx
  EXPECT_EQ(open({2, 1, 3, id, 4, fmt}, 1u << 7), -EINVAL);  // unknown flag

  // Unprivileged: every system-wide stream needs CAP_PERFMON unless paranoid is 0, and then the
  // period may not beat oa_max_sample_rate (exponent 5: 12 MHz / 64 = 187.5 kHz > 100 kHz).
  SimI915Options user;
  user.perfmon_capable = false;
  auto unprivileged = make_sim_i915_perf(*device_.sim, user);
  EXPECT_EQ(open({2, 1, 3, id, 4, fmt, 5, 16}, 0, unprivileged.get()), -EACCES);
  user.perf_stream_paranoid = 0;
  auto relaxed = make_sim_i915_perf(*device_.sim, user);
  EXPECT_EQ(open({2, 1, 3, id, 4, fmt, 5, 5}, 0, relaxed.get()), -EACCES);
  const int ok = open({2, 1, 3, id, 4, fmt, 5, 7}, 0, relaxed.get());  // 46.9 kHz
  EXPECT_GE(ok, 0);
  relaxed->close_stream(ok);
}

TEST_F(SimI915PerfTest, OneStreamAtATimeAndCloseGivesTheOaUnitBack) {
  Regs r;
  const auto id = static_cast<std::uint64_t>(perf_->add_config(oa_config(r)));
  const auto fmt = static_cast<std::uint64_t>(oa::to_uapi(kI915Fmt));
  const std::uint32_t flex_before = device_.mmio->read32(0xE458);
  const int s = open({2, 1, 3, id, 4, fmt, 5, 16});
  ASSERT_GE(s, 0);
  EXPECT_EQ(device_.mmio->read32(0xE458), 0x5u);
  EXPECT_NE(device_.mmio->read32(mmio::reg::kOaControl) & mmio::reg::kOaControlEnable, 0u);
  auto other = make_sim_i915_perf(*device_.sim);
  EXPECT_EQ(open({2, 1, 3, id, 4, fmt}, 0, other.get()), -EBUSY);
  EXPECT_EQ(open({2, 1, 3, id, 4, fmt}), -EBUSY);
  perf_->close_stream(s);
  EXPECT_EQ(device_.mmio->read32(0xE458), flex_before);
  EXPECT_EQ(device_.mmio->read32(mmio::reg::kOaControl), 0u);
  const int again = open({2, 1, 3, id, 4, fmt}, 0, other.get());
  EXPECT_GE(again, 0);
  other->close_stream(again);
}

TEST_F(SimI915PerfTest, ADisabledStreamCountsAndSamplesFromEnableOn) {
  Regs r;
  const auto id = static_cast<std::uint64_t>(perf_->add_config(oa_config(r)));
  const int s = open({2, 1, 3, id, 4, static_cast<std::uint64_t>(oa::to_uapi(kI915Fmt)), 5, 10},
                     I915_PERF_FLAG_FD_NONBLOCK | I915_PERF_FLAG_DISABLED);
  ASSERT_GE(s, 0);
  EXPECT_EQ(device_.mmio->read32(0xE458), 0x5u);  // configured, not counting
  EXPECT_EQ(device_.mmio->read32(mmio::reg::kOaControl) & mmio::reg::kOaControlEnable, 0u);
  clock_->advance_ns(1'000'000);
  std::vector<std::uint8_t> buf(4096);
  EXPECT_EQ(perf_->read_stream(s, buf), -EIO);
  EXPECT_EQ(device_.mmio->read32(mmio::reg::kGpuTicks), 0u);
  ASSERT_EQ(perf_->enable_stream(s, true), 0);
  clock_->advance_ns(400'000);  // ticks 12000 → 16800: 12288, 14336 and 16384
  const ssize_t n = perf_->read_stream(s, buf);
  ASSERT_GT(n, 0);
  EXPECT_EQ(oa::parse_perf_records(std::span(buf.data(), static_cast<std::size_t>(n)), 256).size(),
            3u);
  EXPECT_EQ(perf_->enable_stream(s, false), 0);
  EXPECT_EQ(perf_->read_stream(s, buf), -EIO);
  EXPECT_EQ(perf_->enable_stream(s + 1, true), -EBADF);
  perf_->close_stream(s);
}

TEST_F(SimI915PerfTest, PeriodicRecordsAreI915SamplesAtTheExponentsPeriod) {
  Regs r;
  const auto id = static_cast<std::uint64_t>(perf_->add_config(oa_config(r)));
  const int s = open({2, 1, 3, id, 4, static_cast<std::uint64_t>(oa::to_uapi(kI915Fmt)), 5, 10});
  ASSERT_GE(s, 0);
  std::vector<std::uint8_t> small(8);
  EXPECT_EQ(perf_->read_stream(s, small), -EAGAIN);  // nothing yet
  // 2 << 10 ticks at 12 MHz: 170.67 µs. One millisecond holds five periods, maybe six.
  device_.sim->set_kernel_running(true);
  clock_->advance_ns(1'000'000);
  EXPECT_EQ(perf_->read_stream(s, small), -ENOSPC);  // not even one record fits
  const auto bytes = read_all(s);
  const auto records = oa::parse_perf_records(bytes, 256);
  ASSERT_GE(records.size(), 5u);
  ASSERT_LE(records.size(), 6u);
  PerfRecordSummary summary;
  summarize_perf_records(bytes, 256, summary);
  EXPECT_EQ(summary.samples, static_cast<int>(records.size()));
  std::uint64_t previous_ts = 0;
  for (const auto& rec : records) {
    ASSERT_EQ(rec.type, oa::PerfRecord::Type::kSample);
    const oa::Report rep = oa::decode(kI915Fmt, rec.report);
    EXPECT_EQ((rep.rpt_id >> 19) & 0x3F, 1u);  // reason: timer
    EXPECT_EQ(rep.timestamp % 2048, 0u);       // on the period's tick
    if (previous_ts != 0) {
      EXPECT_EQ(rep.timestamp - previous_ts, 2048u);
    }
    previous_ts = rep.timestamp;
  }
  EXPECT_GT(oa::decode(kI915Fmt, records.back().report).a[7],
            oa::decode(kI915Fmt, records.front().report).a[7]);
  std::vector<std::uint8_t> buf(4096);
  EXPECT_EQ(perf_->read_stream(s, buf), -EAGAIN);  // all read
  perf_->close_stream(s);
  EXPECT_EQ(perf_->read_stream(s, buf), -EBADF);
}

TEST_F(SimI915PerfTest, AnOverflowedBufferIsReportedAndRestartedAndLostReportsToo) {
  SimI915Options small;
  small.oa_buffer_bytes = 4 * 256;
  auto perf = make_sim_i915_perf(*device_.sim, small);
  Regs r;
  const auto id = static_cast<std::uint64_t>(perf->add_config(oa_config(r)));
  const int s = open({2, 1, 3, id, 4, static_cast<std::uint64_t>(oa::to_uapi(kI915Fmt)), 5, 10},
                     I915_PERF_FLAG_FD_NONBLOCK, perf.get());
  ASSERT_GE(s, 0);
  clock_->advance_ns(3'000'000);  // 17 periods into room for 4
  std::vector<std::uint8_t> buf(1 << 16);
  ssize_t n = perf->read_stream(s, buf);
  ASSERT_GT(n, 0);
  auto records = oa::parse_perf_records(std::span(buf.data(), static_cast<std::size_t>(n)), 256);
  ASSERT_EQ(records.size(), 1u);  // i915 restarts OA: what was buffered is gone
  EXPECT_EQ(records[0].type, oa::PerfRecord::Type::kBufferLost);
  EXPECT_EQ(device_.mmio->read32(mmio::reg::kOaStatus), 0u);

  clock_->advance_ns(400'000);  // two periods: counting again after the restart
  device_.mmio->write32(mmio::reg::kOaStatus, mmio::SimGpu::kOaStatusReportLost);  // the OA unit
  n = perf->read_stream(s, buf);
  ASSERT_GT(n, 0);
  records = oa::parse_perf_records(std::span(buf.data(), static_cast<std::size_t>(n)), 256);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].type, oa::PerfRecord::Type::kReportLost);
  EXPECT_EQ(records[1].type, oa::PerfRecord::Type::kSample);
  EXPECT_EQ(device_.mmio->read32(mmio::reg::kOaStatus), 0u);
  perf->close_stream(s);
}

TEST_F(SimI915PerfTest, TheConfigurationLivesInEveryContextImageWhileTheStreamIsOpen) {
  auto c = std::make_unique<mmio::ManualClock>();
  mmio::ManualClock* clock = c.get();
  mmio::SimConfig cfg;
  cfg.context_switch_period_ns = 1'000'000;
  cfg.context_image_value = 0xDEAD;
  Device d = make_sim_device(std::move(c), cfg);
  auto perf = make_sim_i915_perf(*d.sim);
  Regs r;
  const auto id = static_cast<std::uint64_t>(perf->add_config(oa_config(r)));
  const int s = open({2, 1, 3, id, 4, static_cast<std::uint64_t>(oa::to_uapi(kI915Fmt)), 5, 16},
                     I915_PERF_FLAG_FD_NONBLOCK, perf.get());
  ASSERT_GE(s, 0);
  clock->advance_ns(5'500'000);
  EXPECT_EQ(d.sim->context_switches(), 5u);
  EXPECT_EQ(d.mmio->read32(0xE458), 0x5u);
  EXPECT_EQ(d.mmio->read32(0xE558), 0u);  // i915 clears the flex registers the set leaves out
  EXPECT_EQ(d.mmio->read32(mmio::reg::kOaCtxControl),
            mmio::reg::kOaCtxControlCounterResume | mmio::SimGpu::kOaCtxControlTimerEnable |
                (16u << mmio::SimGpu::kOaCtxControlTimerPeriodShift));
  perf->close_stream(s);
  clock->advance_ns(1'000'000);
  EXPECT_EQ(d.mmio->read32(0xE458), 0xDEADu);  // other contexts' images again
}

}  // namespace
}  // namespace oaprof::gpu

namespace oaprof::gpu {
namespace {

// Gen12 and Xe-LPG: i915 streams the OAG unit; the periodic timer sits in OAG_OAGLBCTXCTRL, the
// engine is named by class and instance (together, render 0 only here), and the uapi formats are
// the generation's (Xe-LPG's A24u40_A14u32_B8_C8 is 12, beyond older headers' I915_OA_FORMAT_MAX).
TEST(SimI915PerfGen12Test, StreamsOagPeriodicallyAndChecksTheEngineProperties) {
  for (const char* name : {"tglgt2", "mtlgt2"}) {
    SCOPED_TRACE(name);
    auto c = std::make_unique<mmio::ManualClock>();
    mmio::ManualClock* clock = c.get();
    mmio::SimConfig cfg;
    cfg.platform = mmio::sim_platform_by_name(name);
    Device d = make_sim_device(std::move(c), cfg);
    auto perf = make_sim_i915_perf(*d.sim);
    std::vector<std::uint32_t> mux{0x9888, 0x1}, boolean{0xD920, 0x1}, flex{0xE458, 0x5};
    drm_i915_perf_oa_config oc{};
    std::memcpy(oc.uuid, kI915Uuid, sizeof oc.uuid);
    oc.n_mux_regs = oc.n_boolean_regs = oc.n_flex_regs = 1;
    oc.mux_regs_ptr = reinterpret_cast<std::uintptr_t>(mux.data());
    oc.boolean_regs_ptr = reinterpret_cast<std::uintptr_t>(boolean.data());
    oc.flex_regs_ptr = reinterpret_cast<std::uintptr_t>(flex.data());
    const auto id = static_cast<std::uint64_t>(perf->add_config(oc));
    ASSERT_GE(id, 2u);
    const oa::ReportFormat f = oa::parse_format("101", cfg.platform.gen);
    const auto uapi = static_cast<std::uint64_t>(oa::to_uapi(f));
    auto open = [&](std::vector<std::uint64_t> props) {
      drm_i915_perf_open_param p{};
      p.flags = I915_PERF_FLAG_FD_NONBLOCK;
      p.num_properties = static_cast<std::uint32_t>(props.size() / 2);
      p.properties_ptr = reinterpret_cast<std::uintptr_t>(props.data());
      return perf->open_stream(p);
    };
    EXPECT_EQ(open({2, 1, 3, id, 4, uapi, 5, 10, 9, 0}), -EINVAL);         // class alone
    EXPECT_EQ(open({2, 1, 3, id, 4, uapi, 5, 10, 9, 1, 10, 0}), -EINVAL);  // not render
    const int s = open(perf_open_properties(id, f, 10, cfg.platform.gen));
    ASSERT_GE(s, 0);
    EXPECT_NE(d.mmio->read32(mmio::reg::kOagOaControl) & 1u, 0u);
    EXPECT_EQ(d.mmio->read32(mmio::reg::kOaControl), 0u);  // the Gen8 unit's register: untouched
    EXPECT_NE(
        d.mmio->read32(mmio::reg::kOagGlobalCtxControl) & mmio::SimGpu::kOaCtxControlTimerEnable,
        0u);
    d.sim->set_kernel_running(true);
    clock->advance_ns(1'000'000);
    std::vector<std::uint8_t> buf(1 << 16);
    const ssize_t n = perf->read_stream(s, buf);
    ASSERT_GT(n, 0);
    const auto records =
        oa::parse_perf_records(std::span(buf.data(), static_cast<std::size_t>(n)), 256);
    ASSERT_GE(records.size(), 5u);
    EXPECT_GT(oa::decode(f, records.back().report).a[7],
              oa::decode(f, records.front().report).a[7]);
    perf->close_stream(s);
    EXPECT_EQ(d.mmio->read32(mmio::reg::kOagOaControl), 0u);
  }
}

}  // namespace
}  // namespace oaprof::gpu
