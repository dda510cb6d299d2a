#include "gpu/sim/sim_i915_perf.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gpu/i915/perf_stream.h"
#include "mmio/oa_programmer.h"
#include "mmio/registers.h"
#include "mmio/timestamp_clock.h"
#include "mmio/whitelist.h"
#include "oa/perf_record.h"
#include "oa/report_format.h"

namespace oaprof::gpu {
namespace {

struct SimConfigEntry {
  std::string uuid;
  mmio::OaConfig registers;
};

// What i915 keeps per device: the configurations and whether a stream holds the OA unit.
struct DriverState {
  std::mutex mu;
  std::map<int, SimConfigEntry> configs;
  bool stream_open = false;
};

std::shared_ptr<DriverState> driver_of(const mmio::SimGpu& sim) {
  static std::mutex mu;
  static std::map<const mmio::SimGpu*, std::weak_ptr<DriverState>> drivers;
  std::lock_guard lock(mu);
  std::erase_if(drivers, [](const auto& kv) { return kv.second.expired(); });
  auto& weak = drivers[&sim];
  auto state = weak.lock();
  if (!state) {
    state = std::make_shared<DriverState>();
    weak = state;
  }
  return state;
}

// The kernel's uuid_is_valid(): 8-4-4-4-12 hex digits.
bool uuid_is_valid(const char (&uuid)[36]) {
  for (int i = 0; i < 36; ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    const auto c = static_cast<unsigned char>(uuid[i]);
    if (dash ? c != '-' : !std::isxdigit(c)) return false;
  }
  return true;
}

struct SimStream {
  bool nonblock = false;
  bool enabled = false;
  int report_bytes = 0;
  std::uint32_t oacontrol = 0;  // the counting value, written again on ENABLE
  const mmio::reg::OaRegisterBlock* block = &mmio::reg::kOaBlockGen8;
  std::unique_ptr<mmio::OaProgrammer> programmer;
};

// What open_stream's properties ask for, read before any of them is checked against the others.
struct OpenProperties {
  bool sample_oa = false;
  bool hold_preemption = false;
  std::uint64_t metrics_set = 0;
  std::optional<oa::ReportFormat> format;
  std::optional<int> exponent;
  std::optional<std::uint64_t> engine_class, engine_instance;
};

// i915 puts the periodic timer in OACTXCONTROL, which every context image then carries
// (Gen8–11), or in the global OAG_OAGLBCTXCTRL (Gen12+: gen12_enable_metric_set).
std::uint32_t ctx_control_for(oa::Generation gen, std::optional<int> exponent) {
  std::uint32_t ctx_control = oa::is_gen12_family(gen) ? 0 : mmio::reg::kOaCtxControlCounterResume;
  if (exponent) {
    ctx_control |=
        mmio::SimGpu::kOaCtxControlTimerEnable |
        (static_cast<std::uint32_t>(*exponent) << mmio::SimGpu::kOaCtxControlTimerPeriodShift);
  }
  return ctx_control;
}

// The stream `flags` ask for. Makes `plan` write the stream's timer (`ctx_control`) and, for a
// stream opened disabled, drops the plan's last step, the OACONTROL write.
SimStream make_stream(std::uint32_t flags, oa::ReportFormat format,
                      const mmio::reg::OaRegisterBlock& block, std::uint32_t ctx_control,
                      std::vector<mmio::PlanStep>& plan) {
  SimStream stream;
  stream.nonblock = (flags & I915_PERF_FLAG_FD_NONBLOCK) != 0;
  stream.enabled = (flags & I915_PERF_FLAG_DISABLED) == 0;
  stream.report_bytes = oa::layout_of(format).size_bytes;
  for (auto& step : plan) {
    if (step.address == block.ctx_control) step.value = ctx_control;
  }
  stream.oacontrol = plan.back().value;
  stream.block = &block;
  if (!stream.enabled) plan.pop_back();  // OACONTROL counts from ENABLE on
  return stream;
}

// Gen12+: i915 writes the OA configuration once, globally; the context image carries only
// the per-context OAR unit's state, which the simulated GPU does not report from.
std::vector<oa::RegisterWrite> context_image_for(oa::Generation gen, std::uint32_t ctx_control,
                                                 const std::vector<oa::RegisterWrite>& flex) {
  const bool gen12 = oa::is_gen12_family(gen);
  std::vector<oa::RegisterWrite> image;
  if (!gen12) image.push_back({mmio::reg::kOaCtxControl, ctx_control});
  for (std::uint32_t r : gen12 ? std::span<const std::uint32_t>{}
                               : std::span<const std::uint32_t>(mmio::reg::kEuPerfCntl)) {
    std::uint32_t value = 0;
    for (const auto& w : flex) {
      if (w.address == r) value = w.value;
    }
    image.push_back({r, value});
  }
  return image;
}

class SimI915Perf final : public I915Perf {
 public:
  SimI915Perf(mmio::SimGpu& sim, const SimI915Options& options)
      : sim_(sim), options_(options), driver_(driver_of(sim)) {}
  ~SimI915Perf() override {
    while (!streams_.empty()) close_stream(streams_.begin()->first);
  }

  std::string describe() const override { return "simulated i915"; }
  void open_node() override {}
  void close_node() override {}

  std::optional<std::uint64_t> find_config_id(const std::string& guid) override {
    std::lock_guard lock(driver_->mu);
    for (const auto& [id, c] : driver_->configs) {
      if (c.uuid == guid) return static_cast<std::uint64_t>(id);
    }
    return std::nullopt;
  }

  int add_config(const drm_i915_perf_oa_config& args) override {
    if (!privileged()) return -EACCES;
    if ((args.mux_regs_ptr == 0 || args.n_mux_regs == 0) &&
        (args.boolean_regs_ptr == 0 || args.n_boolean_regs == 0) &&
        (args.flex_regs_ptr == 0 || args.n_flex_regs == 0)) {
      return -EINVAL;  // "No OA registers given"
    }
    if (!uuid_is_valid(args.uuid)) return -EINVAL;
    SimConfigEntry entry;
    entry.uuid.assign(args.uuid, sizeof args.uuid);
    // A register list this kernel's tables lack (alloc_oa_regs: "Invalid oa_reg address").
    if (entry.uuid == sim_.config().faults.rejected_config_uuid) return -EINVAL;
    entry.registers.guid = entry.uuid;
    const oa::Platform& platform = sim_.config().platform;
    auto copy = [&](std::uint64_t ptr, std::uint32_t n, mmio::ConfigRegisterKind kind,
                    std::vector<oa::RegisterWrite>& out) {
      if (n == 0) return 0;
      if (ptr == 0) return -EFAULT;
      const auto* pairs = reinterpret_cast<const std::uint32_t*>(static_cast<std::uintptr_t>(ptr));
      for (std::uint32_t i = 0; i < n; ++i) {
        if (!mmio::is_whitelisted(platform, kind, pairs[2 * i])) return -EINVAL;
        out.push_back({pairs[2 * i], pairs[2 * i + 1]});
      }
      return 0;
    };
    if (int err = copy(args.mux_regs_ptr, args.n_mux_regs, mmio::ConfigRegisterKind::kMux,
                       entry.registers.mux)) {
      return err;
    }
    if (int err = copy(args.boolean_regs_ptr, args.n_boolean_regs,
                       mmio::ConfigRegisterKind::kBoolean, entry.registers.boolean)) {
      return err;
    }
    if (int err = copy(args.flex_regs_ptr, args.n_flex_regs, mmio::ConfigRegisterKind::kFlex,
                       entry.registers.flex)) {
      return err;
    }
    std::lock_guard lock(driver_->mu);
    for (const auto& [id, c] : driver_->configs) {
      if (c.uuid == entry.uuid) return -EADDRINUSE;
    }
    int id = 2;  // 0 is invalid and 1 is the kernel's test configuration
    while (driver_->configs.count(id) != 0) ++id;
    driver_->configs.emplace(id, std::move(entry));
    return id;
  }

  int remove_config(std::uint64_t config_id) override {
    if (!privileged()) return -EACCES;
    std::lock_guard lock(driver_->mu);
    if (config_id > 0x7FFFFFFF || driver_->configs.erase(static_cast<int>(config_id)) == 0) {
      return -ENOENT;
    }
    return 0;
  }

  int open_stream(const drm_i915_perf_open_param& param) override {
    constexpr std::uint32_t kKnownFlags =
        I915_PERF_FLAG_FD_CLOEXEC | I915_PERF_FLAG_FD_NONBLOCK | I915_PERF_FLAG_DISABLED;
    if ((param.flags & ~kKnownFlags) != 0) return -EINVAL;
    if (param.num_properties == 0 || param.num_properties >= kPerfPropMax) {
      return -EINVAL;
    }
    if (param.properties_ptr == 0) return -EFAULT;
    const auto* props =
        reinterpret_cast<const std::uint64_t*>(static_cast<std::uintptr_t>(param.properties_ptr));
    OpenProperties p;
    for (std::uint32_t i = 0; i < param.num_properties; ++i) {
      if (int err = read_property(props[2 * i], props[2 * i + 1], p)) return err;
    }
    if (int err = check_properties(p)) return err;
    std::unique_lock lock(driver_->mu);
    if (driver_->stream_open) return -EBUSY;
    if (!p.format) return -EINVAL;
    const auto config =
        driver_->configs.find(static_cast<int>(std::min<std::uint64_t>(p.metrics_set, 0x7FFFFFFF)));
    if (config == driver_->configs.end()) return -EINVAL;

    const oa::Platform& platform = sim_.config().platform;
    std::vector<mmio::PlanStep> plan;
    try {
      plan = mmio::plan_oa_programming(platform, *p.format, config->second.registers);
    } catch (const std::invalid_argument&) {
      return -ENODEV;  // a generation or configuration the simulated OA unit is not programmed for
    }
    const std::uint32_t ctx_control = ctx_control_for(platform.gen, p.exponent);
    SimStream stream =
        make_stream(param.flags, *p.format, mmio::reg::oa_block(platform.gen), ctx_control, plan);
    std::vector<oa::RegisterWrite> image =
        context_image_for(platform.gen, ctx_control, config->second.registers.flex);
    return start_stream_locked(std::move(stream), std::move(plan), std::move(image));
  }

  ssize_t read_stream(int fd, std::span<std::uint8_t> buf) override {
    const auto it = streams_.find(fd);
    if (it == streams_.end()) return -EBADF;
    SimStream& s = it->second;
    if (!s.enabled) return -EIO;
    for (;;) {
      std::vector<std::uint8_t> out;
      // As gen8_oa_read: a buffer overflow is reported, then OA restarts with an empty buffer;
      // a lost report is reported and its status bit cleared.
      const mmio::reg::OaRegisterBlock& block = *s.block;
      std::uint32_t status = sim_.read32(block.oa_status);
      if (status & mmio::SimGpu::kOaStatusBufferOverflow) {
        if (buf.size() < oa::kPerfRecordHeaderBytes) return -ENOSPC;
        oa::append_perf_record(out, oa::PerfRecord::Type::kBufferLost);
        sim_.write32(block.oa_control, 0);
        sim_.init_oa_buffer(options_.oa_buffer_bytes);
        sim_.write32(block.oa_control, s.oacontrol);
        status = sim_.read32(block.oa_status);
      }
      if (status & mmio::SimGpu::kOaStatusReportLost) {
        if (buf.size() < out.size() + oa::kPerfRecordHeaderBytes) {
          return out.empty() ? -ENOSPC : copy_out(out, buf);
        }
        oa::append_perf_record(out, oa::PerfRecord::Type::kReportLost);
        sim_.write32(block.oa_status, status & ~mmio::SimGpu::kOaStatusReportLost);
      }
      const std::size_t record_bytes =
          oa::kPerfRecordHeaderBytes + static_cast<std::size_t>(s.report_bytes);
      for (const oa::RawReport& r :
           sim_.read_oa_reports((buf.size() - out.size()) / record_bytes)) {
        oa::append_perf_record(out, oa::PerfRecord::Type::kSample,
                               std::span(r.bytes.data(), static_cast<std::size_t>(r.size)));
      }
      if (!out.empty()) return copy_out(out, buf);
      if (sim_.oa_reports_pending() > 0) return -ENOSPC;  // `buf` holds not even one record
      if (s.nonblock) return -EAGAIN;
      // A blocking read waits for the next report, as i915 does; on a virtual clock that only
      // another thread can advance.
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  int enable_stream(int fd, bool enable) override {
    const auto it = streams_.find(fd);
    if (it == streams_.end()) return -EBADF;
    SimStream& s = it->second;
    if (s.enabled == enable) return 0;
    if (enable) {
      // As i915's oa_enable: a fresh OA buffer, then OACONTROL counting again.
      sim_.init_oa_buffer(options_.oa_buffer_bytes);
      sim_.write32(s.block->oa_control, s.oacontrol);
    } else {
      sim_.write32(s.block->oa_control, 0);
    }
    s.enabled = enable;
    return 0;
  }

  void close_stream(int fd) override {
    const auto it = streams_.find(fd);
    if (it == streams_.end()) return;
    sim_.set_context_image({});
    it->second.programmer->restore();
    sim_.init_oa_buffer(0);
    streams_.erase(it);
    std::lock_guard lock(driver_->mu);
    driver_->stream_open = false;
  }

  std::unique_ptr<BatchRunner> make_batch_runner(const oa::Platform&) override {
    return make_sim_batch_runner(sim_);  // the simulated i915 of sim_'s own platform
  }

 private:
  bool privileged() const { return options_.perf_stream_paranoid == 0 || options_.perfmon_capable; }

  // One (id, value) pair of open_stream's properties into `p`: 0, or the errno i915 returns for
  // a property it refuses on its own.
  int read_property(std::uint64_t id, std::uint64_t value, OpenProperties& p) const {
    if (id == 0 || id >= kPerfPropMax) return -EINVAL;
    const oa::Platform& platform = sim_.config().platform;
    switch (id) {
      case DRM_I915_PERF_PROP_CTX_HANDLE:
        return -ENOENT;  // no GEM context has that handle
      case DRM_I915_PERF_PROP_SAMPLE_OA:
        p.sample_oa = value != 0;
        break;
      case DRM_I915_PERF_PROP_OA_METRICS_SET:
        if (value == 0) return -EINVAL;
        p.metrics_set = value;
        break;
      case DRM_I915_PERF_PROP_OA_FORMAT: {
        if (value == 0 || value >= kI915OaFormatMax) return -EINVAL;
        const auto f = oa::from_uapi(static_cast<int>(value), platform.gen);
        if (!f || !oa::format_exists_on(*f, platform.gen)) return -EINVAL;
        p.format = f;
        break;
      }
      case DRM_I915_PERF_PROP_OA_EXPONENT: {
        if (value > 31) return -EINVAL;
        // oa_exponent_to_ns(): the period counts at the OA timestamp rate (param 57).
        const double oa_hz = mmio::oa_timestamp_hz(platform, platform.timestamp_hz,
                                                   sim_.read32(mmio::reg::kRpmConfig0));
        const double hz = 1e9 / perf_period_ns(static_cast<int>(value), oa_hz);
        if (hz > static_cast<double>(options_.oa_max_sample_rate_hz) && !options_.perfmon_capable) {
          return -EACCES;
        }
        p.exponent = static_cast<int>(value);
        break;
      }
      case DRM_I915_PERF_PROP_HOLD_PREEMPTION:
        p.hold_preemption = value != 0;
        break;
      case DRM_I915_PERF_PROP_GLOBAL_SSEU:
        return -EINVAL;  // no slice/subslice model
      case DRM_I915_PERF_PROP_POLL_OA_PERIOD:
        if (value < 100'000) return -EINVAL;  // i915 polls no faster than every 100 µs
        break;
      case kPerfPropOaEngineClass:
        p.engine_class = value;
        break;
      case kPerfPropOaEngineInstance:
        p.engine_instance = value;
        break;
      default:
        return -EINVAL;
    }
    return 0;
  }

  // The checks of the properties together, which i915 makes before it takes the OA unit.
  int check_properties(const OpenProperties& p) const {
    // i915 (perf revision 6): class and instance come together, default to render 0, and name
    // an engine with an OA unit; the simulated GPU has the render engine's only.
    if (p.engine_class.has_value() != p.engine_instance.has_value()) return -EINVAL;
    if (p.engine_class && (*p.engine_class != kEngineClassRender || *p.engine_instance != 0)) {
      return -EINVAL;
    }
    if (p.hold_preemption) return -EINVAL;  // only with a context, and none can be named here
    if (!privileged()) return -EACCES;      // a system-wide stream
    if (!p.sample_oa) return -EINVAL;
    return 0;
  }

  // Programs the OA unit for `stream` and hands out its fd, or -EIO if programming fails. The
  // caller holds driver_->mu, so no other stream takes the OA unit meanwhile.
  int start_stream_locked(SimStream stream, std::vector<mmio::PlanStep> plan,
                          std::vector<oa::RegisterWrite> image) {
    sim_.init_oa_buffer(options_.oa_buffer_bytes);
    stream.programmer = std::make_unique<mmio::OaProgrammer>(sim_);
    try {
      stream.programmer->program(std::move(plan));  // restores what it wrote if it throws
    } catch (const std::exception&) {
      sim_.init_oa_buffer(0);
      return -EIO;
    }
    sim_.set_context_image(std::move(image));
    driver_->stream_open = true;
    const int fd = next_fd_++;
    streams_.emplace(fd, std::move(stream));
    return fd;
  }

  static ssize_t copy_out(const std::vector<std::uint8_t>& out, std::span<std::uint8_t> buf) {
    std::memcpy(buf.data(), out.data(), out.size());
    return static_cast<ssize_t>(out.size());
  }

  mmio::SimGpu& sim_;
  SimI915Options options_;
  std::shared_ptr<DriverState> driver_;
  std::map<int, SimStream> streams_;
  int next_fd_ = 1000;
};

}  // namespace

std::unique_ptr<I915Perf> make_sim_i915_perf(mmio::SimGpu& sim, const SimI915Options& options) {
  return std::make_unique<SimI915Perf>(sim, options);
}

}  // namespace oaprof::gpu
