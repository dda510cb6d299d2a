#include "attach/mem_tracker.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace oaprof::attach {
namespace {

// Made-up handles: the tracker only compares them.
template <typename T>
T fake(std::uintptr_t v) {
  return reinterpret_cast<T>(v);
}

class MemTrackerTest : public ::testing::Test {
 protected:
  void buffer(cl_mem m, std::size_t size, cl_mem_flags flags = CL_MEM_READ_WRITE) {
    t_.created(m, MemInfo{MemKind::kBuffer, size, flags, ctx_});
  }
  void bind(cl_uint index, cl_mem m) { t_.set_arg(k_, index, sizeof m, &m); }

  MemTracker t_;
  cl_context ctx_ = fake<cl_context>(0x10);
  cl_kernel k_ = fake<cl_kernel>(0x20);
  cl_mem a_ = fake<cl_mem>(0x100), b_ = fake<cl_mem>(0x200), c_ = fake<cl_mem>(0x300);
};

TEST_F(MemTrackerTest, WritableBuffersAreRestoredReadOnlyOnesAreNot) {
  buffer(a_, 4096);
  buffer(b_, 1000, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR);
  buffer(c_, 64, CL_MEM_WRITE_ONLY);
  bind(0, a_);
  bind(1, b_);
  bind(2, c_);
  const float scalar = 2.0f;
  t_.set_arg(k_, 3, sizeof scalar, &scalar);
  t_.set_arg(k_, 4, 256, nullptr);  // local memory
  const ReplayPlan p = t_.plan(k_);
  EXPECT_TRUE(p.refused.empty());
  ASSERT_EQ(p.restore.size(), 2u);
  EXPECT_EQ(p.restore[0].mem, a_);
  EXPECT_EQ(p.restore[1].mem, c_);
  EXPECT_EQ(p.restore_bytes, 4096u + 64u);
  EXPECT_EQ(p.read_only_bytes, 1000u);
}

TEST_F(MemTrackerTest, ABufferBoundTwiceIsSavedOnce) {
  buffer(a_, 128);
  buffer(b_, 32, CL_MEM_READ_ONLY);
  bind(0, a_);
  bind(1, a_);
  bind(2, b_);
  bind(3, b_);
  const ReplayPlan p = t_.plan(k_);
  EXPECT_EQ(p.restore.size(), 1u);
  EXPECT_EQ(p.restore_bytes, 128u);
  EXPECT_EQ(p.read_only_bytes, 32u);
}

TEST_F(MemTrackerTest, RebindingOrSettingAScalarUnbinds) {
  buffer(a_, 128);
  buffer(b_, 256);
  bind(0, a_);
  bind(0, b_);
  EXPECT_EQ(t_.plan(k_).restore_bytes, 256u);
  const cl_mem null_mem = nullptr;
  t_.set_arg(k_, 0, sizeof null_mem, &null_mem);
  EXPECT_TRUE(t_.plan(k_).restore.empty());
  // A pointer-sized scalar that is no buffer of ours binds nothing.
  const std::uint64_t not_a_buffer = 0xdead;
  t_.set_arg(k_, 0, sizeof not_a_buffer, &not_a_buffer);
  EXPECT_TRUE(t_.plan(k_).restore.empty());
}

TEST_F(MemTrackerTest, SvmImagesAndPipesAreRefused) {
  buffer(a_, 128);
  bind(0, a_);
  t_.set_svm_arg(k_, 1);
  EXPECT_NE(t_.plan(k_).refused.find("SVM"), std::string::npos);
  bind(1, a_);  // the SVM pointer replaced by a buffer
  EXPECT_TRUE(t_.plan(k_).refused.empty());
  t_.created(b_, MemInfo{MemKind::kImage, 0, CL_MEM_READ_WRITE, ctx_});
  bind(2, b_);
  EXPECT_NE(t_.plan(k_).refused.find("image"), std::string::npos);
  bind(2, a_);
  t_.created(c_, MemInfo{MemKind::kPipe, 0, CL_MEM_READ_WRITE, ctx_});
  bind(3, c_);
  EXPECT_NE(t_.plan(k_).refused.find("pipe"), std::string::npos);
  const cl_kernel other = fake<cl_kernel>(0x21);
  t_.set_indirect_svm(other);
  EXPECT_NE(t_.plan(other).refused.find("clSetKernelExecInfo"), std::string::npos);
}

TEST_F(MemTrackerTest, SubBuffersInheritTheirParentsAccess) {
  buffer(a_, 4096, CL_MEM_READ_ONLY);
  t_.created_sub_buffer(b_, a_, 1024, 0);
  t_.created_sub_buffer(c_, a_, 512, CL_MEM_READ_WRITE);
  bind(0, b_);
  bind(1, c_);
  const ReplayPlan p = t_.plan(k_);
  EXPECT_EQ(p.read_only_bytes, 1024u);
  EXPECT_EQ(p.restore_bytes, 512u);
}

TEST_F(MemTrackerTest, ReleasedObjectsAndKernelsAreForgottenClonesKeepTheirArgs) {
  buffer(a_, 128);
  buffer(b_, 64);
  bind(0, a_);
  bind(1, b_);
  const cl_kernel clone = fake<cl_kernel>(0x22);
  t_.cloned(k_, clone);
  t_.released(b_);
  EXPECT_EQ(t_.plan(k_).restore_bytes, 128u);
  EXPECT_EQ(t_.plan(clone).restore_bytes, 128u);
  t_.kernel_released(k_);
  EXPECT_TRUE(t_.plan(k_).restore.empty());
  EXPECT_EQ(t_.plan(clone).restore.size(), 1u);
  // A handle reused by a new object describes the new one.
  t_.created(a_, MemInfo{MemKind::kImage, 0, CL_MEM_READ_WRITE, ctx_});
  EXPECT_FALSE(t_.plan(clone).refused.empty());
}

}  // namespace
}  // namespace oaprof::attach
