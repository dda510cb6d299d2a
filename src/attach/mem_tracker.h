// Kernel replay must put back every buffer a kernel may write before running it again, and
// OpenCL cannot be asked which cl_mem a kernel argument holds. The tracker remembers the memory
// objects the program created and what it bound to each kernel argument, and turns that into a
// replay plan for one launch. Only the interceptor feeds it (and only when replay is on); it
// never calls OpenCL, so it is tested with made-up handles.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace oaprof::attach {

enum class MemKind : std::uint8_t { kBuffer, kImage, kPipe };

struct MemInfo {
  MemKind kind = MemKind::kBuffer;
  std::size_t size_bytes = 0;
  cl_mem_flags flags = 0;
  cl_context context = nullptr;
};

struct ReplayBuffer {
  cl_mem mem = nullptr;
  std::size_t size_bytes = 0;
  cl_context context = nullptr;
};

struct ReplayPlan {
  // Writable buffers bound to the kernel, each once: saved before the first pass and restored
  // before every further one.
  std::vector<ReplayBuffer> restore;
  std::uint64_t restore_bytes = 0;
  // Bound buffers created CL_MEM_READ_ONLY: the kernel cannot change them, so they are neither
  // saved nor restored.
  std::uint64_t read_only_bytes = 0;
  // Non-empty: why this launch must not be replayed (an SVM pointer, an image or a pipe among its
  // arguments, whose contents the interceptor cannot save and restore).
  std::string refused;
};

class MemTracker {
 public:
  void created(cl_mem mem, const MemInfo& info);
  // A sub-buffer without access flags of its own has its parent's (clCreateSubBuffer).
  void created_sub_buffer(cl_mem sub, cl_mem parent, std::size_t size_bytes, cl_mem_flags flags);
  // The program's last reference is going: the handle may be reused by a later object.
  void released(cl_mem mem);
  // clSetKernelArg: an argument of sizeof(cl_mem) bytes whose value is a tracked object binds it;
  // anything else (a scalar, local memory, a null buffer) unbinds the index.
  void set_arg(cl_kernel kernel, cl_uint index, std::size_t size, const void* value);
  void set_svm_arg(cl_kernel kernel, cl_uint index);
  // clSetKernelExecInfo(CL_KERNEL_EXEC_INFO_SVM_PTRS…): the kernel reaches SVM besides its
  // arguments.
  void set_indirect_svm(cl_kernel kernel);
  void cloned(cl_kernel from, cl_kernel to);
  void kernel_released(cl_kernel kernel);

  ReplayPlan plan(cl_kernel kernel) const;

 private:
  struct Arg {
    cl_mem mem = nullptr;  // null: an SVM pointer
  };
  struct KernelArgs {
    std::map<cl_uint, Arg> args;
    bool indirect_svm = false;
  };
  mutable std::mutex mu_;
  std::unordered_map<cl_mem, MemInfo> mems_;
  std::unordered_map<cl_kernel, KernelArgs> kernels_;
};

}  // namespace oaprof::attach
