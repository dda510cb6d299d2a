#include "gpu/sim/sim_xe_observation.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "gpu/xe/xe_uapi.h"
#include "mmio/registers.h"
#include "mmio/timestamp_clock.h"
#include "oa/report.h"

namespace oaprof::gpu {
namespace {

// Register ranges xe accepts in a configuration (xe_oa_is_valid_config_reg_addr): the flex
// registers, the boolean counters and the platform's mux list. Xe2: drivers/gpu/drm/xe/xe_oa.c
// @ torvalds/linux 2d46ecc958c9cb7b0f116aa52cf9296b6c71d784 (xehp_oa_b_counters,
// gen12_oa_b_counters, mtl_oam_b_counters, xe2_oa_b_counters; xe2_oa_mux_regs for
// GRAPHICS_VER >= 20); Gen12 and Xe-LPG: xe_oa.c @ 0755a4e3e809610a14befc9ad28d35e2e460da68
// (the first three boolean lists on every part, xe2's only from version 20; gen12_oa_mux_regs,
// and mtl_oa_mux_regs from GRAPHICS_VERx100 1270); the EU_PERF_CNTL0-6 addresses from
// regs/xe_oa_regs.h @ 14e077f8006df9d2d7adf380f0c80e16d6a0a548.
struct Range {
  std::uint32_t start, end;
};
constexpr std::uint32_t kFlex[] = {0xe458, 0xe558, 0xe658, 0xe758, 0xe45c, 0xe55c, 0xe65c};
constexpr Range kBCounters[] = {
    {0xdc48, 0xdc48},     {0xdd00, 0xdd48},  // xehp_oa_b_counters
    {0x2b2c, 0x2b2c},     {0xd900, 0xd91c},     {0xd920, 0xd93c},
    {0xd940, 0xd97c},     {0xdc00, 0xdc3c},     {0xdc40, 0xdc40},
    {0xdc44, 0xdc44},  // gen12_oa_b_counters
    {0x393000, 0x39301c}, {0x393020, 0x39303c}, {0x393040, 0x39307c},
    {0x393200, 0x39323c},  // mtl_oam_b_counters
};
constexpr Range kXe2BCounters[] = {{0x394200, 0x39423c}, {0x394a00, 0x394a3c}};
// VISACTL 0xD0E0-0xD0F4 joined xe2_oa_mux_regs in torvalds/linux c26f22dac344.
constexpr Range kXe2Mux[] = {{0x5194, 0x5194},  {0x8704, 0x8704}, {0xb1bc, 0xb1bc},
                             {0xd0e0, 0xd0f4},  {0xe18c, 0xe18c}, {0xe590, 0xe590},
                             {0x13000, 0x137fc}};
constexpr Range kGen12Mux[] = {
    {0x0d00, 0x0d04}, {0x0d0c, 0x0d2c}, {0x9840, 0x9840}, {0x9884, 0x9888}, {0x20cc, 0x20cc}};
constexpr Range kMtlMux[] = {
    {0x0d00, 0x0d04}, {0x0d0c, 0x0d2c}, {0x9840, 0x9840}, {0x9884, 0x9888}, {0x38d100, 0x38d114}};

bool in(std::span<const Range> ranges, std::uint32_t addr) {
  return std::any_of(ranges.begin(), ranges.end(),
                     [&](const Range& r) { return addr >= r.start && addr <= r.end; });
}

bool is_flex(std::uint32_t addr) {
  return std::find(std::begin(kFlex), std::end(kFlex), addr) != std::end(kFlex);
}

bool is_b_counter(oa::Generation gen, std::uint32_t addr) {
  return in(kBCounters, addr) || (gen == oa::Generation::kXe2 && in(kXe2BCounters, addr));
}

std::span<const Range> mux_list(oa::Generation gen) {
  switch (gen) {
    case oa::Generation::kXe2:
      return kXe2Mux;
    case oa::Generation::kXeLpg:
      return kMtlMux;
    default:
      return kGen12Mux;
  }
}

bool valid_config_address(oa::Generation gen, std::uint32_t addr) {
  return is_flex(addr) || is_b_counter(gen, addr) || in(mux_list(gen), addr);
}

// uuid_is_valid(): 8-4-4-4-12 hexadecimal digits.
bool uuid_is_valid(const char* uuid) {
  for (int i = 0; i < 36; ++i) {
    const char c = uuid[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
      return false;
    }
  }
  return true;
}

// The formats xe decodes on each part (xe_oa.c oa_formats[] and xe_oa_init_supported_formats;
// Gen12 and Xe-LPG @ 0755a4e3e809, Xe2 @ 2d46ecc958c9): type, counter select, counter size, B/C
// report, bytes, and the format the simulated registers write for it. OAG, OAR, OAC and PEC
// types stream on the OAG unit, OAM and OAM_MPEC on the media unit
// (oa_unit_supports_oa_format). Gen12's C4_B8 is xe's format 0, which its open path refuses.
// Xe-LPG's MPEC8u64_B8_C8 and MPEC8u32_B8_C8 are type OAM_MPEC (4), not OAM (2): oa_formats[]
// @ 0755a4e3e809 gives both DRM_FMT(OAM_MPEC), so an OAM-typed value does not decode.
struct XeFormat {
  std::uint8_t type, select, size, bc;
  int bytes;
  std::optional<oa::ReportFormat> registers = std::nullopt;  // what SimGpu writes (Gen12, Xe-LPG)
  bool format_zero = false;
  // Xe2: the layout the simulated unit writes (oa/report_format.cc, metrics-discovery's
  // offsets); none for the G1/G2 formats, whose layout no public source gives.
  std::optional<oa::ReportFormat> layout = std::nullopt;
};
// xe's enum drm_xe_oa_format_type; OAM (2) has no format in the simulated tables.
constexpr std::uint8_t kTypeOag = 0, kTypeOar = 1, kTypeOac = 3, kTypeOamMpec = 4, kTypePec = 5;
const XeFormat kGen12Formats[] = {
    {kTypeOag, 0, 0, 0, 64, oa::ReportFormat::kA12},
    {kTypeOag, 2, 0, 0, 128, oa::ReportFormat::kA12_B8_C8},
    {kTypeOag, 5, 0, 0, 256, oa::ReportFormat::kA32u40_A4u32_B8_C8},
    {kTypeOag, 7, 0, 0, 64, std::nullopt, true},
};
const XeFormat kXeLpgFormats[] = {
    {kTypeOar, 5, 0, 0, 256},     {kTypeOag, 5, 0, 0, 256, oa::ReportFormat::kA24u40_A14u32_B8_C8},
    {kTypeOac, 1, 0, 0, 320},     {kTypeOac, 2, 0, 0, 192},
    {kTypeOamMpec, 1, 0, 0, 192}, {kTypeOamMpec, 2, 0, 0, 128},
};
constexpr auto kNoRegs = std::nullopt;
const XeFormat kXe2Formats[] = {
    {kTypeOamMpec, 1, 0, 0, 192, kNoRegs, false, oa::ReportFormat::kXe2Mpec8u64_B8_C8},
    {kTypeOamMpec, 2, 0, 0, 128, kNoRegs, false, oa::ReportFormat::kXe2Mpec8u32_B8_C8},
    {kTypePec, 1, 1, 0, 576, kNoRegs, false, oa::ReportFormat::kPec64u64},
    {kTypePec, 1, 1, 1, 640, kNoRegs, false, oa::ReportFormat::kPec64u64_B8_C8},
    {kTypePec, 1, 0, 0, 320, kNoRegs, false, oa::ReportFormat::kPec64u32},
    {kTypePec, 5, 1, 0, 320},
    {kTypePec, 5, 0, 0, 192},
    {kTypePec, 6, 1, 0, 320},
    {kTypePec, 6, 0, 0, 192},
    {kTypePec, 3, 1, 0, 320},
    {kTypePec, 4, 1, 0, 320},
};

std::span<const XeFormat> formats_of(oa::Generation gen) {
  switch (gen) {
    case oa::Generation::kXe2:
      return kXe2Formats;
    case oa::Generation::kXeLpg:
      return kXeLpgFormats;
    default:
      return kGen12Formats;
  }
}

const XeFormat* decode_format(oa::Generation gen, std::uint64_t value) {
  const auto field = [&](int shift) { return static_cast<std::uint8_t>((value >> shift) & 0xff); };
  for (const XeFormat& f : formats_of(gen)) {
    if (f.type == field(0) && f.select == field(8) && f.size == field(16) && f.bc == field(24)) {
      return &f;
    }
  }
  return nullptr;
}

bool streams_on_oag(const XeFormat& f) {
  return f.type == kTypeOag || f.type == kTypeOar || f.type == kTypeOac || f.type == kTypePec;
}

bool read_user(std::uint64_t addr, void* out, std::size_t n) {
  if (addr == 0) return false;
  std::memcpy(out, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(addr)), n);
  return true;
}

constexpr std::uint32_t kOagUnit = 0, kOamUnit = 1;
constexpr std::size_t kMaxConfigRegs = 1u << 16;

}  // namespace

SimXeDevice::SimXeDevice(oa::Platform platform, mmio::Clock& clock, SimXeOptions options,
                         mmio::SimGpu* registers)
    : platform_(platform), clock_(clock), options_(options) {
  const bool xe2 = platform_.gen == oa::Generation::kXe2;
  if (!xe2 && !oa::is_gen12_family(platform_.gen)) {
    throw std::invalid_argument("xe has OA only from Gen12 on (xe_oa_init: GRAPHICS_VER >= 12)");
  }
  if (!xe2 && registers == nullptr) {
    throw std::invalid_argument("a simulated Gen12 or Xe-LPG part under xe needs its registers");
  }
  if (!xe2) registers_ = registers;
  if (options_.gpu_mhz <= 0) options_.gpu_mhz = platform_.max_freq_mhz;
}

// xe_oa.c @ 0755a4e3e809 __hwe_oa_unit: render and compute engines count on the OAG unit; video
// engines on an OAM unit of the media GT from GRAPHICS_VERx100 1270, on none before (Tiger
// Lake's OAG lists rcs0 alone: it has no compute engine).
std::vector<XeOaUnit> SimXeDevice::oa_units() const {
  // xe_oa_timestamp_frequency() @ 0755a4e3e809: the reference clock << (3 - RPM_CONFIG0's CTC
  // shift) on XE_METEORLAKE, the reference clock elsewhere.
  const std::uint32_t rpm_config0 =
      registers_ != nullptr ? registers_->read32(mmio::reg::kRpmConfig0) : 0;
  const auto hz = static_cast<std::uint64_t>(
      mmio::oa_timestamp_hz(platform_, platform_.timestamp_hz, rpm_config0));
  const std::uint64_t caps = xe::kOaCapsBase | xe::kOaCapsSyncs;
  XeOaUnit oag{kOagUnit, xe::kOaUnitTypeOag, caps, hz, {{xe::kEngineClassRender, 0, 0, 0}}};
  if (platform_.gen == oa::Generation::kGen12) return {oag};
  oag.engines.push_back({xe::kEngineClassCompute, 0, 0, 0});
  XeOaUnit oam{kOamUnit, xe::kOaUnitTypeOam, caps, hz, {{xe::kEngineClassVideoDecode, 0, 1, 0}}};
  return {oag, oam};
}

XeGtTopology SimXeDevice::gt_topology() const {
  const int cores = options_.xe_cores > 0 ? options_.xe_cores : platform_.subslices;
  const int eus_per_core = platform_.subslices > 0 ? platform_.eus / platform_.subslices : 0;
  XeGtTopology t;
  t.dss_mask = cores >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << cores) - 1;
  t.eu_mask = (std::uint64_t{1} << eus_per_core) - 1;
  t.simd16 = platform_.gen == oa::Generation::kXe2;  // xe_gt_topology.c: SIMD16 EUs from 20
  if (options_.l3_banks > 0) t.l3_bank_mask = (std::uint64_t{1} << options_.l3_banks) - 1;
  return t;
}

void SimXeDevice::set_busy(bool busy, const oa::KernelWork* work) {
  if (registers_ != nullptr) registers_->set_kernel_running(busy, work);
  advance_all();
  const std::uint64_t now = clock_.now_ns();
  if (busy && !busy_since_) busy_since_ = now;
  if (!busy && busy_since_) {
    busy_total_ns_ += now - *busy_since_;
    busy_since_.reset();
  }
}

void SimXeDevice::inject_status(std::uint64_t oa_status) {
  advance_all();
  for (auto& [fd, s] : streams_) s.status |= oa_status;
}

std::uint64_t SimXeDevice::busy_ns_until(std::uint64_t t) const {
  return busy_total_ns_ + (busy_since_ && t > *busy_since_ ? t - *busy_since_ : 0);
}

std::uint64_t SimXeDevice::now_ticks() const {
  return static_cast<std::uint64_t>(static_cast<double>(clock_.now_ns()) * platform_.timestamp_hz /
                                    1e9);
}

std::uint64_t SimXeDevice::last_poll_tick() const {
  const std::uint64_t poll = options_.poll_ns;
  const std::uint64_t at = clock_.now_ns() / poll * poll;
  return static_cast<std::uint64_t>(static_cast<double>(at) * platform_.timestamp_hz / 1e9);
}

std::vector<std::uint8_t> SimXeDevice::report_at(std::uint64_t tick, const Stream& stream) const {
  const int bytes = stream.report_bytes;
  const double s = static_cast<double>(tick) / platform_.timestamp_hz;
  const auto t = static_cast<std::uint64_t>(s * 1e9);
  const auto busy_clocks =
      static_cast<std::uint64_t>(static_cast<double>(busy_ns_until(t)) * options_.gpu_mhz / 1e3);
  // Counter i counts (i % 4 + 1) / 4 of the busy clocks, in the format's own widths.
  oa::Report report;
  report.rpt_id = 1;  // non-zero, as xe's tail check requires of a landed report
  report.timestamp = tick + options_.timestamp_base_ticks;
  report.gpu_ticks = static_cast<std::uint64_t>(s * options_.gpu_mhz * 1e6);
  for (std::size_t i = 0; i < report.a.size(); ++i) {
    report.a[i] = busy_clocks * (i % 4 + 1) / 4;
  }
  if (stream.layout) {
    const oa::RawReport raw = oa::encode(*stream.layout, report);
    return {raw.bytes.begin(), raw.bytes.begin() + raw.size};
  }
  // A G1/G2 format: PEC64u64's layout cut to its size (oaprof refuses to decode these).
  std::vector<std::uint8_t> r(static_cast<std::size_t>(bytes));
  const oa::RawReport pec = oa::encode(oa::ReportFormat::kPec64u64, report);
  std::memcpy(r.data(), pec.bytes.data(), r.size());
  return r;
}

int SimXeDevice::engine_cycles(xe::QueryEngineCycles& q) const {
  switch (q.clockid) {  // __clock_id_to_func
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_REALTIME:
    case CLOCK_BOOTTIME:
    case CLOCK_TAI:
      break;
    default:
      return -EINVAL;
  }
  bool known = false;
  for (const XeOaUnit& u : oa_units()) {
    for (const auto& e : u.engines) {
      known = known || (e.engine_class == q.eci.engine_class &&
                        e.engine_instance == q.eci.engine_instance && e.gt_id == q.eci.gt_id);
    }
  }
  if (!known) return -EINVAL;  // xe_gt_hw_engine finds none
  // The simulator's clock stands for every clock id, CLOCK_MONOTONIC in live runs.
  q.cpu_timestamp = clock_.now_ns();
  q.engine_cycles =
      (registers_ != nullptr ? register_timestamp() : now_ticks() + options_.timestamp_base_ticks) +
      static_cast<std::uint64_t>(options_.engine_cycles_skew_ticks);
  q.cpu_delta = 0;
  // xe_query.c query_engine_cycles @ torvalds/linux 043254938d2b: 64 bits from GRAPHICS_VER 20,
  // else 36.
  q.width = registers_ != nullptr ? 36 : 64;
  q.engine_cycles &= timestamp_mask(static_cast<int>(q.width));
  last_engine_cycles_ = q;
  return 0;
}

// RING_TIMESTAMP and its upper dword, read again where the low half wrapped between them.
std::uint64_t SimXeDevice::register_timestamp() const {
  std::uint32_t hi = registers_->read32(mmio::reg::kRingTimestampUdw);
  std::uint32_t lo = registers_->read32(mmio::reg::kRingTimestamp);
  const std::uint32_t hi2 = registers_->read32(mmio::reg::kRingTimestampUdw);
  if (hi2 != hi) {
    hi = hi2;
    lo = registers_->read32(mmio::reg::kRingTimestamp);
  }
  return std::uint64_t{hi} << 32 | lo;
}

void SimXeDevice::advance(Stream& s) {
  if (s.programmer || !s.enabled || !s.sample || s.period_ticks == 0) return;
  const std::uint64_t now = now_ticks();
  if (s.next_report_tick > now) return;
  const std::uint64_t period = s.period_ticks;
  const std::uint64_t due = (now - s.next_report_tick) / period + 1;
  const std::size_t capacity = options_.oa_buffer_bytes / static_cast<std::size_t>(s.report_bytes);
  std::uint64_t skip = 0;
  if (s.buffer.size() + due > capacity) {
    s.status |= xe::kOaStatusBufferOverflow;
    const std::uint64_t keep_new = std::min<std::uint64_t>(due, capacity);
    skip = due - keep_new;
    while (s.buffer.size() + keep_new > capacity) s.buffer.pop_front();
  }
  for (std::uint64_t k = skip; k < due; ++k) {
    s.buffer.push_back(report_at(s.next_report_tick + k * period, s));
  }
  s.next_report_tick += due * period;
}

void SimXeDevice::advance_all() {
  for (auto& [fd, s] : streams_) advance(s);
}

// Declared a friend of SimXeDevice, so it lives outside the anonymous namespace.
class SimXeObservation final : public XeObservation {
 public:
  explicit SimXeObservation(SimXeDevice& d) : d_(d) {}
  std::string describe() const override { return "simulated xe"; }

  std::vector<XeOaUnit> oa_units() override { return d_.oa_units(); }

  XeEngineCycles engine_cycles(const xe::EngineClassInstance& engine) override {
    return query_xe_engine_cycles(*make_sim_xe_query(d_), engine);
  }

  std::optional<std::uint64_t> find_config_id(const std::string& uuid) override {
    for (const auto& [id, c] : d_.configs_) {
      if (c.uuid == uuid) return id;
    }
    return std::nullopt;
  }

  int add_config(const xe::OaConfigParam& c) override {
    if (!privileged()) return -EACCES;
    if (c.extensions != 0 || c.regs_ptr == 0 || c.n_regs == 0) return -EINVAL;
    if (!uuid_is_valid(c.uuid)) return -EINVAL;
    if (c.n_regs > kMaxConfigRegs) return -ENOMEM;
    std::vector<std::uint32_t> regs(2 * static_cast<std::size_t>(c.n_regs));
    if (!read_user(c.regs_ptr, regs.data(), regs.size() * sizeof(std::uint32_t))) return -EFAULT;
    SimXeDevice::Config config{std::string(c.uuid, 36), {}};
    if (config.uuid == d_.options_.rejected_config_uuid) return -EINVAL;
    for (std::size_t i = 0; i < regs.size(); i += 2) {
      if (!valid_config_address(d_.platform_.gen, regs[i])) return -EINVAL;
      config.regs.emplace_back(regs[i], regs[i + 1]);
    }
    if (find_config_id(config.uuid)) return -EADDRINUSE;
    const std::uint64_t id = d_.next_config_id_++;
    d_.configs_[id] = std::move(config);
    return static_cast<int>(id);
  }

  int remove_config(std::uint64_t id) override {
    if (!privileged()) return -EACCES;
    return d_.configs_.erase(id) == 1 ? 0 : -ENOENT;
  }

  int open_stream(std::uint64_t head) override {
    XeParsedOpen open;
    if (const int r = parse_xe_oa_properties(head, read_user, open); r < 0) return r;
    const XeOaStreamParams& p = open.params;
    if (p.oa_unit_id > kOamUnit) return -EINVAL;  // xe_oa_set_prop_oa_unit_id
    const oa::Generation gen = d_.platform_.gen;
    const XeFormat* format = open.has_format ? decode_format(gen, p.oa_format) : nullptr;
    if (open.has_format && format == nullptr) return -EINVAL;  // decode_oa_format
    if (!privileged()) return -EACCES;
    if (!p.sample) return -EINVAL;  // "Only OA report sampling supported" without an exec queue
    if (format == nullptr || format->format_zero) return -EINVAL;  // format 0
    // xe_oa_stream_open_ioctl: no more reports to wait for than the buffer holds.
    const std::uint64_t buffer = open.oa_buffer_bytes != 0 ? open.oa_buffer_bytes : 16u << 20;
    if (open.wait_num_reports > buffer / static_cast<std::uint64_t>(format->bytes)) return -EINVAL;
    if (p.oa_unit_id >= d_.oa_units().size()) return -EINVAL;
    if (streams_on_oag(*format) != (p.oa_unit_id == kOagUnit)) {
      return -EINVAL;  // oa_unit_supports_oa_format
    }
    for (const auto& [fd, s] : d_.streams_) {
      if (s.unit == p.oa_unit_id) return -EBUSY;  // "OA unit already in use"
    }
    const auto config = d_.configs_.find(p.metric_set);
    if (config == d_.configs_.end()) return -EINVAL;  // no such OA config
    SimXeDevice::Stream s;
    s.unit = p.oa_unit_id;
    s.report_bytes = format->bytes;
    s.layout = format->layout;
    s.sample = p.sample;
    // oa_exponent_to_ns: (2 << exponent) timestamp ticks.
    s.period_ticks = p.period_exponent >= 0 ? 2ull << p.period_exponent : 0;
    s.enabled = !p.disabled;
    s.next_report_tick = d_.now_ticks() + s.period_ticks;
    if (d_.registers_ != nullptr) {
      if (const int r = program_registers(s, *format, config->second, p.period_exponent); r < 0) {
        return r;
      }
    }
    const int fd = d_.next_stream_++;
    d_.streams_[fd] = std::move(s);
    return fd;
  }

  ssize_t read_stream(int stream, std::span<std::uint8_t> buf) override {
    auto it = d_.streams_.find(stream);
    if (it == d_.streams_.end()) return -EBADF;
    SimXeDevice::Stream& s = it->second;
    if (!s.enabled || !s.sample) return -EINVAL;
    d_.advance(s);
    if (s.programmer) take_register_status(s);
    if (s.status != 0) {  // __xe_oa_read: status bits first, as EIO
      s.last_status = s.status;
      s.status = 0;
      return -EIO;
    }
    const auto size = static_cast<std::size_t>(s.report_bytes);
    if (s.programmer) return read_registers_buffer(size, buf);
    // xe's last buffer poll: the reports written up to it are readable.
    const std::uint64_t polled = d_.options_.poll_ns == 0 ? ~0ull : d_.last_poll_tick();
    const auto readable = [&](const std::vector<std::uint8_t>& r) {
      std::uint64_t ts = 0;  // the report's timestamp, qword 1 (report_at)
      std::memcpy(&ts, r.data() + 8, sizeof ts);
      return ts - d_.options_.timestamp_base_ticks <= polled;
    };
    if (s.buffer.empty() || !readable(s.buffer.front())) return -EAGAIN;
    std::size_t n = 0;
    while (!s.buffer.empty() && readable(s.buffer.front()) && n + size <= buf.size()) {
      std::memcpy(buf.data() + n, s.buffer.front().data(), size);
      s.buffer.pop_front();
      n += size;
    }
    return n == 0 ? -ENOSPC : static_cast<ssize_t>(n);
  }

  int enable_stream(int stream, bool enable) override {
    auto it = d_.streams_.find(stream);
    if (it == d_.streams_.end()) return -EBADF;
    SimXeDevice::Stream& s = it->second;
    d_.advance(s);
    if (enable && !s.enabled) s.next_report_tick = d_.now_ticks() + s.period_ticks;
    if (s.programmer && enable != s.enabled) {
      // xe_oa_enable: a fresh OA buffer, then OACONTROL counting; disable stops it.
      const mmio::reg::OaRegisterBlock& block = mmio::reg::oa_block(d_.platform_.gen);
      if (enable) d_.registers_->init_oa_buffer(d_.options_.oa_buffer_bytes);
      d_.registers_->write32(block.oa_control, enable ? s.oacontrol : 0);
    }
    s.enabled = enable;
    return 0;
  }

  int stream_status(int stream, std::uint64_t& oa_status) override {
    auto it = d_.streams_.find(stream);
    if (it == d_.streams_.end()) return -EBADF;
    oa_status = it->second.last_status;
    return 0;
  }

  void close_stream(int stream) override {
    const auto it = d_.streams_.find(stream);
    if (it == d_.streams_.end()) return;
    if (it->second.programmer) {
      it->second.programmer->restore();
      d_.registers_->init_oa_buffer(0);
    }
    d_.streams_.erase(it);
  }

 private:
  // Gen12 and Xe-LPG: the OAG unit programmed as xe_oa.c's xe_oa_enable_metric_set and
  // xe_oa_enable do (the configuration, the periodic timer in OAG_OAGLBCTXCTRL, OACONTROL with
  // the format), on a fresh OA buffer. xe writes the configuration as one list; the simulated
  // programmer takes it split by kind, each kind in the order given.
  int program_registers(SimXeDevice::Stream& s, const XeFormat& format,
                        const SimXeDevice::Config& config, int exponent) {
    if (!format.registers) return -EINVAL;  // OAR, OAC, OAM: not modelled (no exec queue, no media)
    const oa::Generation gen = d_.platform_.gen;
    mmio::OaConfig regs;
    regs.guid = config.uuid;
    for (const auto& [address, value] : config.regs) {
      auto& list = is_flex(address)             ? regs.flex
                   : is_b_counter(gen, address) ? regs.boolean
                                                : regs.mux;
      list.push_back({address, value});
    }
    std::vector<mmio::PlanStep> plan;
    try {
      plan = mmio::plan_oa_programming(d_.platform_, *format.registers, regs);
    } catch (const std::invalid_argument&) {
      return -EINVAL;  // a register the simulated OA unit is not programmed through
    }
    const mmio::reg::OaRegisterBlock& block = mmio::reg::oa_block(gen);
    const std::uint32_t timer = exponent < 0
                                    ? 0
                                    : mmio::SimGpu::kOaCtxControlTimerEnable |
                                          static_cast<std::uint32_t>(exponent)
                                              << mmio::SimGpu::kOaCtxControlTimerPeriodShift;
    for (auto& step : plan) {
      if (step.address == block.ctx_control) step.value = timer;
    }
    s.oacontrol = plan.back().value;
    if (!s.enabled) plan.pop_back();  // OACONTROL counts from STREAM_ENABLE on
    d_.registers_->init_oa_buffer(d_.options_.oa_buffer_bytes);
    s.programmer = std::make_unique<mmio::OaProgrammer>(*d_.registers_);
    try {
      s.programmer->program(std::move(plan));  // restores what it wrote if it throws
    } catch (const std::exception&) {
      d_.registers_->init_oa_buffer(0);
      return -EIO;
    }
    return 0;
  }

  // The OA unit's status register as xe_oa_append_reports/__xe_oa_read see it: an overflow
  // restarts the unit on an empty buffer, a lost report clears its bit; both answer EIO.
  void take_register_status(SimXeDevice::Stream& s) {
    const mmio::reg::OaRegisterBlock& block = mmio::reg::oa_block(d_.platform_.gen);
    mmio::SimGpu& gpu = *d_.registers_;
    const std::uint32_t status = gpu.read32(block.oa_status);
    if (status & mmio::SimGpu::kOaStatusBufferOverflow) {
      s.status |= xe::kOaStatusBufferOverflow;
      gpu.write32(block.oa_control, 0);
      gpu.init_oa_buffer(d_.options_.oa_buffer_bytes);
      gpu.write32(block.oa_control, s.oacontrol);
    } else if (status & mmio::SimGpu::kOaStatusReportLost) {
      s.status |= xe::kOaStatusReportLost;
      gpu.write32(block.oa_status, status & ~mmio::SimGpu::kOaStatusReportLost);
    }
  }

  // Raw reports from the simulated OA buffer, as many whole ones as `buf` holds.
  ssize_t read_registers_buffer(std::size_t size, std::span<std::uint8_t> buf) {
    mmio::SimGpu& gpu = *d_.registers_;
    if (gpu.oa_reports_pending() == 0) return -EAGAIN;
    std::size_t n = 0;
    for (const oa::RawReport& r : gpu.read_oa_reports(buf.size() / size)) {
      std::memcpy(buf.data() + n, r.bytes.data(), size);
      n += size;
    }
    return n == 0 ? -ENOSPC : static_cast<ssize_t>(n);
  }

  bool privileged() const {
    return d_.options_.observation_paranoid == 0 || d_.options_.perfmon_capable;
  }
  SimXeDevice& d_;
};

std::unique_ptr<XeObservation> make_sim_xe_observation(SimXeDevice& device) {
  return std::make_unique<SimXeObservation>(device);
}

namespace {

// DRM_XE_DEVICE_QUERY for the simulated xe: the size first, then the data, as xe_query.c
// answers (-EINVAL for a size that is not the one it gave, or an unknown query).
class SimXeQuery final : public XeQuery {
 public:
  explicit SimXeQuery(const SimXeDevice& device) : d_(device) {}
  std::string describe() const override { return "simulated xe"; }
  int device_query(xe::DeviceQuery& q) override {
    if (q.query == xe::kQueryEngineCycles) return engine_cycles(q);
    std::vector<std::uint8_t> reply;
    if (q.query == xe::kQueryOaUnits) {
      reply = encode_xe_oa_units(d_.oa_units());
    } else if (q.query == xe::kQueryGtTopology) {
      reply = encode_xe_gt_topology(d_.gt_topology(), kDssMaskBytes);
    } else {
      return -EINVAL;
    }
    if (q.size == 0) {
      q.size = static_cast<std::uint32_t>(reply.size());
      return 0;
    }
    if (q.size != reply.size() || q.data == 0) return -EINVAL;
    std::memcpy(reinterpret_cast<void*>(static_cast<std::uintptr_t>(q.data)), reply.data(),
                reply.size());
    return 0;
  }

 private:
  // The caller's struct is read and written in place; its size must be the uapi's.
  int engine_cycles(xe::DeviceQuery& q) {
    if (q.size == 0) {
      q.size = sizeof(xe::QueryEngineCycles);
      return 0;
    }
    if (q.size != sizeof(xe::QueryEngineCycles)) return -EINVAL;
    if (q.data == 0) return -EFAULT;
    xe::QueryEngineCycles c;
    std::memcpy(&c, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(q.data)), sizeof c);
    if (const int rc = d_.engine_cycles(c); rc != 0) return rc;
    std::memcpy(reinterpret_cast<void*>(static_cast<std::uintptr_t>(q.data)), &c, sizeof c);
    return 0;
  }

  static constexpr std::size_t kDssMaskBytes = 16;  // the simulator's choice; any width parses
  const SimXeDevice& d_;
};

}  // namespace

std::unique_ptr<XeQuery> make_sim_xe_query(const SimXeDevice& device) {
  return std::make_unique<SimXeQuery>(device);
}

}  // namespace oaprof::gpu
