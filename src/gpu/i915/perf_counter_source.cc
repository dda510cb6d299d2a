// The perf read-out: i915 owns the OA configuration through a perf stream, writing it into every
// context image, so context switches cannot undo it (the weakness of mmio/rpc on Gen8–11).
//
// Snapshots at kernel boundaries are taken with MI_REPORT_PERF_COUNT (the rpc batch) while the
// stream holds the configuration, not by picking the periodic report closest to the boundary:
// a periodic report is up to one period away from the boundary (10.9 ms at the default
// exponent 16 on a 12 MHz timestamp), far longer than many kernels, whereas MI_REPORT_PERF_COUNT
// samples at the boundary in command-stream order. The periodic records still arrive; each
// snapshot drains them so the OA buffer never overflows, and counts lost-report records.
//
// The uapi sits behind I915Perf: ioctls on a real GPU, SimI915Perf on the simulator, which
// behaves as i915 does (checks, errno, context images, record layout), so the same read-out runs
// end to end on both.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <i915_drm.h>

#include "gpu/counter_source.h"
#include "gpu/i915/i915_perf.h"
#include "gpu/i915/perf_stream.h"
#include "gpu/i915/report_batch.h"
#include "gpu/sim/sim_i915_perf.h"
#include "gpu/stream_counter_source.h"

namespace oaprof::gpu {
namespace {

class PerfCounterSource final : public StreamCounterSource {
 public:
  PerfCounterSource(Device& device, std::unique_ptr<I915Perf> perf)
      : device_(device), perf_(std::move(perf)) {}
  ~PerfCounterSource() override { stop(); }

  oa::RawReport snapshot(std::uint32_t report_id) override {
    if (stream_ < 0) throw std::logic_error("perf read-out: snapshot before start()");
    drain();
    return take_report(*runner_, device_.platform.gen, format_, report_id,
                       device_.facts.oa_cs_shift, "perf read-out");
  }

  void stop() override {
    runner_.reset();
    if (stream_ >= 0) perf_->close_stream(stream_);
    stream_ = -1;
    if (added_config_) perf_->remove_config(config_id_);
    added_config_ = false;
    perf_->close_node();
  }

  void signal_kernel(bool running, const oa::KernelWork* work) override {
    if (device_.sim != nullptr) device_.sim->set_kernel_running(running, work);
  }

  PerfStreamCounts perf_stream_counts() const override {
    return {records_.samples, records_.reports_lost, records_.buffer_lost};
  }

  std::optional<oa::RawReport> last_periodic_report() const override {
    if (records_.last_report.empty()) return std::nullopt;
    oa::RawReport r;
    r.size = static_cast<int>(std::min(records_.last_report.size(), r.bytes.size()));
    std::memcpy(r.bytes.data(), records_.last_report.data(), static_cast<std::size_t>(r.size));
    return r;
  }

  // RPSTAT where the BAR is mapped (the simulator); without it, unknown.
  std::optional<double> gpu_freq_mhz() override { return read_gpu_freq_mhz(device_); }

 protected:
  // i915 names every configuration by a UUID and refuses one without registers ("No OA registers
  // given", EINVAL), so the built-in set (no mux, boolean or flex) has nothing for PERF_OPEN to
  // hold.
  std::string no_configuration_message() const override {
    return "--access perf needs a metric set with registers and a hw_config_guid: i915 refuses "
           "a configuration without registers, so the built-in set cannot be streamed; choose "
           "one with --metric-set (`oaprof metrics list`), or use --access mmio or rpc for the "
           "built-in set";
  }

  void open(oa::ReportFormat format, const mmio::OaConfig& config) override {
    format_ = format;
    records_ = {};
    perf_->open_node();
    config_id_ = config_id_for(config);
    const auto props = perf_open_properties(config_id_, format, device_.perf_period_exponent,
                                            device_.platform.gen);
    drm_i915_perf_open_param param{};
    param.flags = I915_PERF_FLAG_FD_CLOEXEC | I915_PERF_FLAG_FD_NONBLOCK;
    param.num_properties = static_cast<std::uint32_t>(props.size() / 2);
    param.properties_ptr = reinterpret_cast<std::uintptr_t>(props.data());
    const int stream = perf_->open_stream(param);
    if (stream < 0) {
      throw std::runtime_error(fmt::format(
          "{} refused the perf stream (PERF_OPEN): {}; a system-wide stream needs CAP_PERFMON "
          "or /proc/sys/dev/i915/perf_stream_paranoid = 0, a period no faster than "
          "dev.i915.oa_max_sample_rate, and no other OA stream open (EBUSY: another "
          "profiler holds the OA unit)",
          perf_->describe(), std::strerror(-stream)));
    }
    stream_ = stream;
    runner_ = perf_->make_batch_runner(device_.platform);
  }

 private:
  std::uint64_t config_id_for(const mmio::OaConfig& config) {
    if (auto id = perf_->find_config_id(config.guid)) return *id;
    if (config.guid.size() != 36) {
      throw std::invalid_argument(
          fmt::format("metric set guid '{}' is not a 36-character UUID", config.guid));
    }
    const int id = add_oa_config(*perf_, config);
    if (id < 0) {
      throw std::runtime_error(fmt::format(
          "{} refused metric set {} (PERF_ADD_CONFIG): {}; adding a configuration needs "
          "CAP_PERFMON or perf_stream_paranoid = 0, a valid UUID and registers i915 accepts",
          perf_->describe(), config.guid, std::strerror(-id)));
    }
    added_config_ = true;
    return static_cast<std::uint64_t>(id);
  }

  // Reads the pending records so the OA buffer never overflows, counting losses. At most one OA
  // buffer's worth (i915's is 16 MiB) per call: with a short period the unit can write reports
  // as fast as they are read (the simulator's, in a slow sanitizer build, faster), and a drain
  // that waited for an empty buffer would never return. What comes meanwhile is the next
  // call's.
  void drain() {
    constexpr std::size_t kOaBufferBytes = 16u << 20;
    std::size_t read_bytes = 0;
    while (read_bytes < kOaBufferBytes) {
      const ssize_t n = perf_->read_stream(stream_, read_buf_);
      if (n == -EINTR) continue;
      if (n <= 0) break;  // -EAGAIN: nothing pending
      read_bytes += static_cast<std::size_t>(n);
      summarize_perf_records(std::span(read_buf_.data(), static_cast<std::size_t>(n)),
                             oa::layout_of(format_).size_bytes, records_);
    }
  }

  Device& device_;
  std::unique_ptr<I915Perf> perf_;
  oa::ReportFormat format_ = oa::ReportFormat::kA32u40_A4u32_B8_C8;
  int stream_ = -1;
  std::uint64_t config_id_ = 0;
  bool added_config_ = false;
  std::unique_ptr<BatchRunner> runner_;
  PerfRecordSummary records_;
  std::vector<std::uint8_t> read_buf_ = std::vector<std::uint8_t>(64 * 1024);  // 248 records
};

}  // namespace

std::unique_ptr<CounterSource> make_perf_source(Device& device) {
  if (device.platform.driver == oa::KernelDriver::kXe) return make_xe_source(device);
  auto perf = device.simulated()
                  ? make_sim_i915_perf(*device.sim, {.oa_buffer_bytes = device.sim_oa_buffer_bytes})
                  : make_drm_i915_perf(resolve_render_node(device), resolve_card_sysfs(device));
  return std::make_unique<PerfCounterSource>(device, std::move(perf));
}

}  // namespace oaprof::gpu
