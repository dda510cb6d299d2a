// The rpc read-out's path to real hardware: i915 GEM buffers and EXECBUFFER2 through libdrm, with
// one relocation per report-buffer address in the batch (one MI_REPORT_PERF_COUNT before Gen12,
// an MI_STORE_REGISTER_MEM per register on Gen12+).
// It cannot run without an i915 GPU; tests cover the batch it submits (report_batch.h) and the
// errors on the way to the first ioctl.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <i915_drm.h>
#include <xf86drm.h>

#include "gpu/drm_node.h"
#include "gpu/i915/report_batch.h"

namespace oaprof::gpu {
namespace {

constexpr std::size_t kBufferBytes = 4096;
constexpr std::int64_t kWaitTimeoutNs = 1'000'000'000;

class DrmBatchRunner final : public BatchRunner {
 public:
  explicit DrmBatchRunner(const std::string& render_node)
      : fd_(open_i915_render_node(render_node)) {
    try {
      batch_ = create_buffer("batch");
      reports_ = create_buffer("report");
    } catch (...) {
      close_all();
      throw;
    }
  }
  ~DrmBatchRunner() override { close_all(); }
  DrmBatchRunner(const DrmBatchRunner&) = delete;
  DrmBatchRunner& operator=(const DrmBatchRunner&) = delete;

  std::uint64_t report_address() const override { return presumed_offset_; }

  void run(const ReportBatch& batch, std::span<std::uint8_t> report) override {
    std::vector<std::uint8_t> zero(std::min(report.size(), kBufferBytes), 0);
    pwrite(reports_, zero.data(), zero.size());  // a report the GPU did not write reads as id 0
    pwrite(batch_, batch.dwords.data(), batch.dwords.size() * 4);

    std::vector<drm_i915_gem_relocation_entry> relocs;
    for (const ReportBatch::Relocation& r : batch.relocations) {
      drm_i915_gem_relocation_entry reloc{};
      reloc.target_handle = reports_;
      reloc.delta = r.delta;
      reloc.offset = r.dword * 4;
      reloc.presumed_offset = presumed_offset_;
      reloc.read_domains = I915_GEM_DOMAIN_INSTRUCTION;
      reloc.write_domain = I915_GEM_DOMAIN_INSTRUCTION;
      relocs.push_back(reloc);
    }

    drm_i915_gem_exec_object2 objects[2]{};
    objects[0].handle = reports_;
    objects[0].offset = presumed_offset_;
    objects[0].flags = EXEC_OBJECT_WRITE;
    objects[1].handle = batch_;  // the batch goes last
    objects[1].relocation_count = static_cast<std::uint32_t>(relocs.size());
    objects[1].relocs_ptr = reinterpret_cast<std::uintptr_t>(relocs.data());

    drm_i915_gem_execbuffer2 exec{};
    exec.buffers_ptr = reinterpret_cast<std::uintptr_t>(objects);
    exec.buffer_count = 2;
    exec.batch_start_offset = 0;
    exec.batch_len = static_cast<std::uint32_t>(batch.dwords.size() * 4);
    exec.flags = I915_EXEC_RENDER;
    ioctl_or_throw(DRM_IOCTL_I915_GEM_EXECBUFFER2, &exec, "submit the report batch (EXECBUFFER2)");
    presumed_offset_ = objects[0].offset;

    drm_i915_gem_wait wait{};
    wait.bo_handle = batch_;
    wait.timeout_ns = kWaitTimeoutNs;
    ioctl_or_throw(DRM_IOCTL_I915_GEM_WAIT, &wait, "wait for the report batch (GEM_WAIT)");

    drm_i915_gem_pread pread{};
    pread.handle = reports_;
    pread.offset = 0;
    pread.size = std::min<std::size_t>(report.size(), kBufferBytes);
    pread.data_ptr = reinterpret_cast<std::uintptr_t>(report.data());
    ioctl_or_throw(DRM_IOCTL_I915_GEM_PREAD, &pread, "read the report back (GEM_PREAD)");
  }

 private:
  void ioctl_or_throw(unsigned long request, void* arg, const char* what) {
    if (drmIoctl(fd_, request, arg) != 0) {
      const int err = errno;
      throw std::runtime_error(
          fmt::format("i915: cannot {}: {}{}", what, std::strerror(err),
                      err == EACCES || err == EPERM
                          ? "; the render node refused it: check `oaprof doctor`"
                          : "; the GPU may be hung or the kernel too old: try --access mmio"));
    }
  }

  std::uint32_t create_buffer(const char* what) {
    drm_i915_gem_create create{};
    create.size = kBufferBytes;
    ioctl_or_throw(DRM_IOCTL_I915_GEM_CREATE, &create,
                   fmt::format("create the {} buffer (GEM_CREATE)", what).c_str());
    return create.handle;
  }

  void pwrite(std::uint32_t handle, const void* data, std::size_t size) {
    drm_i915_gem_pwrite w{};
    w.handle = handle;
    w.offset = 0;
    w.size = size;
    w.data_ptr = reinterpret_cast<std::uintptr_t>(data);
    ioctl_or_throw(DRM_IOCTL_I915_GEM_PWRITE, &w, "fill a buffer (GEM_PWRITE)");
  }

  void close_all() {
    for (std::uint32_t h : {batch_, reports_}) {
      if (h != 0) {
        drm_gem_close c{};
        c.handle = h;
        drmIoctl(fd_, DRM_IOCTL_GEM_CLOSE, &c);
      }
    }
    batch_ = reports_ = 0;
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  int fd_ = -1;
  std::uint32_t batch_ = 0;
  std::uint32_t reports_ = 0;
  std::uint64_t presumed_offset_ = 0;
};

}  // namespace

std::unique_ptr<BatchRunner> make_drm_batch_runner(const std::string& render_node) {
  return std::make_unique<DrmBatchRunner>(render_node);
}

}  // namespace oaprof::gpu
