#include "bench/known_work.h"

#include <gtest/gtest.h>

namespace oaprof::bench {
namespace {

TEST(KnownWorkTest, ComputeKernelsDoTheSameOperationsAtEveryWidthByTheirClass) {
  // 2048 / width iterations per work-item of width lanes: 2048 operations per work-item.
  const auto scalar = known_work("add_scalar", 4096);
  const auto vect4 = known_work("add_vect4", 4096);
  ASSERT_TRUE(scalar && vect4);
  EXPECT_DOUBLE_EQ(scalar->fp32_ops, 4096.0 * 2048);
  EXPECT_DOUBLE_EQ(vect4->fp32_ops, 4096.0 * 2048);
  EXPECT_DOUBLE_EQ(scalar->flops, scalar->fp32_ops);
  EXPECT_EQ(scalar->fp64_ops, 0);
  EXPECT_EQ(scalar->int_ops, 0);
  // A multiply-add is one operation and two FLOPs; integer work has no FLOPs.
  const auto mad = known_work("mad_dp_vect2", 100);
  ASSERT_TRUE(mad);
  EXPECT_DOUBLE_EQ(mad->fp64_ops, 100.0 * 2048);
  EXPECT_DOUBLE_EQ(mad->flops, 2 * mad->fp64_ops);
  const auto integer = known_work("mul_int_vect8", 64);
  ASSERT_TRUE(integer);
  EXPECT_DOUBLE_EQ(integer->int_ops, 64.0 * 2048);
  EXPECT_EQ(integer->flops, 0);
  // The start value read and the result written: per work-item, two double2s of 16 bytes.
  EXPECT_DOUBLE_EQ(mad->global_bytes, 2 * 100.0 * 2 * 8);
}

TEST(KnownWorkTest, LoadStoreMovesItsBufferBothWaysWhateverTheSize) {
  const auto w =
      known_work("load_store_vect4", 4096, WorkParams{.size_bytes = 1 << 20, .outer = {}});
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->global_bytes, 2.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(w->footprint_bytes, 2.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(w->global_accesses, 2.0 * (1 << 20) / 16);  // a float4 load and store each
  EXPECT_EQ(w->fp32_ops, 0);
}

TEST(KnownWorkTest, PointerChaseRepeatedOverASmallArrayTouchesItOnce) {
  // 64 KiB: 256 lines of 64 bytes; 256 work-items × 100 hops = 25600 line accesses.
  const auto w = known_work("pchase_bw", 256,
                            WorkParams{.iterations = 100, .size_bytes = 64 << 10, .outer = {}});
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->global_bytes, 25600.0 * 64 + 256 * 4);
  EXPECT_DOUBLE_EQ(w->footprint_bytes, (64 << 10) + 256 * 4);
}

TEST(KnownWorkTest, UnknownNamesAndUnsizedPowerVariantsHaveNoKnownWork) {
  EXPECT_FALSE(known_work("my_kernel", 64));
  EXPECT_FALSE(known_work("pchase", 64));  // the function both pointer chases run: ambiguous
  EXPECT_FALSE(known_work("power_add_scalar", 64));
  const auto sized = known_work("power_add_scalar", 64, {.outer = 3});
  ASSERT_TRUE(sized);
  EXPECT_DOUBLE_EQ(sized->fp32_ops, 64.0 * 2048 * 3);
}

TEST(KnownWorkTest, EmptyKernelOnlyDispatchesItsWorkItems) {
  const auto w = known_work("empty", 1 << 20);
  ASSERT_TRUE(w);
  EXPECT_EQ(*w, (oa::KernelWork{.work_items = double(1 << 20)}));
}

}  // namespace
}  // namespace oaprof::bench
