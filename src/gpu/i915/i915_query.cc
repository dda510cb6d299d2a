#include "gpu/i915/i915_query.h"

#include <i915_drm.h>

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <xf86drm.h>

#include "gpu/drm_node.h"
#include "mmio/timestamp_clock.h"
#include "oa/report_format.h"

namespace oaprof::gpu {
namespace {

// No topology i915 describes comes near this (8 slices × 8 subslices × 4 EU bytes and masks):
// a larger length is a broken answer, not something to allocate.
constexpr std::int32_t kMaxTopologyBytes = 64 * 1024;

class DrmI915Query final : public I915Query {
 public:
  DrmI915Query(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~DrmI915Query() override { ::close(fd_); }
  DrmI915Query(const DrmI915Query&) = delete;
  DrmI915Query& operator=(const DrmI915Query&) = delete;

  std::string describe() const override { return "render node " + path_; }
  int query(drm_i915_query& q) override {
    return drmIoctl(fd_, DRM_IOCTL_I915_QUERY, &q) < 0 ? -errno : 0;
  }
  int get_param(drm_i915_getparam& p) override {
    return drmIoctl(fd_, DRM_IOCTL_I915_GETPARAM, &p) < 0 ? -errno : 0;
  }

 private:
  std::string path_;
  int fd_;
};

// One DRM_IOCTL_I915_QUERY of the topology item; its length as i915 left it.
std::int32_t topology_item(I915Query& i915, std::int32_t length, std::uint8_t* data) {
  drm_i915_query_item item{};
  item.query_id = DRM_I915_QUERY_TOPOLOGY_INFO;
  item.length = length;
  item.data_ptr = reinterpret_cast<std::uintptr_t>(data);
  drm_i915_query q{};
  q.num_items = 1;
  q.items_ptr = reinterpret_cast<std::uintptr_t>(&item);
  if (const int err = i915.query(q); err < 0) {
    throw std::runtime_error(
        fmt::format("{}: DRM_IOCTL_I915_QUERY failed: {}", i915.describe(), std::strerror(-err)));
  }
  if (item.length < 0) {
    throw std::runtime_error(fmt::format("{}: i915 refused the topology query: {}", i915.describe(),
                                         std::strerror(-item.length)));
  }
  return item.length;
}

}  // namespace

std::unique_ptr<I915Query> open_i915_query(const std::string& path) {
  const int fd = open_i915_render_node(path);
  return std::make_unique<DrmI915Query>(path, fd);
}

oa::Topology query_topology(I915Query& i915) {
  const std::int32_t length = topology_item(i915, 0, nullptr);
  if (length <= 0 || length > kMaxTopologyBytes) {
    throw std::runtime_error(fmt::format("{}: the topology query answered a length of {} bytes",
                                         i915.describe(), length));
  }
  std::vector<std::uint8_t> data(static_cast<std::size_t>(length), 0);  // header flags must be 0
  const std::int32_t written = topology_item(i915, length, data.data());
  if (written != length) {
    throw std::runtime_error(fmt::format("{}: the topology query answered {} bytes, then {}",
                                         i915.describe(), length, written));
  }
  try {
    return oa::parse_topology(data);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(fmt::format("{}: {}", i915.describe(), e.what()));
  }
}

namespace {

struct ParamAnswer {
  int err = 0;  // 0 or -errno
  int value = 0;
};

ParamAnswer ask_param(I915Query& i915, int param) {
  ParamAnswer a;
  drm_i915_getparam p{};
  p.param = param;
  p.value = &a.value;
  a.err = i915.get_param(p);
  return a;
}

// A frequency parameter's answer in Hz; throws naming the node and the parameter `name` when
// the ioctl failed or answered a non-positive rate.
double positive_hz(const I915Query& i915, ParamAnswer a, std::string_view name) {
  if (a.err < 0) {
    throw std::runtime_error(
        fmt::format("{}: {}: {}", i915.describe(), name, std::strerror(-a.err)));
  }
  if (a.value <= 0) {
    throw std::runtime_error(fmt::format("{}: {} is {}", i915.describe(), name, a.value));
  }
  return a.value;
}

}  // namespace

double query_cs_timestamp_hz(I915Query& i915) {
  return positive_hz(i915, ask_param(i915, I915_PARAM_CS_TIMESTAMP_FREQUENCY),
                     "I915_PARAM_CS_TIMESTAMP_FREQUENCY");
}

OaTimestampRate query_oa_timestamp_hz(I915Query& i915) {
  const ParamAnswer a = ask_param(i915, kI915ParamOaTimestampFrequency);
  if (a.err == -EINVAL) {
    return {query_cs_timestamp_hz(i915),
            fmt::format("I915_PARAM_CS_TIMESTAMP_FREQUENCY on {}: its kernel predates "
                        "I915_PARAM_OA_TIMESTAMP_FREQUENCY (6.2) and drives no OA unit whose "
                        "rate differs",
                        i915.describe())};
  }
  return {positive_hz(i915, a, "I915_PARAM_OA_TIMESTAMP_FREQUENCY"),
          "I915_PARAM_OA_TIMESTAMP_FREQUENCY on " + i915.describe()};
}

namespace {

// The report timestamp rate from the OA timestamp frequency (param 57, param 51 on a kernel
// without it), and the OA unit's rate against the CS one, a power of two (i915_perf.c
// i915_perf_oa_timestamp_frequency: clock_frequency << (3 - shift)).
void read_report_rate(const oa::Platform& platform, I915Query& i915, oa::DeviceFacts& f) {
  const OaTimestampRate oa = query_oa_timestamp_hz(i915);
  const double cs = query_cs_timestamp_hz(i915);
  const double ratio = std::log2(oa.hz / cs);
  if (ratio < 0 || ratio > 3 || ratio != std::floor(ratio)) {
    throw std::runtime_error(fmt::format(
        "{}: the OA timestamp frequency {} Hz is not the CS one ({} Hz) times 1, 2, 4 or 8, "
        "as i915 gives it; pass --timestamp-frequency to decode, and report the kernel",
        i915.describe(), oa.hz, cs));
  }
  f.timestamp_hz = oa::report_timestamp_hz(platform.gen, oa.hz);
  f.oa_cs_shift = static_cast<int>(ratio);
  f.timestamp_source = oa::TimestampSource::kI915GetParam;
  const int shift = oa::report_timestamp_shift(platform.gen);
  f.timestamp_note = shift == 0 ? oa.how : fmt::format("{}, >> {} in reports", oa.how, shift);
}

}  // namespace

oa::DeviceFacts read_device_facts(const oa::Platform& platform, I915Query* i915,
                                  const std::string& no_i915, mmio::Mmio* registers) {
  oa::DeviceFacts f = oa::table_facts(platform, no_i915);
  if (i915 != nullptr) {
    try {
      f.topology = query_topology(*i915);
      f.topology_source = oa::TopologySource::kI915Query;
      f.topology_note = "DRM_I915_QUERY_TOPOLOGY_INFO on " + i915->describe();
    } catch (const std::exception& e) {
      f.topology_note = e.what();
    }
    try {
      read_report_rate(platform, *i915, f);
      return f;
    } catch (const std::exception& e) {
      f.timestamp_note = e.what();
    }
  }
  if (registers != nullptr) {
    try {
      if (const auto r = mmio::read_timestamp_frequency(*registers, platform)) {
        f.timestamp_hz = oa::report_timestamp_hz(platform.gen, std::ldexp(r->hz, r->oa_cs_shift));
        f.oa_cs_shift = r->oa_cs_shift;
        f.timestamp_source = oa::TimestampSource::kRegisters;
        f.timestamp_note =
            r->oa_cs_shift == 0
                ? r->how
                : fmt::format(
                      "{}; OA timestamp << {} (CTC shift ignored), >> {} "
                      "in reports",
                      r->how, r->oa_cs_shift, oa::report_timestamp_shift(platform.gen));
      }
    } catch (const std::exception& e) {
      f.timestamp_note += fmt::format("; the clock registers could not be read: {}", e.what());
    }
  }
  return f;
}

}  // namespace oaprof::gpu
