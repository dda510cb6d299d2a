// The rpc read-out's path to i915 (a render node or the simulated i915): two GEM buffers, the
// batch and the report buffer, submitted with EXECBUFFER2 on the render engine.
// - Before Gen12, and on Tiger Lake: one relocation per report-buffer address in the batch, and
//   the buffers filled and read with GEM pwrite/pread — the path these parts have always run.
// - Every later part (i915_refuses_relocations): no relocations and no pread/pwrite, which i915
//   refuses there. Both buffers are softpinned (EXEC_OBJECT_PINNED) at fixed addresses of the
//   context's own full PPGTT, so the batch is built for its final address, and they are mapped
//   through GEM_MMAP_OFFSET: FIXED on a card with local memory (the only type i915 offers there,
//   __assign_mmap_offset), else WB where the GPU shares the CPU's LLC (I915_PARAM_HAS_LLC) and WC
//   where it does not (Meteor Lake, i915_pci.c mtl_info .has_llc = 0), so that the CPU sees the
//   GPU's writes without clflush — Mesa iris's choice. Softpin is kept to those parts because the
//   relocation path is the one proven on the older ones, and Haswell's aliasing PPGTT shares its
//   addresses with the global GTT, where a fixed address may be taken.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <i915_drm.h>

#include "gpu/i915/i915_gem.h"
#include "gpu/i915/report_batch.h"

namespace oaprof::gpu {
namespace {

constexpr std::size_t kBufferBytes = 4096;
constexpr std::int64_t kWaitTimeoutNs = 1'000'000'000;
// Softpin addresses: page and 2 MiB aligned (DG2 needs 64 KiB for local memory), canonical,
// below 4 GiB, and not 0, which Mesa keeps unmapped to catch null addresses.
constexpr std::uint64_t kSoftpinBatchAddress = 0x200000;
constexpr std::uint64_t kSoftpinReportAddress = 0x400000;

struct GemBuffer {
  std::uint32_t handle = 0;
  std::uint8_t* map = nullptr;  // the mapping on the softpin path, else null
};

class GemBatchRunner final : public BatchRunner {
 public:
  GemBatchRunner(std::unique_ptr<I915Gem> gem, const oa::Platform& platform)
      : gem_(std::move(gem)), softpin_(i915_refuses_relocations(platform)) {
    try {
      if (softpin_) require_softpin();
      batch_.handle = create_buffer("batch");
      reports_.handle = create_buffer("report");
      if (softpin_) {
        const std::uint32_t type = mmap_type(platform);
        map_buffer(batch_, type, "batch");
        map_buffer(reports_, type, "report");
      }
    } catch (...) {
      release();
      throw;
    }
  }
  ~GemBatchRunner() override { release(); }
  GemBatchRunner(const GemBatchRunner&) = delete;
  GemBatchRunner& operator=(const GemBatchRunner&) = delete;

  std::uint64_t report_address() const override {
    return softpin_ ? kSoftpinReportAddress : presumed_offset_;
  }

  void run(const ReportBatch& batch, std::span<std::uint8_t> report) override {
    const std::size_t report_bytes = std::min(report.size(), kBufferBytes);
    const std::vector<std::uint8_t> zero(report_bytes, 0);
    write(reports_, zero.data(), zero.size());  // a report the GPU did not write reads as id 0
    write(batch_, batch.dwords.data(), batch.dwords.size() * 4);
    submit(batch);
    drm_i915_gem_wait wait{};
    wait.bo_handle = batch_.handle;
    wait.timeout_ns = kWaitTimeoutNs;
    check(gem_->wait(wait), "wait for the report batch (GEM_WAIT)");
    read(reports_, report.data(), report_bytes);
  }

 private:
  void submit(const ReportBatch& batch) {
    std::vector<drm_i915_gem_relocation_entry> relocs;
    drm_i915_gem_exec_object2 objects[2]{};
    objects[0].handle = reports_.handle;
    objects[0].flags = EXEC_OBJECT_WRITE;
    objects[1].handle = batch_.handle;  // the batch goes last
    if (softpin_) {
      objects[0].offset = kSoftpinReportAddress;
      objects[1].offset = kSoftpinBatchAddress;
      for (auto& object : objects) {
        object.flags |= EXEC_OBJECT_PINNED | EXEC_OBJECT_SUPPORTS_48B_ADDRESS;
      }
    } else {
      relocs = relocations(batch);
      objects[0].offset = presumed_offset_;
      objects[1].relocation_count = static_cast<std::uint32_t>(relocs.size());
      objects[1].relocs_ptr = reinterpret_cast<std::uintptr_t>(relocs.data());
    }
    drm_i915_gem_execbuffer2 exec{};
    exec.buffers_ptr = reinterpret_cast<std::uintptr_t>(objects);
    exec.buffer_count = 2;
    exec.batch_len = static_cast<std::uint32_t>(batch.dwords.size() * 4);
    exec.flags = I915_EXEC_RENDER;
    check(gem_->execbuffer2(exec), "submit the report batch (EXECBUFFER2)");
    if (!softpin_) presumed_offset_ = objects[0].offset;
  }

  std::vector<drm_i915_gem_relocation_entry> relocations(const ReportBatch& batch) const {
    std::vector<drm_i915_gem_relocation_entry> relocs;
    for (const ReportBatch::Relocation& r : batch.relocations) {
      drm_i915_gem_relocation_entry reloc{};
      reloc.target_handle = reports_.handle;
      reloc.delta = r.delta;
      reloc.offset = r.dword * 4;
      reloc.presumed_offset = presumed_offset_;
      reloc.read_domains = I915_GEM_DOMAIN_INSTRUCTION;
      reloc.write_domain = I915_GEM_DOMAIN_INSTRUCTION;
      relocs.push_back(reloc);
    }
    return relocs;
  }

  void check(int rc, const std::string& what) const {
    if (rc == 0) return;
    const int err = -rc;
    throw std::runtime_error(
        fmt::format("i915 ({}): cannot {}: {}{}", gem_->describe(), what, std::strerror(err),
                    err == EACCES || err == EPERM
                        ? "; the render node refused it: check `oaprof doctor`"
                        : "; the GPU may be hung or the kernel too old: try --access mmio"));
  }

  void require_softpin() {
    int has_softpin = 0;
    drm_i915_getparam p{};
    p.param = I915_PARAM_HAS_EXEC_SOFTPIN;
    p.value = &has_softpin;
    check(gem_->get_param(p), "ask for softpin (I915_PARAM_HAS_EXEC_SOFTPIN)");
    if (has_softpin != 1) {
      throw std::runtime_error(fmt::format(
          "i915 ({}) offers no softpin (I915_PARAM_HAS_EXEC_SOFTPIN is {}), and refuses "
          "relocations on this part: the rpc read-out cannot submit its batch; use --access mmio "
          "or --access perf",
          gem_->describe(), has_softpin));
    }
  }

  std::uint32_t mmap_type(const oa::Platform& platform) {
    if (platform.discrete) return I915_MMAP_OFFSET_FIXED;
    int has_llc = 0;
    drm_i915_getparam p{};
    p.param = I915_PARAM_HAS_LLC;
    p.value = &has_llc;
    check(gem_->get_param(p), "ask whether the GPU shares the LLC (I915_PARAM_HAS_LLC)");
    return has_llc != 0 ? I915_MMAP_OFFSET_WB : I915_MMAP_OFFSET_WC;
  }

  std::uint32_t create_buffer(const char* what) {
    drm_i915_gem_create create{};
    create.size = kBufferBytes;
    check(gem_->create(create), fmt::format("create the {} buffer (GEM_CREATE)", what));
    return create.handle;
  }

  void map_buffer(GemBuffer& buffer, std::uint32_t type, const char* what) {
    drm_i915_gem_mmap_offset m{};
    m.handle = buffer.handle;
    m.flags = type;
    check(gem_->mmap_offset(m), fmt::format("map the {} buffer (GEM_MMAP_OFFSET)", what));
    check(gem_->map(m.offset, kBufferBytes, &buffer.map), fmt::format("mmap the {} buffer", what));
  }

  void write(GemBuffer& buffer, const void* data, std::size_t size) {
    if (buffer.map != nullptr) {
      std::memcpy(buffer.map, data, size);
      return;
    }
    drm_i915_gem_pwrite w{};
    w.handle = buffer.handle;
    w.size = size;
    w.data_ptr = reinterpret_cast<std::uintptr_t>(data);
    check(gem_->pwrite(w), "fill a buffer (GEM_PWRITE)");
  }

  void read(const GemBuffer& buffer, std::uint8_t* out, std::size_t size) {
    if (buffer.map != nullptr) {
      std::memcpy(out, buffer.map, size);
      return;
    }
    drm_i915_gem_pread r{};
    r.handle = buffer.handle;
    r.size = size;
    r.data_ptr = reinterpret_cast<std::uintptr_t>(out);
    check(gem_->pread(r), "read the report back (GEM_PREAD)");
  }

  void release() {
    for (GemBuffer* buffer : {&batch_, &reports_}) {
      if (buffer->map != nullptr) gem_->unmap(buffer->map, kBufferBytes);
      if (buffer->handle != 0) gem_->close_handle(buffer->handle);
      *buffer = {};
    }
  }

  std::unique_ptr<I915Gem> gem_;
  bool softpin_;
  GemBuffer batch_;
  GemBuffer reports_;
  std::uint64_t presumed_offset_ = 0;
};

}  // namespace

std::unique_ptr<BatchRunner> make_gem_batch_runner(std::unique_ptr<I915Gem> gem,
                                                   const oa::Platform& platform) {
  return std::make_unique<GemBatchRunner>(std::move(gem), platform);
}

std::unique_ptr<BatchRunner> make_drm_batch_runner(const std::string& render_node,
                                                   const oa::Platform& platform) {
  return make_gem_batch_runner(open_i915_gem(render_node), platform);
}

std::unique_ptr<BatchRunner> make_sim_batch_runner(mmio::SimGpu& sim) {
  return make_gem_batch_runner(make_sim_i915_gem(sim), sim.config().platform);
}

}  // namespace oaprof::gpu
