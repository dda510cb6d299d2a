#include "gpu/xe/xe_query.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include <fmt/format.h>

#include "oa/report_format.h"

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

// A device query in the uapi's two steps: the size xe needs, then the data. Throws naming the
// query when either fails or the size is 0 (xe answers nothing: an admin-only PF, or no such
// thing on this device) or past 1 MiB.
std::vector<std::uint8_t> query_bytes(XeQuery& xe, std::uint32_t query, const char* name,
                                      const char* what) {
  xe::DeviceQuery q;
  q.query = query;
  const auto failed = [&](const char* step, int rc) {
    return std::runtime_error(fmt::format("{}: DRM_XE_DEVICE_QUERY_{} ({}) failed: {}",
                                          xe.describe(), name, step, std::strerror(-rc)));
  };
  if (const int rc = xe.device_query(q); rc != 0) throw failed("size", rc);
  if (q.size == 0 || q.size > (1u << 20)) {
    throw std::runtime_error(fmt::format("{}: xe wants {} bytes for {}; it gives none here",
                                         xe.describe(), q.size, what));
  }
  std::vector<std::uint8_t> buffer(q.size);
  q.data = reinterpret_cast<std::uintptr_t>(buffer.data());
  if (const int rc = xe.device_query(q); rc != 0) throw failed("data", rc);
  buffer.resize(std::min<std::size_t>(q.size, buffer.size()));
  return buffer;
}

// A little-endian mask of `bytes` bytes as 64 bits; nullopt when a bit past the 64th is set.
std::optional<std::uint64_t> mask64(std::span<const std::uint8_t> bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i >= 8) {
      if (bytes[i] != 0) return std::nullopt;
      continue;
    }
    v |= std::uint64_t{bytes[i]} << (8 * i);
  }
  return v;
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
    return std::runtime_error(
        fmt::format("xe's OA unit list ({} bytes) is malformed: {}", bytes.size(), why));
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
  if (pos != bytes.size())
    throw bad(fmt::format("{} bytes after the last unit", bytes.size() - pos));
  return units;
}

std::vector<XeOaUnit> query_xe_oa_units(XeQuery& xe) {
  return parse_xe_oa_units(query_bytes(xe, xe::kQueryOaUnits, "OA_UNITS", "its OA units"));
}

std::vector<std::uint8_t> encode_xe_oa_units(const std::vector<XeOaUnit>& units) {
  std::vector<std::uint8_t> out;
  const auto append = [&](const auto& value) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
    out.insert(out.end(), p, p + sizeof value);
  };
  append(xe::QueryOaUnitsHeader{0, static_cast<std::uint32_t>(units.size()), 0});
  for (const XeOaUnit& u : units) {
    xe::OaUnitHeader h{};
    h.oa_unit_id = u.id;
    h.oa_unit_type = u.type;
    h.capabilities = u.capabilities;
    h.oa_timestamp_freq = u.timestamp_hz;
    h.num_engines = u.engines.size();
    append(h);
    for (const auto& e : u.engines) append(e);
  }
  return out;
}

std::optional<xe::EngineClassInstance> render_engine(const XeOaUnit& unit) {
  for (const auto& e : unit.engines) {
    if (e.engine_class == xe::kEngineClassRender || e.engine_class == xe::kEngineClassCompute) {
      return e;
    }
  }
  return std::nullopt;
}

const XeOaUnit* render_oag(const std::vector<XeOaUnit>& units) {
  for (const XeOaUnit& u : units) {
    if (u.type == xe::kOaUnitTypeOag && render_engine(u)) return &u;
  }
  return nullptr;
}

XeGtTopology parse_xe_gt_topology(std::span<const std::uint8_t> bytes, std::uint16_t gt_id) {
  const auto bad = [&](const std::string& why) {
    return std::runtime_error(
        fmt::format("xe's GT topology ({} bytes) is malformed: {}", bytes.size(), why));
  };
  XeGtTopology t;
  t.gt_id = gt_id;
  bool dss = false, eus = false;
  std::size_t pos = 0;
  for (std::size_t n = 0; pos < bytes.size(); ++n) {
    if (n == kMaxXeTopologyMasks) throw bad(fmt::format("more than {} masks", n));
    if (bytes.size() - pos < sizeof(xe::TopologyMaskHeader)) throw bad("a header is cut");
    const auto head = read_at<xe::TopologyMaskHeader>(bytes, pos);
    pos += sizeof(xe::TopologyMaskHeader);
    if (head.num_bytes > kMaxXeTopologyMaskBytes) {
      throw bad(
          fmt::format("a {}-byte mask, wider than {}", head.num_bytes, kMaxXeTopologyMaskBytes));
    }
    if (bytes.size() - pos < head.num_bytes) throw bad("a mask is cut");
    const auto mask_bytes = bytes.subspan(pos, head.num_bytes);
    pos += head.num_bytes;
    if (head.gt_id != gt_id) continue;
    const auto mask = mask64(mask_bytes);
    const int bits = static_cast<int>(std::min<std::size_t>(8 * head.num_bytes, 64));
    switch (head.type) {
      case xe::kTopoDssGeometry:
      case xe::kTopoDssCompute:
        if (!mask) throw bad("a DSS past the 64th is enabled");
        t.dss_mask |= *mask;
        t.dss_bits = std::max(t.dss_bits, bits);
        dss = true;
        break;
      case xe::kTopoL3Bank:
        if (!mask) throw bad("an L3 bank past the 64th is enabled");
        t.l3_bank_mask = *mask;
        break;
      case xe::kTopoEuPerDss:
      case xe::kTopoSimd16EuPerDss:
        if (!mask) throw bad("an EU past the 64th is enabled");
        t.eu_mask = *mask;
        t.eu_bits = bits;
        t.simd16 = head.type == xe::kTopoSimd16EuPerDss;
        eus = true;
        break;
      default:
        break;  // a mask type newer than oaprof
    }
  }
  if (!dss || !eus) {
    throw bad(fmt::format("GT {} has no {} mask", gt_id, dss ? "EU" : "DSS"));
  }
  return t;
}

std::vector<std::uint8_t> encode_xe_gt_topology(const XeGtTopology& gt, std::size_t mask_bytes) {
  std::vector<std::uint8_t> out;
  const auto put = [&](std::uint16_t type, std::uint64_t mask) {
    const xe::TopologyMaskHeader head{gt.gt_id, type, static_cast<std::uint32_t>(mask_bytes)};
    const auto* h = reinterpret_cast<const std::uint8_t*>(&head);
    out.insert(out.end(), h, h + sizeof head);
    for (std::size_t i = 0; i < mask_bytes; ++i) {
      out.push_back(i < 8 ? static_cast<std::uint8_t>(mask >> (8 * i)) : std::uint8_t{0});
    }
  };
  put(xe::kTopoDssGeometry, gt.dss_mask);
  put(xe::kTopoDssCompute, gt.dss_mask);
  if (gt.l3_bank_mask) put(xe::kTopoL3Bank, *gt.l3_bank_mask);
  put(gt.simd16 ? xe::kTopoSimd16EuPerDss : xe::kTopoEuPerDss, gt.eu_mask);
  return out;
}

XeGtTopology query_xe_gt_topology(XeQuery& xe, std::uint16_t gt_id) {
  return parse_xe_gt_topology(query_bytes(xe, xe::kQueryGtTopology, "GT_TOPOLOGY", "its topology"),
                              gt_id);
}

XeEngineCycles query_xe_engine_cycles(XeQuery& xe, const xe::EngineClassInstance& engine) {
  xe::QueryEngineCycles reply;
  reply.eci = engine;
  reply.clockid = CLOCK_MONOTONIC;
  xe::DeviceQuery q;
  q.query = xe::kQueryEngineCycles;
  q.size = sizeof reply;  // xe writes into the caller's struct, whose size it knows
  q.data = reinterpret_cast<std::uintptr_t>(&reply);
  if (const int rc = xe.device_query(q); rc != 0) {
    throw std::runtime_error(fmt::format(
        "{}: DRM_XE_DEVICE_QUERY_ENGINE_CYCLES for engine class {} instance {} on GT {} failed: {}",
        xe.describe(), engine.engine_class, engine.engine_instance, engine.gt_id,
        std::strerror(-rc)));
  }
  if (reply.width == 0 || reply.width > 64) {
    throw std::runtime_error(
        fmt::format("{}: DRM_XE_DEVICE_QUERY_ENGINE_CYCLES answered a {}-bit counter",
                    xe.describe(), reply.width));
  }
  const int width = static_cast<int>(reply.width);
  return {reply.engine_cycles & timestamp_mask(width), width, reply.cpu_timestamp, reply.cpu_delta};
}

std::uint64_t timestamp_mask(int width) {
  return width <= 0 || width >= 64 ? ~0ull : (1ull << width) - 1;
}

std::optional<std::uint64_t> ticks_at_or_after(std::uint64_t t, std::uint64_t from, int width) {
  const std::uint64_t mask = timestamp_mask(width);
  const std::uint64_t ahead = (t - from) & mask;
  if (ahead > mask / 2) return std::nullopt;  // more than half the range ahead: behind it
  return ahead;
}

namespace {

// xe's flat DSS mask as oaprof's topology: one slice of Xe-cores (as i915 reports Xe-LPG and as
// IGT's xe_fill_topology_info builds it), every enabled Xe-core with the same EUs.
oa::Topology topology_from_xe(const XeGtTopology& t) {
  oa::Topology topo;
  topo.max_slices = 1;
  topo.max_subslices = std::max(t.dss_bits, 1);
  topo.max_eus_per_subslice = std::max(t.eu_bits, 1);
  topo.subslice_mask = t.dss_mask;
  topo.subslices = std::popcount(t.dss_mask);
  topo.slice_mask = topo.subslices > 0 ? 1 : 0;
  topo.slices = topo.subslices > 0 ? 1 : 0;
  topo.eus = topo.subslices * std::popcount(t.eu_mask);
  return topo;
}

// Bit i of the result: any of bits [i * width, (i + 1) * width) of `mask` is set.
std::uint64_t groups_enabled(std::uint64_t mask, int width) {
  std::uint64_t out = 0;
  const std::uint64_t group = (std::uint64_t{1} << width) - 1;
  for (int i = 0; i * width < 64; ++i) {
    if ((mask >> (i * width)) & group) out |= std::uint64_t{1} << i;
  }
  return out;
}

}  // namespace

XeL3Counts xe_l3_counts(const oa::Platform& platform, std::uint64_t l3_bank_mask) {
  constexpr int kBanksPerNode = 4, kNodesPerCopyEngine = 2;
  const std::uint64_t nodes = groups_enabled(l3_bank_mask, kBanksPerNode);
  XeL3Counts c;
  c.l3_nodes = static_cast<std::uint64_t>(std::popcount(nodes));
  c.copy_engines =
      static_cast<std::uint64_t>(std::popcount(groups_enabled(nodes, kNodesPerCopyEngine)));
  if (platform.codename != "PTL") c.sqidis = c.l3_nodes;
  return c;
}

oa::DeviceFacts read_xe_device_facts(const oa::Platform& platform, XeQuery* xe,
                                     const std::string& no_xe) {
  oa::DeviceFacts f = oa::table_facts(platform, no_xe);
  if (xe == nullptr) return f;
  std::uint16_t gt = 0;
  try {
    const auto units = query_xe_oa_units(*xe);
    const XeOaUnit* oag = render_oag(units);
    if (oag == nullptr) throw std::runtime_error("no OAG unit counts a render or compute engine");
    if (!oag->engines.empty()) gt = oag->engines.front().gt_id;
    // xe lists every engine the unit counts that is not reserved (xe_query.c query_oa_units;
    // xe_oa.c __hwe_oa_unit: render and compute engines go to the OAG), which is how Intel's
    // metrics-discovery counts $ComputeEngineTotalCount (md_driver_ifc_linux_xe.cpp
    // GetComputeEngineTotalCount, intel/metrics-discovery 1b7f8109ed6e).
    f.compute_engines = static_cast<std::uint64_t>(
        std::count_if(oag->engines.begin(), oag->engines.end(),
                      [](const auto& e) { return e.engine_class == xe::kEngineClassCompute; }));
    if (oag->timestamp_hz == 0) throw std::runtime_error("the OAG unit gives no timestamp rate");
    // oa_timestamp_freq is the raw report timestamp's rate (xe_oa_timestamp_frequency); the
    // delta oaprof decodes is shifted on Xe-LPG (oa::report_timestamp_hz).
    f.timestamp_hz = oa::report_timestamp_hz(platform.gen, static_cast<double>(oag->timestamp_hz));
    f.timestamp_source = oa::TimestampSource::kXeOaUnit;
    const int shift = oa::report_timestamp_shift(platform.gen);
    f.timestamp_note = fmt::format("{}: OA unit {}{}", xe->describe(), oag->id,
                                   shift == 0 ? "" : fmt::format(", >> {} in reports", shift));
  } catch (const std::exception& e) {
    f.timestamp_note = e.what();
  }
  try {
    const XeGtTopology t = query_xe_gt_topology(*xe, gt);
    const oa::Topology topo = topology_from_xe(t);
    if (topo.eus == 0) throw std::runtime_error(fmt::format("GT {} has no EU enabled", gt));
    f.topology = topo;
    f.topology_source = oa::TopologySource::kXeQuery;
    f.topology_note = fmt::format("{}: GT {}", xe->describe(), gt);
    if (t.l3_bank_mask) {
      f.l3_banks = static_cast<std::uint64_t>(std::popcount(*t.l3_bank_mask));
      if (platform.gen == oa::Generation::kXe2) {
        const XeL3Counts c = xe_l3_counts(platform, *t.l3_bank_mask);
        f.l3_nodes = c.l3_nodes;
        f.copy_engines = c.copy_engines;
        f.sqidis = c.sqidis;
      }
    }
  } catch (const std::exception& e) {
    f.topology_note = e.what();
  }
  return f;
}

}  // namespace oaprof::gpu
