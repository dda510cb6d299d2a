// I915Gem on the simulator: the kernel side of the GEM ioctls the rpc runner uses, answering as
// i915 does on the simulated part (i915_gem.h names the sources):
// - EXECBUFFER2 with relocations: EINVAL where i915_refuses_relocations (eb_validate_vma); else
//   the kernel picks unpinned objects' addresses and writes each relocation (64-bit from Gen8).
// - EXEC_OBJECT_PINNED: the object at exactly its offset, which must be page aligned and
//   canonical (EINVAL), within 4 GiB without EXEC_OBJECT_SUPPORTS_48B_ADDRESS, and not overlap
//   another (i915 cannot move a pinned object out of the way).
// - GEM pread/pwrite: EOPNOTSUPP where i915_refuses_relocations (i915_gem_pread_ioctl).
// - GEM_MMAP_OFFSET: on a card with local memory only FIXED, elsewhere FIXED refused
//   (__assign_mmap_offset: ENODEV); WB, WC and UC on integrated parts (PAT assumed on); GTT is
//   not modelled (EINVAL).
// The batch runs on SimGpu's interpreter, which sees the objects at their GPU addresses.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <i915_drm.h>

#include "gpu/i915/i915_gem.h"

namespace oaprof::gpu {
namespace {

constexpr std::uint64_t kPageBytes = 4096;
// Where the simulated kernel places objects that are not pinned, as i915 picks free space.
constexpr std::uint64_t kFirstKernelAddress = 0x10000;
constexpr std::uint64_t kFakeOffsetBase = 0x100000000;

struct SimObject {
  std::vector<std::uint8_t> bytes;
  std::optional<std::uint64_t> gpu_address;
  std::uint64_t fake_offset = 0;  // its mmap offset, once asked for
};

// 48-bit GPU addresses as i915 takes them: bit 47 copied to bits 63:48 (gen8_canonical_addr).
std::uint64_t canonical(std::uint64_t address) {
  const std::uint64_t low = address & ((1ull << 48) - 1);
  return (low & (1ull << 47)) != 0 ? low | 0xFFFF000000000000ull : low;
}

class SimI915Gem final : public I915Gem, private mmio::GpuAddressSpace {
 public:
  explicit SimI915Gem(mmio::SimGpu& sim) : sim_(sim), platform_(sim.config().platform) {}

  std::string describe() const override { return "simulated i915"; }

  int get_param(drm_i915_getparam& p) override {
    if (p.value == nullptr) return -EFAULT;
    switch (p.param) {
      case I915_PARAM_HAS_EXEC_SOFTPIN:
        *p.value = 1;  // i915_getparam_ioctl: always
        return 0;
      case I915_PARAM_HAS_LLC:
        // i915_pci.c: integrated Gen8-Gen12 share the LLC; mtl_info and DGFX parts do not.
        *p.value = !platform_.discrete && platform_.gen != oa::Generation::kXeLpg;
        return 0;
      default:
        return -EINVAL;  // not modelled
    }
  }

  int create(drm_i915_gem_create& c) override {
    if (c.size == 0) return -EINVAL;
    const std::uint64_t size = (c.size + kPageBytes - 1) / kPageBytes * kPageBytes;
    c.size = size;
    c.handle = next_handle_++;
    objects_[c.handle].bytes.assign(size, 0);
    return 0;
  }

  int pread(const drm_i915_gem_pread& r) override {
    std::uint8_t* bytes = nullptr;
    if (const int rc = cpu_copy_range(r.handle, r.offset, r.size, &bytes); rc != 0) return rc;
    std::memcpy(reinterpret_cast<void*>(static_cast<std::uintptr_t>(r.data_ptr)), bytes, r.size);
    return 0;
  }

  int pwrite(const drm_i915_gem_pwrite& w) override {
    std::uint8_t* bytes = nullptr;
    if (const int rc = cpu_copy_range(w.handle, w.offset, w.size, &bytes); rc != 0) return rc;
    std::memcpy(bytes, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(w.data_ptr)),
                w.size);
    return 0;
  }

  int mmap_offset(drm_i915_gem_mmap_offset& m) override {
    if (const int rc = check_mmap_type(m.flags); rc != 0) return rc;
    auto it = objects_.find(m.handle);
    if (it == objects_.end()) return -ENOENT;
    if (it->second.fake_offset == 0) {
      it->second.fake_offset = next_fake_offset_;
      next_fake_offset_ += it->second.bytes.size();
    }
    m.offset = it->second.fake_offset;
    return 0;
  }

  int map(std::uint64_t fake_offset, std::size_t size, std::uint8_t** bytes) override {
    for (auto& [handle, object] : objects_) {
      if (object.fake_offset == fake_offset && fake_offset != 0) {
        if (size > object.bytes.size()) return -EINVAL;
        *bytes = object.bytes.data();
        return 0;
      }
    }
    return -EINVAL;  // i915_gem_mmap: no node at that offset
  }

  void unmap(std::uint8_t*, std::size_t) override {}

  int execbuffer2(drm_i915_gem_execbuffer2& e) override {
    if (e.buffer_count == 0 || e.buffers_ptr == 0) return -EINVAL;
    if ((e.flags & I915_EXEC_RING_MASK) != I915_EXEC_RENDER) return -EINVAL;  // not modelled
    std::span objects(
        reinterpret_cast<drm_i915_gem_exec_object2*>(static_cast<std::uintptr_t>(e.buffers_ptr)),
        e.buffer_count);
    for (const auto& entry : objects) {
      if (const int rc = validate(entry); rc != 0) return rc;
    }
    if (const int rc = bind(objects); rc != 0) return rc;
    for (const auto& entry : objects) {
      if (const int rc = relocate(entry); rc != 0) return rc;
    }
    return run(objects.back(), e);
  }

  int wait(drm_i915_gem_wait& w) override {
    return objects_.contains(w.bo_handle) ? 0 : -ENOENT;  // batches finish at submission
  }

  void close_handle(std::uint32_t handle) override { objects_.erase(handle); }

 private:
  int cpu_copy_range(std::uint32_t handle, std::uint64_t offset, std::uint64_t size,
                     std::uint8_t** bytes) {
    if (i915_refuses_relocations(platform_)) return -EOPNOTSUPP;
    auto it = objects_.find(handle);
    if (it == objects_.end()) return -ENOENT;
    if (offset > it->second.bytes.size() || size > it->second.bytes.size() - offset) {
      return -EINVAL;
    }
    *bytes = it->second.bytes.data() + offset;
    return 0;
  }

  int check_mmap_type(std::uint64_t type) const {
    switch (type) {
      case I915_MMAP_OFFSET_FIXED:
        return platform_.discrete ? 0 : -ENODEV;
      case I915_MMAP_OFFSET_WB:
      case I915_MMAP_OFFSET_WC:
      case I915_MMAP_OFFSET_UC:
        return platform_.discrete ? -ENODEV : 0;
      default:
        return -EINVAL;
    }
  }

  // eb_validate_vma's checks that concern the runner.
  int validate(const drm_i915_gem_exec_object2& entry) const {
    if (!objects_.contains(entry.handle)) return -ENOENT;
    if (entry.relocation_count != 0 && i915_refuses_relocations(platform_)) return -EINVAL;
    if ((entry.flags & EXEC_OBJECT_PINNED) != 0 &&
        entry.offset != canonical(entry.offset & ~(kPageBytes - 1))) {
      return -EINVAL;
    }
    return 0;
  }

  // Pinned objects where they ask, the others where they were or at the next free address.
  int bind(std::span<drm_i915_gem_exec_object2> objects) {
    for (auto& entry : objects) {
      SimObject& object = objects_.at(entry.handle);
      const std::uint64_t size = object.bytes.size();
      if ((entry.flags & EXEC_OBJECT_PINNED) != 0) {
        const std::uint64_t address = entry.offset & ((1ull << 48) - 1);
        const bool low_only = (entry.flags & EXEC_OBJECT_SUPPORTS_48B_ADDRESS) == 0;
        if ((low_only && address + size > (1ull << 32)) || overlaps(entry.handle, address, size)) {
          return -EINVAL;
        }
        object.gpu_address = address;
      } else if (!object.gpu_address) {
        object.gpu_address = next_kernel_address_;
        next_kernel_address_ += size;
      }
      entry.offset = *object.gpu_address;
    }
    return 0;
  }

  bool overlaps(std::uint32_t handle, std::uint64_t address, std::uint64_t size) const {
    return std::any_of(objects_.begin(), objects_.end(), [&](const auto& other) {
      const SimObject& o = other.second;
      return other.first != handle && o.gpu_address && *o.gpu_address < address + size &&
             address < *o.gpu_address + o.bytes.size();
    });
  }

  int relocate(const drm_i915_gem_exec_object2& entry) {
    if (entry.relocation_count == 0) return 0;
    std::span relocs(reinterpret_cast<const drm_i915_gem_relocation_entry*>(
                         static_cast<std::uintptr_t>(entry.relocs_ptr)),
                     entry.relocation_count);
    std::vector<std::uint8_t>& bytes = objects_.at(entry.handle).bytes;
    const std::size_t width = platform_.gen == oa::Generation::kGen7_5 ? 4 : 8;
    for (const auto& reloc : relocs) {
      auto target = objects_.find(reloc.target_handle);
      if (target == objects_.end() || !target->second.gpu_address) return -ENOENT;
      if (reloc.offset % 4 != 0 || reloc.offset + width > bytes.size()) return -EINVAL;
      const std::uint64_t value = *target->second.gpu_address + reloc.delta;
      std::memcpy(bytes.data() + reloc.offset, &value, width);
    }
    return 0;
  }

  int run(const drm_i915_gem_exec_object2& batch_entry, const drm_i915_gem_execbuffer2& e) {
    const std::vector<std::uint8_t>& bytes = objects_.at(batch_entry.handle).bytes;
    const std::uint64_t length =
        e.batch_len == 0 ? bytes.size() - e.batch_start_offset : e.batch_len;
    if (e.batch_start_offset % 8 != 0 || length % 8 != 0 ||
        e.batch_start_offset + length > bytes.size()) {
      return -EINVAL;
    }
    std::vector<std::uint32_t> dwords(length / 4);
    std::memcpy(dwords.data(), bytes.data() + e.batch_start_offset, length);
    sim_.execute_batch(dwords, *this);
    return 0;
  }

  std::uint8_t* resolve(std::uint64_t gpu_address, std::size_t size) override {
    for (auto& [handle, object] : objects_) {
      if (object.gpu_address && gpu_address >= *object.gpu_address &&
          gpu_address + size <= *object.gpu_address + object.bytes.size()) {
        return object.bytes.data() + (gpu_address - *object.gpu_address);
      }
    }
    throw std::invalid_argument(fmt::format(
        "batch writes {} bytes at GPU address 0x{:X}, where no buffer of the submission is bound",
        size, gpu_address));
  }

  mmio::SimGpu& sim_;
  oa::Platform platform_;
  std::map<std::uint32_t, SimObject> objects_;
  std::uint32_t next_handle_ = 1;
  std::uint64_t next_kernel_address_ = kFirstKernelAddress;
  std::uint64_t next_fake_offset_ = kFakeOffsetBase;
};

}  // namespace

std::unique_ptr<I915Gem> make_sim_i915_gem(mmio::SimGpu& sim) {
  return std::make_unique<SimI915Gem>(sim);
}

}  // namespace oaprof::gpu
