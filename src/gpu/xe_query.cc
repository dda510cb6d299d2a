#include "gpu/xe_query.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::gpu {
namespace {

class RenderNodeXeQuery final : public XeQuery {
 public:
  RenderNodeXeQuery(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~RenderNodeXeQuery() override { ::close(fd_); }
  std::string describe() const override { return "render node " + path_; }
  int device_query(xe::DeviceQuery& query) override {
    for (;;) {
      if (::ioctl(fd_, xe::kIoctlDeviceQuery, &query) == 0) return 0;
      if (errno != EINTR && errno != EAGAIN) return -errno;
    }
  }

 private:
  std::string path_;
  int fd_;
};

template <typename T>
T read_at(std::span<const std::uint8_t> bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

}  // namespace

std::unique_ptr<XeQuery> open_xe_query(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    throw std::runtime_error(
        fmt::format("cannot open the xe render node {}: {}", path, std::strerror(errno)));
  }
  return std::make_unique<RenderNodeXeQuery>(path, fd);
}

std::vector<XeOaUnit> parse_xe_oa_units(std::span<const std::uint8_t> bytes) {
  const auto bad = [&](const std::string& why) {
    return std::runtime_error(fmt::format("xe's OA unit list ({} bytes) is malformed: {}",
                                          bytes.size(), why));
  };
  if (bytes.size() < sizeof(xe::QueryOaUnitsHeader)) throw bad("shorter than its header");
  const auto head = read_at<xe::QueryOaUnitsHeader>(bytes, 0);
  if (head.num_oa_units > kMaxXeOaUnits) {
    throw bad(fmt::format("{} units, more than {}", head.num_oa_units, kMaxXeOaUnits));
  }
  std::vector<XeOaUnit> units;
  std::size_t pos = sizeof(xe::QueryOaUnitsHeader);
  for (std::uint32_t i = 0; i < head.num_oa_units; ++i) {
    if (bytes.size() - pos < sizeof(xe::OaUnitHeader)) throw bad(fmt::format("unit {} is cut", i));
    const auto unit = read_at<xe::OaUnitHeader>(bytes, pos);
    pos += sizeof(xe::OaUnitHeader);
    if (unit.num_engines > kMaxXeOaEngines) {
      throw bad(fmt::format("unit {} has {} engines, more than {}", i, unit.num_engines,
                            kMaxXeOaEngines));
    }
    const std::size_t engine_bytes = unit.num_engines * sizeof(xe::EngineClassInstance);
    if (bytes.size() - pos < engine_bytes) throw bad(fmt::format("unit {}'s engines are cut", i));
    XeOaUnit u{unit.oa_unit_id, unit.oa_unit_type, unit.capabilities, unit.oa_timestamp_freq, {}};
    for (std::uint64_t e = 0; e < unit.num_engines; ++e) {
      u.engines.push_back(read_at<xe::EngineClassInstance>(bytes, pos));
      pos += sizeof(xe::EngineClassInstance);
    }
    units.push_back(std::move(u));
  }
  if (pos != bytes.size()) throw bad(fmt::format("{} bytes after the last unit", bytes.size() - pos));
  return units;
}

std::vector<XeOaUnit> query_xe_oa_units(XeQuery& xe) {
  xe::DeviceQuery q;
  q.query = xe::kQueryOaUnits;
  const auto failed = [&](const char* step, int rc) {
    return std::runtime_error(fmt::format("{}: DRM_XE_DEVICE_QUERY_OA_UNITS ({}) failed: {}",
                                          xe.describe(), step, std::strerror(-rc)));
  };
  if (const int rc = xe.device_query(q); rc != 0) throw failed("size", rc);
  if (q.size == 0 || q.size > (1u << 20)) {
    throw std::runtime_error(
        fmt::format("{}: xe wants {} bytes for its OA units; not an OA-capable xe", xe.describe(),
                    q.size));
  }
  std::vector<std::uint8_t> buffer(q.size);
  q.data = reinterpret_cast<std::uintptr_t>(buffer.data());
  if (const int rc = xe.device_query(q); rc != 0) throw failed("data", rc);
  return parse_xe_oa_units(std::span(buffer).first(std::min<std::size_t>(q.size, buffer.size())));
}

const XeOaUnit* render_oag(const std::vector<XeOaUnit>& units) {
  for (const XeOaUnit& u : units) {
    if (u.type != xe::kOaUnitTypeOag) continue;
    for (const auto& e : u.engines) {
      if (e.engine_class == xe::kEngineClassRender || e.engine_class == xe::kEngineClassCompute) {
        return &u;
      }
    }
  }
  return nullptr;
}

}  // namespace oaprof::gpu
