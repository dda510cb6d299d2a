#include "attach/mem_tracker.h"

#include <algorithm>
#include <cstring>

namespace oaprof::attach {

void MemTracker::created(cl_mem mem, const MemInfo& info) {
  if (mem == nullptr) return;
  std::lock_guard lock(mu_);
  mems_.insert_or_assign(mem, info);  // a reused handle replaces what the old object was
}

void MemTracker::created_sub_buffer(cl_mem sub, cl_mem parent, std::size_t size_bytes,
                                    cl_mem_flags flags) {
  if (sub == nullptr) return;
  constexpr cl_mem_flags kAccess = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
  std::lock_guard lock(mu_);
  MemInfo info{MemKind::kBuffer, size_bytes, flags, nullptr};
  auto p = mems_.find(parent);
  if (p != mems_.end()) {
    info.context = p->second.context;
    if ((flags & kAccess) == 0) info.flags |= p->second.flags & kAccess;
  }
  mems_.insert_or_assign(sub, info);
}

void MemTracker::released(cl_mem mem) {
  std::lock_guard lock(mu_);
  mems_.erase(mem);
}

void MemTracker::set_arg(cl_kernel kernel, cl_uint index, std::size_t size, const void* value) {
  std::lock_guard lock(mu_);
  cl_mem mem = nullptr;
  if (size == sizeof(cl_mem) && value != nullptr) std::memcpy(&mem, value, sizeof mem);
  if (mem != nullptr && mems_.count(mem) > 0) {
    kernels_[kernel].args[index] = Arg{mem};
    return;
  }
  auto it = kernels_.find(kernel);
  if (it != kernels_.end()) it->second.args.erase(index);
}

void MemTracker::set_svm_arg(cl_kernel kernel, cl_uint index) {
  std::lock_guard lock(mu_);
  kernels_[kernel].args[index] = Arg{nullptr};
}

void MemTracker::set_indirect_svm(cl_kernel kernel) {
  std::lock_guard lock(mu_);
  kernels_[kernel].indirect_svm = true;
}

void MemTracker::cloned(cl_kernel from, cl_kernel to) {
  std::lock_guard lock(mu_);
  auto it = kernels_.find(from);
  if (it == kernels_.end()) {
    kernels_.erase(to);
    return;
  }
  const KernelArgs copy = it->second;  // `to` may rehash the table
  kernels_[to] = copy;
}

void MemTracker::kernel_released(cl_kernel kernel) {
  std::lock_guard lock(mu_);
  kernels_.erase(kernel);
}

ReplayPlan MemTracker::plan(cl_kernel kernel) const {
  ReplayPlan plan;
  std::lock_guard lock(mu_);
  auto k = kernels_.find(kernel);
  if (k == kernels_.end()) return plan;
  if (k->second.indirect_svm) {
    plan.refused = "the kernel reaches SVM through clSetKernelExecInfo";
    return plan;
  }
  std::vector<cl_mem> seen;  // the same buffer may be bound to several arguments
  for (const auto& [index, arg] : k->second.args) {
    if (arg.mem == nullptr) {
      plan.refused = "argument " + std::to_string(index) + " is an SVM pointer";
      return plan;
    }
    auto m = mems_.find(arg.mem);
    if (m == mems_.end()) continue;  // released since it was bound: the launch cannot use it
    const MemInfo& info = m->second;
    if (info.kind != MemKind::kBuffer) {
      plan.refused = "argument " + std::to_string(index) + " is " +
                     (info.kind == MemKind::kImage ? "an image" : "a pipe");
      return plan;
    }
    if (std::find(seen.begin(), seen.end(), arg.mem) != seen.end()) continue;
    seen.push_back(arg.mem);
    if (info.flags & CL_MEM_READ_ONLY) {
      plan.read_only_bytes += info.size_bytes;
      continue;
    }
    plan.restore.push_back({arg.mem, info.size_bytes, info.context});
    plan.restore_bytes += info.size_bytes;
  }
  return plan;
}

}  // namespace oaprof::attach
