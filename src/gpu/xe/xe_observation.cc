#include "gpu/xe/xe_observation.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "gpu/i915/perf_stream.h"

namespace oaprof::gpu {

// Sources: linux include/uapi/drm/xe_drm.h @ torvalds/linux
// c8507a25cebd179db935dd266a33c51bef1b1e80 (structs, ioctl and property numbers, status bits)
// and drivers/gpu/drm/xe/xe_oa.c @ 2d46ecc958c9cb7b0f116aa52cf9296b6c71d784
// (xe_oa_user_extensions: MAX_USER_EXTENSIONS 16 -> E2BIG, a non-zero pad or an unknown name or
// property -> EINVAL). OA_BUFFER_SIZE (12) and WAIT_NUM_REPORTS (13): xe_oa.c
// xe_oa_set_prop_oa_buffer_size (torvalds/linux 720f63a83873: a power of two from 128 KiB to
// 128 MiB) and xe_oa_set_prop_wait_num_reports (5637797add2a: not 0), else EINVAL.
namespace {

constexpr int kMaxUserExtensions = 16;
constexpr std::uint64_t kMinOaBufferBytes = 128u << 10, kMaxOaBufferBytes = 128u << 20;

bool valid_oa_buffer_size(std::uint64_t bytes) {
  return std::has_single_bit(bytes) && bytes >= kMinOaBufferBytes && bytes <= kMaxOaBufferBytes;
}

}  // namespace

XePropertyChain::XePropertyChain(const XeOaStreamParams& params) {
  links_.reserve(6);
  add(xe::kOaPropOaUnitId, params.oa_unit_id);
  if (params.sample) add(xe::kOaPropSampleOa, 1);
  add(xe::kOaPropOaMetricSet, params.metric_set);
  add(xe::kOaPropOaFormat, params.oa_format);
  if (params.period_exponent >= 0) {
    add(xe::kOaPropOaPeriodExponent, static_cast<std::uint64_t>(params.period_exponent));
  }
  if (params.disabled) add(xe::kOaPropOaDisabled, 1);
  // Linked only now: the vector no longer grows, so the addresses hold.
  for (std::size_t i = 0; i + 1 < links_.size(); ++i) {
    links_[i].base.next_extension = reinterpret_cast<std::uintptr_t>(&links_[i + 1]);
  }
}

void XePropertyChain::add(std::uint32_t property, std::uint64_t value) {
  xe::ExtSetProperty link;
  link.base.name = xe::kOaExtensionSetProperty;
  link.property = property;
  link.value = value;
  links_.push_back(link);
}

std::uint64_t XePropertyChain::head() const {
  return links_.empty() ? 0 : reinterpret_cast<std::uintptr_t>(links_.data());
}

int parse_xe_oa_properties(std::uint64_t head, XeUserRead read, XeParsedOpen& out) {
  out = {};
  out.params.sample = false;
  std::uint64_t at = head;
  for (int n = 0; at != 0; ++n) {
    if (n >= kMaxUserExtensions) return -E2BIG;
    xe::ExtSetProperty ext;
    if (!read(at, &ext, sizeof ext)) return -EFAULT;
    if (ext.base.pad != 0 || ext.base.name != xe::kOaExtensionSetProperty) return -EINVAL;
    if (ext.pad != 0 || ext.property < xe::kOaPropOaUnitId ||
        ext.property > xe::kOaPropWaitNumReports) {
      return -EINVAL;
    }
    switch (ext.property) {
      case xe::kOaPropOaUnitId:
        if (ext.value > UINT32_MAX) return -EINVAL;
        out.params.oa_unit_id = static_cast<std::uint32_t>(ext.value);
        break;
      case xe::kOaPropSampleOa:
        out.params.sample = ext.value != 0;
        break;
      case xe::kOaPropOaMetricSet:
        out.params.metric_set = ext.value;
        break;
      case xe::kOaPropOaFormat:
        out.params.oa_format = ext.value;
        out.has_format = true;
        break;
      case xe::kOaPropOaPeriodExponent:
        if (ext.value > 31) return -EINVAL;  // OA_EXPONENT_MAX
        out.params.period_exponent = static_cast<int>(ext.value);
        break;
      case xe::kOaPropOaDisabled:
        out.params.disabled = ext.value != 0;
        break;
      case xe::kOaPropOaBufferSize:
        if (!valid_oa_buffer_size(ext.value)) return -EINVAL;
        out.oa_buffer_bytes = ext.value;
        break;
      case xe::kOaPropWaitNumReports:
        if (ext.value == 0) return -EINVAL;
        out.wait_num_reports = ext.value;
        break;
      default:
        out.other_properties.push_back(ext.property);
        break;
    }
    at = ext.base.next_extension;
  }
  return 0;
}

namespace {

class DrmXeObservation final : public XeObservation {
 public:
  DrmXeObservation(std::string node, std::string card)
      : node_(std::move(node)), card_(std::move(card)) {
    fd_ = ::open(node_.c_str(), O_RDWR | O_CLOEXEC);
    if (fd_ < 0) {
      throw std::runtime_error(fmt::format(
          "cannot open the xe render node {}: {}; oaprof needs read/write access to it (the "
          "render group, or root)",
          node_, std::strerror(errno)));
    }
  }
  ~DrmXeObservation() override {
    if (fd_ >= 0) ::close(fd_);
  }

  std::string describe() const override { return "render node " + node_; }

  std::vector<XeOaUnit> oa_units() override { return query_xe_oa_units(query()); }

  XeEngineCycles engine_cycles(const xe::EngineClassInstance& engine) override {
    return query_xe_engine_cycles(query(), engine);
  }

  std::optional<std::uint64_t> find_config_id(const std::string& uuid) override {
    return find_metrics_config_id(card_, uuid);
  }

  int add_config(const xe::OaConfigParam& config) override {
    return observation(xe::kObservationOpAddConfig, reinterpret_cast<std::uintptr_t>(&config));
  }

  int remove_config(std::uint64_t id) override {
    return observation(xe::kObservationOpRemoveConfig, reinterpret_cast<std::uintptr_t>(&id));
  }

  int open_stream(std::uint64_t chain_head) override {
    const int stream = observation(xe::kObservationOpStreamOpen, chain_head);
    if (stream < 0) return stream;
    // xe's STREAM_OPEN takes no flags: close-on-exec and non-blocking reads are set here.
    if (::fcntl(stream, F_SETFD, FD_CLOEXEC) < 0 ||
        ::fcntl(stream, F_SETFL, ::fcntl(stream, F_GETFL) | O_NONBLOCK) < 0) {
      const int err = errno;
      ::close(stream);
      return -err;
    }
    return stream;
  }

  ssize_t read_stream(int stream, std::span<std::uint8_t> buf) override {
    const ssize_t n = ::read(stream, buf.data(), buf.size());
    return n < 0 ? -errno : n;
  }

  int enable_stream(int stream, bool enable) override {
    const int r = ::ioctl(stream, enable ? xe::kIoctlStreamEnable : xe::kIoctlStreamDisable, 0);
    return r < 0 ? -errno : 0;
  }

  int stream_status(int stream, std::uint64_t& oa_status) override {
    xe::OaStreamStatus status;
    if (::ioctl(stream, xe::kIoctlStreamStatus, &status) < 0) return -errno;
    oa_status = status.oa_status;
    return 0;
  }

  void close_stream(int stream) override { ::close(stream); }

 private:
  int observation(std::uint64_t op, std::uint64_t param) {
    xe::ObservationParam p;
    p.observation_type = xe::kObservationTypeOa;
    p.observation_op = op;
    p.param = param;
    for (;;) {
      const int r = ::ioctl(fd_, xe::kIoctlObservation, &p);
      if (r >= 0) return r;
      if (errno != EINTR && errno != EAGAIN) return -errno;
    }
  }

  // The node's query interface, opened on first use and kept: a snapshot asks ENGINE_CYCLES.
  XeQuery& query() {
    if (!query_) query_ = open_xe_query(node_);
    return *query_;
  }

  std::string node_, card_;
  int fd_ = -1;
  std::unique_ptr<XeQuery> query_;
};

}  // namespace

std::unique_ptr<XeObservation> make_drm_xe_observation(const std::string& render_node,
                                                       const std::string& card_sysfs) {
  return std::make_unique<DrmXeObservation>(render_node, card_sysfs);
}

void drain_xe_stream(XeObservation& xe, int stream, int report_bytes, XeStreamCounts& counts,
                     std::size_t max_bytes, void (*on_report)(std::span<const std::uint8_t>, void*),
                     void* context) {
  if (report_bytes <= 0) throw std::invalid_argument("drain_xe_stream: no report size");
  // 64 KiB or one report, whichever is more, rounded to whole reports.
  const auto size = static_cast<std::size_t>(report_bytes);
  std::vector<std::uint8_t> buf(std::max<std::size_t>(size, (64u << 10) / size * size));
  std::size_t total = 0;
  int eio_in_a_row = 0;
  while (total < max_bytes) {
    const ssize_t n = xe.read_stream(stream, buf);
    if (n == -EINTR) continue;
    if (n == -EAGAIN || n == 0) return;
    if (n == -EIO) {
      // xe clears the status bits it reports and returns EIO before any report of that read.
      if (++eio_in_a_row > 2) {
        throw std::runtime_error(
            fmt::format("{}: the OA stream keeps failing with EIO", xe.describe()));
      }
      std::uint64_t status = 0;
      if (const int r = xe.stream_status(stream, status); r < 0) {
        throw std::runtime_error(fmt::format("{}: the OA stream failed (EIO) and STATUS failed: {}",
                                             xe.describe(), std::strerror(-r)));
      }
      counts.report_lost += (status & xe::kOaStatusReportLost) != 0;
      counts.buffer_overflow += (status & xe::kOaStatusBufferOverflow) != 0;
      counts.counter_overflow += (status & xe::kOaStatusCounterOverflow) != 0;
      continue;
    }
    if (n < 0) {
      throw std::runtime_error(fmt::format("{}: reading the OA stream failed: {}", xe.describe(),
                                           std::strerror(static_cast<int>(-n))));
    }
    eio_in_a_row = 0;
    const auto got = static_cast<std::size_t>(n);
    if (got % size != 0) {
      throw std::runtime_error(
          fmt::format("{}: the OA stream returned {} bytes, not whole {}-byte reports",
                      xe.describe(), got, size));
    }
    for (std::size_t at = 0; at < got; at += size) {
      const std::span<const std::uint8_t> report(buf.data() + at, size);
      ++counts.reports;
      if (on_report != nullptr) on_report(report, context);
    }
    counts.last_report.assign(buf.begin() + static_cast<std::ptrdiff_t>(got - size),
                              buf.begin() + static_cast<std::ptrdiff_t>(got));
    total += got;
  }
}

}  // namespace oaprof::gpu
