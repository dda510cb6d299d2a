// Which rows a failed selftest check flags: each kind of cover flags the rows that report it and
// no others (run/selftest_result.cc decides which check covers what).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/reporter.h"
#include "report/selftest_flags.h"

#include "model/energy_model.h"

namespace oaprof::report {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> flags(const oa::LaunchRecord& r, const power::EnergyWindow& w,
                               const RunInfo& info) {
  std::vector<std::string> out;
  add_selftest_flags(r, w, info, [&](const std::string& f) { out.push_back(f); });
  return out;
}

TEST(SelftestFlagsTest, EachCoverFlagsTheRowsThatReportIt) {
  RunInfo info;
  info.access = "perf";
  info.selftest_failed = {{"clocks", SelftestCovers::kEveryRow},
                          {"gpu-ticks", SelftestCovers::kGpuTicks},
                          {"energy", SelftestCovers::kEnergy},
                          {"restore", SelftestCovers::kNoRow},
                          {"forcewake", SelftestCovers::kRegisterReadouts},
                          {"topology", SelftestCovers::kMetrics},
                          {"energy-model", SelftestCovers::kEnergyModel}};
  oa::LaunchRecord bare;
  power::EnergyWindow no_energy;
  no_energy.unavailable_reason = "no backend";
  EXPECT_THAT(flags(bare, no_energy, info), ElementsAre("selftest_failed:clocks"));

  oa::LaunchRecord ticks;
  ticks.deltas.has_gpu_ticks = true;
  const power::EnergyWindow measured;
  const oa::MetricSet set;
  info.metrics = &set;
  info.access = "mmio";
  EXPECT_THAT(
      flags(ticks, measured, info),
      ElementsAre("selftest_failed:clocks", "selftest_failed:gpu-ticks", "selftest_failed:energy",
                  "selftest_failed:forcewake", "selftest_failed:topology"));
  // A run with an energy model: its rows' modelled energy.
  info.metrics = nullptr;
  info.access = "perf";
  info.energy_model = std::make_shared<const model::EnergyModel>();
  EXPECT_THAT(flags(bare, no_energy, info),
              ElementsAre("selftest_failed:clocks", "selftest_failed:energy-model"));
}

TEST(SelftestFlagsTest, NoFailuresNoFlags) {
  EXPECT_THAT(flags(oa::LaunchRecord{}, power::EnergyWindow{}, RunInfo{}), IsEmpty());
}

}  // namespace
}  // namespace oaprof::report
