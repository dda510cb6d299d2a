#include "bench/peaks.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace oaprof::bench {
namespace {

namespace fs = std::filesystem;

oa::Platform platform_for_pci_id_or_die(std::uint16_t id) {
  const auto p = oa::platform_for_pci_id(id);
  if (!p) throw std::logic_error("PCI id missing from the platform table");
  return *p;
}

TEST(PeaksTest, KabyLakeGt2ByHand) {
  // 24 EUs × 2 FPUs × 4 lanes × 1.15 GHz = 220.8 GFLOP/s; mad twice that; dp a quarter;
  // L3 64 B × 3 subslices × 1.15 GHz = 220.8 GB/s; 24 × 7 = 168 threads.
  const Peaks p = compute_peaks({24, 3, 1150});
  EXPECT_NEAR(p.add_sp_flops, 220.8e9, 1e3);
  EXPECT_NEAR(p.mad_sp_flops, 441.6e9, 1e3);
  EXPECT_NEAR(p.add_dp_flops, 55.2e9, 1e3);
  EXPECT_NEAR(p.mad_dp_flops, 110.4e9, 1e3);
  EXPECT_NEAR(p.add_int_ops, 220.8e9, 1e3);
  EXPECT_NEAR(p.mad_int_ops, 441.6e9, 1e3);
  EXPECT_NEAR(p.l3_bytes_per_s, 220.8e9, 1e3);
  EXPECT_EQ(p.hw_threads, 168);
}

TEST(PeaksTest, GT3AndAFusedOffPartByHand) {
  // Skylake GT3: 48 EUs, 6 subslices, 1.1 GHz: 48 × 8 × 1.1 = 422.4 GFLOP/s add, L3 422.4 GB/s.
  const Peaks gt3 = compute_peaks({48, 6, 1100});
  EXPECT_NEAR(gt3.add_sp_flops, 422.4e9, 1e3);
  EXPECT_NEAR(gt3.mad_sp_flops, 844.8e9, 1e3);
  EXPECT_NEAR(gt3.l3_bytes_per_s, 422.4e9, 1e3);
  EXPECT_EQ(gt3.hw_threads, 336);
  // One EU fused off (23 of 24) at 1 GHz: 184 GFLOP/s add, 161 threads; L3 unchanged per subslice.
  const Peaks fused = compute_peaks({23, 3, 1000});
  EXPECT_NEAR(fused.add_sp_flops, 184e9, 1e3);
  EXPECT_NEAR(fused.add_dp_flops, 46e9, 1e3);
  EXPECT_NEAR(fused.l3_bytes_per_s, 192e9, 1e3);
  EXPECT_EQ(fused.hw_threads, 161);
}

TEST(PeaksTest, ThreadsPerEuAndFp64FollowThePlatform) {
  // Mesa intel_device_info.c: Broxton/Apollo Lake has 6 threads per EU (GFX9_LP_FEATURES), and
  // Gen11/Gen12 have no FP64 hardware (has_64bit_float = false).
  const auto apl = platform_for_pci_id_or_die(0x5A84);  // APL 3 x 6
  const Peaks p = compute_peaks(peak_inputs(apl));
  EXPECT_EQ(p.hw_threads, 18 * 6);
  EXPECT_TRUE(p.has_fp64);
  EXPECT_GT(p.add_dp_flops, 0);
  const Peaks icl = compute_peaks(peak_inputs(platform_for_pci_id_or_die(0x8A52)));
  EXPECT_FALSE(icl.has_fp64);
  EXPECT_EQ(icl.add_dp_flops, 0);
  EXPECT_EQ(icl.mad_dp_flops, 0);
  EXPECT_GT(icl.add_sp_flops, 0);
  EXPECT_EQ(icl.hw_threads, 64 * 7);
  EXPECT_FALSE(compute_peaks(peak_inputs(platform_for_pci_id_or_die(0x9A49))).has_fp64);  // TGL
}

TEST(PeaksTest, RejectsMissingInputs) {
  EXPECT_THROW(compute_peaks({0, 3, 1150}), std::invalid_argument);
  EXPECT_THROW(compute_peaks({24, 0, 1150}), std::invalid_argument);
  EXPECT_THROW(compute_peaks({24, 3, 0}), std::invalid_argument);
}

TEST(PeaksTest, FillsHardwareThreads) {
  // 168 threads (KBL GT2): 32 work-items are one SIMD32 thread, so 168 and 336 groups fill it.
  EXPECT_TRUE(fills_hw_threads(168, 32, 168));
  EXPECT_TRUE(fills_hw_threads(336, 32, 168));
  EXPECT_FALSE(fills_hw_threads(167, 32, 168));
  EXPECT_FALSE(fills_hw_threads(169, 32, 168));
  EXPECT_TRUE(fills_hw_threads(84, 64, 168));  // two threads a group
  EXPECT_TRUE(fills_hw_threads(84, 33, 168));  // 33 work-items still take two threads
  EXPECT_FALSE(fills_hw_threads(168, 32, 0));  // unknown thread count: never marked
}

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("oaprof_peaks_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void device(const std::string& bdf, const char* vendor, const char* klass, const char* id) {
    const fs::path d = root_ / "bus/pci/devices" / bdf;
    fs::create_directories(d);
    std::ofstream(d / "vendor") << vendor << "\n";
    std::ofstream(d / "class") << klass << "\n";
    std::ofstream(d / "device") << id << "\n";
  }
  fs::path root_;
};

TEST_F(FakeSysfs, FindsTheIntelGpuInThePlatformTable) {
  device("0000:00:01.0", "0x1af4", "0x030000", "0x1050");  // a virtio GPU: not Intel
  device("0000:00:1f.0", "0x8086", "0x060100", "0x5916");  // Intel, but not display class
  device("0000:00:02.0", "0x8086", "0x030000", "0x5916");  // KBL GT2
  const auto p = detect_intel_platform(root_);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->metrics_file, "kblgt2");
  const PeakInputs in = peak_inputs(*p);
  EXPECT_EQ(in.eus, 24);
  EXPECT_EQ(in.subslices, 3);
  EXPECT_GT(in.freq_mhz, 0);
}

TEST_F(FakeSysfs, NothingWhenNoKnownIntelGpu) {
  EXPECT_FALSE(detect_intel_platform(root_));              // no directory at all
  device("0000:00:02.0", "0x8086", "0x030000", "0xffff");  // Intel display, unknown id
  EXPECT_FALSE(detect_intel_platform(root_));
}

}  // namespace
}  // namespace oaprof::bench
