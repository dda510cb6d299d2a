// xe's observation interface for OA (DRM_IOCTL_XE_OBSERVATION), the counterpart of I915Perf for
// parts xe drives: metric sets added as one flat (address, value) list under a UUID
// (ADD_CONFIG), streams opened with a chain of drm_xe_ext_set_property (STREAM_OPEN), and a
// stream descriptor whose read() returns raw reports with no record headers, -EIO once the OA
// unit lost something (then the STATUS ioctl says what), and -EBUSY at open while another stream
// holds the unit. The interface is the uapi, so that the same code runs on a render node and on
// SimXeObservation (sim_xe_observation.h), which refuses what xe_oa.c refuses.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpu/xe/xe_query.h"
#include "gpu/xe/xe_uapi.h"
#include "oa/report_format.h"

namespace oaprof::gpu {

// What a stream is opened with; to_chain() turns it into the kernel's property chain.
struct XeOaStreamParams {
  std::uint32_t oa_unit_id = 0;
  std::uint64_t metric_set = 0;  // the id ADD_CONFIG gave
  std::uint64_t oa_format = 0;   // oa::to_xe_oa_format
  int period_exponent = -1;      // -1: no periodic sampling
  bool sample = true;            // SAMPLE_OA: reports into the unit's buffer
  bool disabled = false;         // OA_DISABLED: counts from STREAM_ENABLE on
};

// A chain of drm_xe_ext_set_property, linked through next_extension; it owns its links, so
// head() stays valid as long as the chain lives (and moves keep the heap storage in place).
class XePropertyChain {
 public:
  explicit XePropertyChain(const XeOaStreamParams& params);
  // The address of the first link, for drm_xe_observation_param.param; 0 when empty.
  std::uint64_t head() const;
  std::size_t size() const { return links_.size(); }

 private:
  void add(std::uint32_t property, std::uint64_t value);
  std::vector<xe::ExtSetProperty> links_;
};

// Walks a property chain as xe_oa_user_extensions() does: at most 16 links, name
// DRM_XE_OA_EXTENSION_SET_PROPERTY, pad 0, property ids it knows (OA_UNIT_ID to
// WAIT_NUM_REPORTS; OA_BUFFER_SIZE and WAIT_NUM_REPORTS checked as xe checks them). `read`
// copies `n` bytes from user address `addr` into `out`, false where it cannot (EFAULT). Returns
// the parameters, or -errno (EINVAL, E2BIG, EFAULT). Properties oaprof never sets (EXEC_QUEUE_ID,
// NO_PREEMPT, SYNCS, ...) are accepted as xe accepts them and reported in `other_properties`.
struct XeParsedOpen {
  XeOaStreamParams params;
  bool has_format = false;
  std::uint64_t oa_buffer_bytes = 0;   // OA_BUFFER_SIZE; 0: not given (xe's 16 MiB)
  std::uint64_t wait_num_reports = 0;  // WAIT_NUM_REPORTS; 0: not given (xe's 1)
  std::vector<std::uint32_t> other_properties;
};
using XeUserRead = bool (*)(std::uint64_t addr, void* out, std::size_t n);
int parse_xe_oa_properties(std::uint64_t head, XeUserRead read, XeParsedOpen& out);

// A metric set for ADD_CONFIG: xe takes NOA, boolean and flex registers as one list and checks
// each address itself.
struct XeOaConfig {
  std::string uuid;  // 36 characters, as IGT's hw_config_guid
  std::vector<std::pair<std::uint32_t, std::uint32_t>> regs;
};

class XeObservation {
 public:
  virtual ~XeObservation() = default;
  // What the calls go to, for messages: "render node /dev/dri/renderD128", "simulated xe".
  virtual std::string describe() const = 0;
  // DRM_XE_DEVICE_QUERY_OA_UNITS, parsed (query_xe_oa_units). Throws std::runtime_error.
  virtual std::vector<XeOaUnit> oa_units() = 0;
  // DRM_XE_DEVICE_QUERY_ENGINE_CYCLES for `engine` (query_xe_engine_cycles). Throws
  // std::runtime_error.
  virtual XeEngineCycles engine_cycles(const xe::EngineClassInstance& engine) = 0;
  // The id xe already holds for a UUID: <card>/metrics/<uuid>/id. nullopt when absent.
  virtual std::optional<std::uint64_t> find_config_id(const std::string& uuid) = 0;
  // ADD_CONFIG: the new id, or -errno. REMOVE_CONFIG: 0 or -errno.
  virtual int add_config(const xe::OaConfigParam& config) = 0;
  virtual int remove_config(std::uint64_t id) = 0;
  // STREAM_OPEN with `chain_head` as drm_xe_observation_param.param: a descriptor or -errno.
  virtual int open_stream(std::uint64_t chain_head) = 0;
  // read() of the stream (non-blocking): whole reports, or -errno (-EAGAIN: nothing yet; -EIO:
  // the unit lost something since the last read, see stream_status; -ENOSPC: `buf` holds no
  // whole report).
  virtual ssize_t read_stream(int stream, std::span<std::uint8_t> buf) = 0;
  // STREAM_ENABLE / STREAM_DISABLE: 0 or -errno.
  virtual int enable_stream(int stream, bool enable) = 0;
  // The STATUS ioctl: drm_xe_oa_stream_status.oa_status, or -errno.
  virtual int stream_status(int stream, std::uint64_t& oa_status) = 0;
  virtual void close_stream(int stream) = 0;
};

// The render node at `render_node` (opened O_RDWR|O_CLOEXEC) and its card's sysfs directory,
// where xe lists the metric sets it holds. Throws std::runtime_error saying what to do.
std::unique_ptr<XeObservation> make_drm_xe_observation(const std::string& render_node,
                                                       const std::string& card_sysfs);

// What draining a stream found: whole reports, the losses the STATUS ioctl named, and the last
// report (empty before the first).
struct XeStreamCounts {
  std::uint64_t reports = 0;
  int report_lost = 0;       // DRM_XE_OASTATUS_REPORT_LOST seen
  int buffer_overflow = 0;   // DRM_XE_OASTATUS_BUFFER_OVERFLOW
  int counter_overflow = 0;  // DRM_XE_OASTATUS_COUNTER_OVERFLOW
  std::vector<std::uint8_t> last_report;
  bool lost_anything() const { return report_lost + buffer_overflow + counter_overflow > 0; }
};

// Reads what the stream has, at most `max_bytes` per call (one OA buffer: xe's default is 16
// MiB), handing every whole report to `on_report`. An -EIO read asks STATUS and counts what it
// names, then reads on. Throws std::runtime_error on another error or a read that is not a whole
// number of `report_bytes` reports.
void drain_xe_stream(XeObservation& xe, int stream, int report_bytes, XeStreamCounts& counts,
                     std::size_t max_bytes = 16u << 20,
                     void (*on_report)(std::span<const std::uint8_t>, void*) = nullptr,
                     void* context = nullptr);

}  // namespace oaprof::gpu
