// Runs catalogue kernels for real on the first OpenCL device (PoCL here) at small sizes. One
// Runner is shared, so each program (sp, dp, int, memory) is compiled once for the whole suite.
#include "bench/runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <climits>

namespace oaprof::bench {
namespace {

using ::testing::HasSubstr;

RunnerOptions small() {
  RunnerOptions o;
  o.work_groups = 2;
  o.work_items = 8;
  o.iterations = 16;
  o.min_time_ms = 0;
  o.max_repeats = 2;
  o.size_bytes = 4096;
  o.power_ms = 0.2;
  return o;
}

class RunnerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { runner_ = new Runner(small()); }
  static void TearDownTestSuite() {
    delete runner_;
    runner_ = nullptr;
  }
  void SetUp() override { runner_->options() = small(); }
  void TearDown() override { runner_->set_source_override(""); }
  static Runner* runner_;
};
Runner* RunnerTest::runner_ = nullptr;

TEST_F(RunnerTest, EveryCatalogueKernelBuildsRunsAndVerifies) {
  for (const auto& entry : catalogue()) {
    const auto spec = parse_kernel_name(entry.name);
    ASSERT_TRUE(spec) << entry.name;
    try {
      const RunResult r = runner_->run(*spec);
      EXPECT_EQ(r.kernel_ns.size(), r.stats.count) << entry.name;
      EXPECT_GE(r.stats.count, 1u) << entry.name;
      EXPECT_LE(r.stats.count, 2u) << entry.name;
      EXPECT_GT(r.stats.median, 0.0) << entry.name;
      EXPECT_GT(r.work, 0.0) << entry.name;
      if (spec->kind != Kind::kEmpty) {
        EXPECT_GT(r.verified, 0u) << entry.name;
      }
    } catch (const Unsupported& e) {
      EXPECT_EQ(spec->type, DataType::kDp) << e.what();  // only fp64 may be missing
      EXPECT_THAT(e.what(), HasSubstr("no double precision"));
    }
  }
}

TEST_F(RunnerTest, ComputeWorkFollowsTheGeometry) {
  runner_->options().iterations = 0;  // the default: 2048 / width, equal work for every width
  const RunResult v4 = runner_->run(*parse_kernel_name("mad_vect4"));
  EXPECT_EQ(v4.global_size, 16u);
  EXPECT_EQ(v4.local_size, 8u);
  EXPECT_EQ(v4.iterations, 512);
  EXPECT_EQ(v4.unit, Unit::kGflops);
  EXPECT_DOUBLE_EQ(v4.ops, 16.0 * 512 * 8);
  EXPECT_EQ(v4.verified, 64u);  // 16 work-items × 4 lanes, all checked at this size
  const RunResult v16 = runner_->run(*parse_kernel_name("add_int_vect16"));
  EXPECT_EQ(v16.iterations, 128);
  EXPECT_EQ(v16.unit, Unit::kGops);
  EXPECT_DOUBLE_EQ(v16.ops, 16.0 * 128 * 16);
}

TEST_F(RunnerTest, EveryVariantVerifies) {
  for (Variant v : {Variant::kPrivate, Variant::kLoop, Variant::kUnrolled, Variant::kSingle}) {
    runner_->options().variant = v;
    runner_->options().iterations = 70;  // one unrolled block of 64 and a remainder of 6
    for (const char* name : {"mad_vect4", "sub_int_vect2", "div_scalar"}) {
      const RunResult r = runner_->run(*parse_kernel_name(name));
      EXPECT_EQ(r.variant, v);
      EXPECT_EQ(r.iterations, v == Variant::kSingle ? 1 : 70) << name << " " << variant_name(v);
    }
  }
}

TEST_F(RunnerTest, PowerVariantsSizeTheirOuterLoop) {
  runner_->options().power_ms = 2;
  const RunResult r = runner_->run(*parse_kernel_name("power_mad_vect2"));
  EXPECT_GE(r.outer, 1);
  EXPECT_DOUBLE_EQ(r.ops, 16.0 * 16 * r.outer * 4);
  EXPECT_GT(r.verified, 0u);  // the outer loop leaves the result the plain chain gives
  // Whether the launch really got longer is timing, which a loaded machine can invert: that
  // belongs to kernel_runner's own runs, not here. The sizing itself is checked below.
  const RunResult plain = runner_->run(*parse_kernel_name("mad_vect2"));
  EXPECT_DOUBLE_EQ(r.ops, plain.ops * r.outer);
}

TEST(OuterRepeatsTest, AimAtThePowerWindowFromOneChainsTime) {
  EXPECT_EQ(outer_repeats_for(2, 100'000, 16), 20);  // 2 ms of 0.1 ms chains
  EXPECT_EQ(outer_repeats_for(100, 1'000'000, 16), 100);
  EXPECT_EQ(outer_repeats_for(2, 3'000'000, 16), 1);       // one chain already longer
  EXPECT_EQ(outer_repeats_for(2, 0, 16), 2'000'000);       // an unmeasurable chain counts as 1 ns
  EXPECT_EQ(outer_repeats_for(1e9, 1, 16), INT_MAX / 16);  // iterations × outer stays an int
  EXPECT_EQ(outer_repeats_for(1e9, 1, 0), INT_MAX);
}

TEST_F(RunnerTest, MemoryKernelsCountTheirBytes) {
  runner_->options().iterations = 0;  // hops: walk the data once
  const RunResult ls = runner_->run(*parse_kernel_name("load_store_vect4"));
  EXPECT_EQ(ls.size_bytes, 4096u);
  EXPECT_DOUBLE_EQ(ls.work, 2 * 4096.0);  // read once and written once
  EXPECT_EQ(ls.unit, Unit::kGbytes);
  EXPECT_EQ(ls.verified, 1024u);
  const RunResult bw = runner_->run(*parse_kernel_name("pchase_bw"));
  // 1024 elements, stride 16: 64 lines over 16 work-items = 4 hops each, 64 bytes a hop.
  EXPECT_EQ(bw.iterations, 4);
  EXPECT_DOUBLE_EQ(bw.work, 16.0 * 4 * 64);
  const RunResult lat = runner_->run(*parse_kernel_name("pchase_lat"));
  EXPECT_EQ(lat.global_size, 1u);
  EXPECT_EQ(lat.iterations, 64);
  EXPECT_EQ(lat.unit, Unit::kNsPerAccess);
  runner_->options().stride = 4;  // shorter than a line: 16 bytes an access
  EXPECT_DOUBLE_EQ(runner_->run(*parse_kernel_name("pchase_bw")).work, 16.0 * 16 * 16);
}

TEST_F(RunnerTest, BadSizesAreUsageErrors) {
  runner_->options().size_bytes = 2;
  EXPECT_THROW(runner_->run(*parse_kernel_name("load_store_vect4")), std::invalid_argument);
  runner_->options().size_bytes = 4096;
  runner_->options().stride = 5000;
  EXPECT_THROW(runner_->run(*parse_kernel_name("pchase_bw")), std::invalid_argument);
}

TEST_F(RunnerTest, ABrokenComputeKernelIsCaughtByVerification) {
  // Same interface as compute.cl, but forgets the last iteration.
  runner_->set_source_override(R"(
    __kernel void add_int_scalar(__global const uint* in, __global uint* out,
                                 __constant uint* operand, const int iterations, const int outer,
                                 const uint zero) {
      const size_t i = get_global_id(0);
      uint x = in[i];
      const uint m = operand[get_local_id(0)];
      for (int k = 0; k < iterations - 1; ++k) x = x + m;
      out[i] = x;
    })");
  try {
    runner_->run(*parse_kernel_name("add_int_scalar"));
    FAIL() << "a wrong result must fail the run";
  } catch (const VerificationError& e) {
    EXPECT_THAT(e.what(), HasSubstr("add_int_scalar: wrong result at element 0: got 1015, "
                                    "expected 1016"));
  }
}

TEST_F(RunnerTest, ABrokenMemoryKernelIsCaughtByVerification) {
  runner_->set_source_override(R"(
    __kernel void load_store_scalar(__global const float* in, __global float* out, const uint n) {
      for (uint j = get_global_id(0); j < n; j += get_global_size(0)) out[j] = j == 7 ? 0 : in[j];
    }
    __kernel void pchase(__global const uint* next, __global uint* out, const int hops,
                         const uint stride, const uint n) {
      out[get_global_id(0)] = 0;
    })");
  try {
    runner_->run(*parse_kernel_name("load_store_scalar"));
    FAIL() << "a wrong copy must fail the run";
  } catch (const VerificationError& e) {
    EXPECT_THAT(e.what(), HasSubstr("wrong result at element 7: got 0, expected 7.5"));
  }
  EXPECT_THROW(runner_->run(*parse_kernel_name("pchase_bw")), VerificationError);
}

TEST_F(RunnerTest, TheRepeatRuleStopsAtTheCap) {
  runner_->options().min_time_ms = 1e6;  // never covered: only the cap can stop it
  runner_->options().max_repeats = 4;
  EXPECT_EQ(runner_->run(*parse_kernel_name("add_scalar")).stats.count, 4u);
}

TEST_F(RunnerTest, TheRepeatRuleStopsOnceTheWindowIsCoveredAndTheErrorIsSmall) {
  // Stops at the first launch after which the rule (window covered, standard error under 2% of
  // the mean, or the cap) says enough: not one launch earlier and not one later.
  const RepeatRule rule{2e6, 2000, 0.02};
  runner_->options().min_time_ms = 2;
  runner_->options().max_repeats = 2000;
  const RunResult r = runner_->run(*parse_kernel_name("mad_scalar"));
  EXPECT_FALSE(rule.more(r.kernel_ns));
  const std::vector<double> fewer(r.kernel_ns.begin(), r.kernel_ns.end() - 1);
  EXPECT_TRUE(rule.more(fewer));
  if (r.stats.count < 2000) {
    EXPECT_GE(r.stats.sum, 2e6);
    EXPECT_LE(r.stats.stderr_ / r.stats.mean, 0.02);
  }
}

TEST(RunnerSetupTest, UnknownDeviceNamesWhatExists) {
  RunnerOptions o = small();
  o.device = "no-such-device-anywhere";
  try {
    Runner r(o);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("available: 0:"));
  }
}

TEST(RunnerSetupTest, ListsDevices) {
  const auto devices = list_devices();
  ASSERT_FALSE(devices.empty());
  EXPECT_FALSE(devices[0].device_name.empty());
  EXPECT_GT(devices[0].compute_units, 0u);
}

}  // namespace
}  // namespace oaprof::bench
