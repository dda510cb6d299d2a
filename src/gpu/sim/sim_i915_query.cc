// I915Query on the simulator: the kernel side of DRM_IOCTL_I915_QUERY and GETPARAM as
// i915_query.c and i915_getparam_ioctl answer them, for a simulated part whose topology has
// SimConfig::eus enabled EUs (the last subslices lose theirs first) and whose timestamp runs at
// its platform's frequency; its OA timestamp (I915_PARAM_OA_TIMESTAMP_FREQUENCY) at that
// frequency << (3 - the CTC shift in its RPM_CONFIG0) on Xe-LPG, as i915's.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "gpu/i915/i915_query.h"
#include "mmio/registers.h"
#include "mmio/timestamp_clock.h"

#include <i915_drm.h>

namespace oaprof::gpu {
namespace {

class SimI915Query final : public I915Query {
 public:
  explicit SimI915Query(mmio::SimGpu& sim)
      : sim_(sim),
        topology_(topology_bytes(sim)),
        timestamp_hz_(static_cast<int>(sim.config().platform.timestamp_hz)) {}

  std::string describe() const override { return "simulated i915"; }

  int query(drm_i915_query& q) override {
    if (q.flags != 0) return -EINVAL;
    if (q.num_items > 0 && q.items_ptr == 0) return -EFAULT;
    auto* items = reinterpret_cast<drm_i915_query_item*>(static_cast<std::uintptr_t>(q.items_ptr));
    for (std::uint32_t i = 0; i < q.num_items; ++i) {
      drm_i915_query_item& item = items[i];
      if (item.query_id == 0) return -EINVAL;
      item.length = item.query_id == DRM_I915_QUERY_TOPOLOGY_INFO ? topology(item) : -EINVAL;
    }
    return 0;
  }

  int get_param(drm_i915_getparam& p) override {
    if (p.param != I915_PARAM_CS_TIMESTAMP_FREQUENCY && p.param != kI915ParamOaTimestampFrequency) {
      return -EINVAL;  // not modelled
    }
    if (p.value == nullptr) return -EFAULT;
    *p.value = p.param == I915_PARAM_CS_TIMESTAMP_FREQUENCY ? timestamp_hz_ : oa_timestamp_hz();
    return 0;
  }

 private:
  // i915_perf_oa_timestamp_frequency(): RPM_CONFIG0 read at each call, as i915 does.
  int oa_timestamp_hz() {
    const std::uint32_t rpm_config0 = sim_.read32(mmio::reg::kRpmConfig0);
    return static_cast<int>(
        mmio::oa_timestamp_hz(sim_.config().platform, timestamp_hz_, rpm_config0));
  }

  // query_topology_info(): flags must be 0; a zero length asks for the length; a shorter one
  // is refused; the header the caller passes must have zero flags.
  std::int32_t topology(const drm_i915_query_item& item) const {
    const auto total = static_cast<std::int32_t>(topology_.size());
    if (item.flags != 0) return -EINVAL;
    if (item.length == 0) return total;
    if (item.length < total) return -EINVAL;
    if (item.data_ptr == 0) return -EFAULT;
    auto* data = reinterpret_cast<std::uint8_t*>(static_cast<std::uintptr_t>(item.data_ptr));
    std::uint16_t flags = 0;
    std::memcpy(&flags, data, sizeof flags);
    if (flags != 0) return -EINVAL;
    std::memcpy(data, topology_.data(), topology_.size());
    return total;
  }

  // i915's xehp_sseu_info_init() (graphics 12.55 and later) gives DG2 one slice of 32 possible
  // Xe-cores (one geometry and one compute DSS fuse register of 32 bits each) of up to 16 EUs,
  // whatever the die has; the enabled ones come first. Source: linux
  // drivers/gpu/drm/i915/gt/intel_sseu.c @ Kingxukai/linux
  // 0291023e7330da28f2f7453c87c2ab7082d8360f.
  static int max_subslices_per_slice(const oa::Platform& p, int subslices, int slices) {
    if (p.gen == oa::Generation::kXeHpg) return std::max(subslices, 32);
    return (subslices + slices - 1) / slices;
  }

  // The platform's layout, every subslice with the same number of EUs, then EUs fused off from
  // the last subslice backwards until the part has its own count.
  static std::vector<std::uint8_t> topology_bytes(const mmio::SimGpu& sim) {
    const oa::Platform& p = sim.config().platform;
    const int slices = std::max(p.slices, 1);
    const int subslices = std::max(p.subslices, 1);
    const int per_slice = max_subslices_per_slice(p, subslices, slices);
    const int per_subslice = (p.eus + subslices - 1) / subslices;
    std::vector<std::uint32_t> masks(static_cast<std::size_t>(slices * per_slice), 0);
    const std::uint32_t full = per_subslice == 32 ? 0xFFFFFFFFu : (1u << per_subslice) - 1;
    for (int i = 0; i < subslices; ++i) masks[static_cast<std::size_t>(i)] = full;
    int extra = per_subslice * subslices - sim.eus();
    for (int i = subslices - 1; i >= 0 && extra > 0; --i) {
      for (int eu = per_subslice - 1; eu >= 0 && extra > 0; --eu, --extra) {
        masks[static_cast<std::size_t>(i)] &= ~(1u << eu);
      }
    }
    return oa::encode_topology(slices, per_slice, per_subslice, masks);
  }

  mmio::SimGpu& sim_;
  std::vector<std::uint8_t> topology_;
  int timestamp_hz_;
};

}  // namespace

std::unique_ptr<I915Query> make_sim_i915_query(mmio::SimGpu& sim) {
  return std::make_unique<SimI915Query>(sim);
}

}  // namespace oaprof::gpu
