// The perf read-out: i915 owns the OA configuration through a perf stream, writing it into every
// context image, so context switches cannot undo it (the weakness of mmio/rpc on Gen8–11).
//
// Snapshots at kernel boundaries are taken with MI_REPORT_PERF_COUNT (the rpc batch) while the
// stream holds the configuration, not by picking the periodic report closest to the boundary:
// a periodic report is up to one period away from the boundary (10.9 ms at the default
// exponent 16 on a 12 MHz timestamp), far longer than many kernels, whereas MI_REPORT_PERF_COUNT
// samples at the boundary in command-stream order. The periodic records still arrive; each
// snapshot drains them so the OA buffer never overflows, and counts lost-report records.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <i915_drm.h>
#include <xf86drm.h>

#include "gpu/counter_source.h"
#include "gpu/drm_node.h"
#include "gpu/perf_stream.h"
#include "gpu/report_batch.h"

namespace oaprof::gpu {
namespace {

class PerfCounterSource final : public CounterSource {
 public:
  explicit PerfCounterSource(Device& device) : device_(device) {}
  ~PerfCounterSource() override { stop(); }

  std::string_view name() const override { return "perf"; }

  void start(oa::ReportFormat format) override { start(format, mmio::OaConfig{}); }

  void start(oa::ReportFormat format, const mmio::OaConfig& config) override {
    stop();
    if (config.guid.empty()) {
      throw std::invalid_argument(
          "--access perf needs a metric set (its hw_config_guid names the i915 configuration); "
          "choose one with --metric-set");
    }
    format_ = format;
    try {
      fd_ = open_i915_render_node(device_.render_node);
      config_id_ = config_id_for(config);
      const auto props =
          perf_open_properties(config_id_, format, device_.perf_period_exponent);
      drm_i915_perf_open_param param{};
      param.flags = I915_PERF_FLAG_FD_CLOEXEC | I915_PERF_FLAG_FD_NONBLOCK;
      param.num_properties = static_cast<std::uint32_t>(props.size() / 2);
      param.properties_ptr = reinterpret_cast<std::uintptr_t>(props.data());
      stream_ = drmIoctl(fd_, DRM_IOCTL_I915_PERF_OPEN, &param);
      if (stream_ < 0) {
        throw std::runtime_error(fmt::format(
            "i915 refused the perf stream (PERF_OPEN): {}; on Gen8–11 this needs CAP_PERFMON "
            "or /proc/sys/dev/i915/perf_stream_paranoid = 0, and a period no faster than "
            "dev.i915.oa_max_sample_rate", std::strerror(errno)));
      }
      runner_ = make_drm_batch_runner(device_.render_node);
    } catch (...) {
      stop();
      throw;
    }
  }

  oa::RawReport snapshot(std::uint32_t report_id) override {
    if (stream_ < 0) throw std::logic_error("perf read-out: snapshot before start()");
    drain();
    return take_report(*runner_, device_.platform.gen, format_, report_id, "perf read-out");
  }

  void stop() override {
    runner_.reset();
    if (stream_ >= 0) close(stream_);
    stream_ = -1;
    if (added_config_ && fd_ >= 0) {
      std::uint64_t id = config_id_;
      drmIoctl(fd_, DRM_IOCTL_I915_PERF_REMOVE_CONFIG, &id);
    }
    added_config_ = false;
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  void kernel_running(bool) override {}

 private:
  std::uint64_t config_id_for(const mmio::OaConfig& config) {
    if (auto id = find_metrics_config_id(device_.drm_card_sysfs, config.guid)) return *id;
    if (config.guid.size() != 36) {
      throw std::invalid_argument(fmt::format(
          "metric set guid '{}' is not a 36-character UUID", config.guid));
    }
    auto regs = [](const std::vector<oa::RegisterWrite>& ws) {
      std::vector<std::uint32_t> out;
      for (const auto& w : ws) out.insert(out.end(), {w.address, w.value});
      return out;
    };
    const auto mux = regs(config.mux), boolean = regs(config.boolean), flex = regs(config.flex);
    drm_i915_perf_oa_config c{};
    std::memcpy(c.uuid, config.guid.data(), sizeof c.uuid);
    c.n_mux_regs = static_cast<std::uint32_t>(config.mux.size());
    c.n_boolean_regs = static_cast<std::uint32_t>(config.boolean.size());
    c.n_flex_regs = static_cast<std::uint32_t>(config.flex.size());
    c.mux_regs_ptr = reinterpret_cast<std::uintptr_t>(mux.data());
    c.boolean_regs_ptr = reinterpret_cast<std::uintptr_t>(boolean.data());
    c.flex_regs_ptr = reinterpret_cast<std::uintptr_t>(flex.data());
    const int id = drmIoctl(fd_, DRM_IOCTL_I915_PERF_ADD_CONFIG, &c);
    if (id < 0) {
      throw std::runtime_error(fmt::format(
          "i915 refused metric set {} (PERF_ADD_CONFIG): {}; adding a configuration needs "
          "CAP_PERFMON or perf_stream_paranoid = 0", config.guid, std::strerror(errno)));
    }
    added_config_ = true;
    return static_cast<std::uint64_t>(id);
  }

  void drain() {
    std::vector<std::uint8_t> buf(64 * 1024);
    for (;;) {
      const ssize_t n = read(stream_, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // EAGAIN: nothing pending
      summarize_perf_records(std::span(buf.data(), static_cast<std::size_t>(n)),
                             oa::layout_of(format_).size_bytes, records_);
    }
  }

  Device& device_;
  oa::ReportFormat format_ = oa::ReportFormat::kA32u40_A4u32_B8_C8;
  int fd_ = -1;
  int stream_ = -1;
  std::uint64_t config_id_ = 0;
  bool added_config_ = false;
  std::unique_ptr<BatchRunner> runner_;
  PerfRecordSummary records_;
};

}  // namespace

std::unique_ptr<CounterSource> make_perf_source(Device& device) {
  if (device.simulated()) {
    throw std::invalid_argument(
        "--access perf needs the i915 perf interface of a real GPU; on --device sim use "
        "--access mmio, rpc or sim");
  }
  return std::make_unique<PerfCounterSource>(device);
}

}  // namespace oaprof::gpu
