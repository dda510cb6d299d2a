// Sampled attribution (issue 17) against bracketed snapshots on the simulated GPU: the same
// kernels, read periodically by the mmio read-out into a CounterTimeline and also snapshotted
// around each kernel, give the same counters within the bound each sampled window carries, and
// within 1 % once a kernel spans 50 read periods (the worst case, a GPU idle around the kernel,
// is a quarter period at each edge).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "gpu/counter_source.h"
#include "gpu/device.h"
#include "mmio/sim_gpu.h"
#include "oa/accumulator.h"
#include "oa/report.h"
#include "oa/sampled_attribution.h"

namespace oaprof::gpu {
namespace {

constexpr oa::ReportFormat kSampledFormat = oa::ReportFormat::kA32u40_A4u32_B8_C8;
constexpr std::uint64_t kPeriodNs = 100'000;

struct Kernel {
  std::uint64_t start_ns, end_ns;
  oa::CounterDeltas bracketed;
  oa::Window window() const { return {start_ns, end_ns}; }
};

class SampledAgainstBracketedTest : public ::testing::Test {
 protected:
  SampledAgainstBracketedTest() {
    auto c = std::make_unique<mmio::ManualClock>();
    clock_ = c.get();
    device_ = make_sim_device(std::move(c), {});
    source_ = make_counter_source("mmio", device_);
    source_->start(kSampledFormat);
  }
  oa::Report snapshot() { return oa::decode(kSampledFormat, source_->snapshot(0).bytes); }
  // Moves the clock to `ns`, taking every periodic read on the way.
  void run_to(std::uint64_t ns) {
    while (next_read_ <= ns) {
      clock_->advance_ns(next_read_ - clock_->now_ns());
      accumulator_.add(snapshot());
      timeline_.add(next_read_, accumulator_.total(), accumulator_.untrusted_intervals());
      next_read_ += kPeriodNs;
    }
    clock_->advance_ns(ns - clock_->now_ns());
  }
  // A kernel from `start_ns` to `end_ns`, snapshotted at both ends as bracketed mode does.
  Kernel run_kernel(std::uint64_t start_ns, std::uint64_t end_ns) {
    run_to(start_ns);
    source_->kernel_running(true);
    const oa::Report before = snapshot();
    run_to(end_ns);
    source_->kernel_running(false);
    return {start_ns, end_ns, oa::compute_deltas(before, snapshot())};
  }

  mmio::ManualClock* clock_ = nullptr;
  Device device_;
  std::unique_ptr<CounterSource> source_;
  oa::Accumulator accumulator_{12e6, 1e9};
  oa::CounterTimeline timeline_;
  std::uint64_t next_read_ = 0;
};

double relative(std::uint64_t sampled, std::uint64_t bracketed) {
  return std::abs(static_cast<double>(sampled) - static_cast<double>(bracketed)) /
         static_cast<double>(bracketed);
}

TEST_F(SampledAgainstBracketedTest, KernelsOfFiftyPeriodsAgreeWithinOnePercent) {
  // Kernels of 5 to 200 periods, starting and ending at various points inside a period, with the
  // GPU idle between them: the hardest case for interpolation.
  std::vector<Kernel> kernels;
  std::uint64_t at = 1'000'000;
  for (const std::uint64_t periods : {5u, 20u, 50u, 200u}) {
    for (const std::uint64_t into : {13'000u, 50'000u, 87'000u}) {
      const std::uint64_t start = at + into;
      kernels.push_back(run_kernel(start, start + periods * kPeriodNs + 31'000));
      at = (kernels.back().end_ns / kPeriodNs + 3) * kPeriodNs;
    }
  }
  run_to(at + kPeriodNs);
  for (const Kernel& k : kernels) {
    SCOPED_TRACE(::testing::Message()
                 << "kernel of " << (k.end_ns - k.start_ns) << " ns from " << k.start_ns);
    const auto s = timeline_.attribute(k.window());
    ASSERT_TRUE(s.has_value());
    // The clocks that run whether or not a kernel does: exact up to rounding.
    EXPECT_LE(relative(s->deltas.gpu_ticks, k.bracketed.gpu_ticks), 1e-5);
    EXPECT_LE(relative(s->deltas.timestamp, k.bracketed.timestamp), 2.0 / 12'000);
    // Busy and EU active grow only while the kernel runs: within a quarter of the bound.
    for (const int counter : {0, 7}) {
      const double err = relative(s->deltas.a[counter], k.bracketed.a[counter]);
      EXPECT_LE(err, s->error_bound / 4 + 1e-4) << "A" << counter;
      if (k.end_ns - k.start_ns >= 50 * kPeriodNs) {
        EXPECT_LE(err, 0.01) << "A" << counter;
      }
    }
  }
}

// Back to back, as a busy queue runs them: the GPU is busy on both sides of each edge, so the
// interpolation is as good as the counters' own rounding, whatever the kernels' lengths.
TEST_F(SampledAgainstBracketedTest, BackToBackKernelsAgreeWhateverTheirLength) {
  std::vector<Kernel> kernels;
  std::uint64_t at = 1'000'000 + 41'000;
  // The first and the last are longer than a period, so that no edge between two kernels
  // shares its period with idle time.
  for (const std::uint64_t ns : {250'000u, 30'000u, 170'000u, 1'234'000u, 65'000u, 250'000u}) {
    kernels.push_back(run_kernel(at, at + ns));
    at += ns;
  }
  run_to(at + kPeriodNs);
  for (std::size_t i = 1; i + 1 < kernels.size(); ++i) {
    const auto s = timeline_.attribute(kernels[i].window());
    ASSERT_TRUE(s.has_value());
    EXPECT_LE(relative(s->deltas.a[0], kernels[i].bracketed.a[0]), 1e-4) << i;
  }
}

}  // namespace
}  // namespace oaprof::gpu
