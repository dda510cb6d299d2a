// Runs catalogue kernels for real on the first OpenCL device (PoCL here) at small sizes.
#include "launch/runner.h"

#include <gtest/gtest.h>

namespace oaprof::launch {
namespace {

RunnerOptions small() {
  RunnerOptions o;
  o.work_groups = 4;
  o.work_items = 16;
  o.iterations = 64;
  o.min_time_ms = 0;
  o.max_repeats = 3;
  return o;
}

class RunnerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { runner_ = new Runner(small()); }
  static void TearDownTestSuite() {
    delete runner_;
    runner_ = nullptr;
  }
  static Runner* runner_;
};
Runner* RunnerTest::runner_ = nullptr;

TEST_F(RunnerTest, RunsAndVerifiesOneKernelOfEachTypeAndWidthFamily) {
  for (const char* name : {"mad_vect4", "add_scalar", "sub_vect16", "mul_int_vect8", "div_int_vect2",
                           "div_vect8", "add_dp_scalar", "mad_dp_vect4"}) {
    const auto spec = parse_kernel_name(name);
    ASSERT_TRUE(spec) << name;
    try {
      const RunResult r = runner_->run(*spec);
      EXPECT_EQ(r.global_size, 64u) << name;
      EXPECT_EQ(r.kernel_ns.size(), r.stats.count);
      EXPECT_GE(r.stats.count, 1u);
      EXPECT_LE(r.stats.count, 3u);
      EXPECT_GT(r.stats.median, 0.0) << name;
      EXPECT_DOUBLE_EQ(r.ops, 64.0 * 64 * spec->ops_per_iteration());
    } catch (const Unsupported& e) {
      EXPECT_EQ(spec->type, DataType::kDp) << e.what();  // only fp64 may be missing
    }
  }
}

TEST_F(RunnerTest, ABrokenKernelIsCaughtByVerification) {
  // Same interface as compute.cl, but forgets the last iteration.
  runner_->set_source_override(R"(
    __kernel void KERNEL_NAME(__global const T* in, __global T* out, __constant T* operand,
                              const int iterations) {
      const size_t i = get_global_id(0);
      T x = in[i];
      const T m = operand[get_local_id(0)];
      for (int k = 0; k < iterations - 1; ++k) x = x + m;
      out[i] = x;
    })");
  const auto spec = parse_kernel_name("add_int_scalar");
  try {
    runner_->run(*spec);
    FAIL() << "a wrong result must fail the run";
  } catch (const VerificationError& e) {
    EXPECT_NE(std::string(e.what()).find("wrong result at element 0"), std::string::npos) << e.what();
  }
  runner_->set_source_override("");
}

TEST_F(RunnerTest, RepeatsUntilTheMinimumTimeIsCovered) {
  RunnerOptions o = small();
  o.min_time_ms = 5;
  o.max_repeats = 100000;
  Runner r(o);
  const RunResult res = r.run(*parse_kernel_name("mad_scalar"));
  EXPECT_GE(res.stats.sum, 5e6);
}

TEST(RunnerSetupTest, UnknownDeviceNamesWhatExists) {
  RunnerOptions o = small();
  o.device = "no-such-device-anywhere";
  try {
    Runner r(o);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("available: 0:"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace oaprof::launch
