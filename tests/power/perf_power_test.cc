#include "power/perf_power.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tests/power/fake_tree.h"

namespace oaprof::power {
namespace {
using ::testing::HasSubstr;

// Writes a power PMU as the kernel's RAPL perf driver lays it out.
void write_pmu(const test_support::FakeTree& tree, const std::string& cpumask,
               const std::vector<std::pair<std::string, std::string>>& events) {
  tree.write("power/type", "23");
  tree.write("power/cpumask", cpumask);
  for (const auto& [name, code] : events) {
    tree.write("power/events/" + name, code);
    tree.write("power/events/" + name + ".scale", "2.3283064365386962890625e-10");
    tree.write("power/events/" + name + ".unit", "Joules");
  }
}

// Stands in for perf_event_open: remembers what was opened and returns set counts.
class FakeSyscalls final : public PerfEventSyscalls {
 public:
  struct Opened {
    std::uint32_t type;
    std::uint64_t config;
    int cpu;
  };
  std::vector<Opened>* opened;
  std::set<int>* closed;
  std::map<std::pair<std::uint64_t, int>, std::uint64_t>* counts;  // (config, cpu) → count
  int fail_at = -1;

  int open(std::uint32_t type, std::uint64_t config, int cpu) override {
    if (static_cast<int>(opened->size()) == fail_at) {
      throw std::runtime_error("perf_event_open failed: Permission denied");
    }
    opened->push_back({type, config, cpu});
    return static_cast<int>(opened->size()) + 100;
  }
  std::uint64_t read(int fd) override {
    const Opened& o = opened->at(static_cast<std::size_t>(fd - 101));
    return (*counts)[{o.config, o.cpu}];
  }
  void close(int fd) override { closed->insert(fd); }
};

// The fake's bookkeeping outlives the source that owns the fake.
struct SyscallLog {
  std::vector<FakeSyscalls::Opened> opened;
  std::set<int> closed;
  std::map<std::pair<std::uint64_t, int>, std::uint64_t> counts;

  std::unique_ptr<FakeSyscalls> make(int fail_at = -1) {
    auto sys = std::make_unique<FakeSyscalls>();
    sys->opened = &opened;
    sys->closed = &closed;
    sys->counts = &counts;
    sys->fail_at = fail_at;
    return sys;
  }
};

TEST(PerfPowerTest, CpuListsParse) {
  EXPECT_THAT(parse_cpu_list("0"), ::testing::ElementsAre(0));
  EXPECT_THAT(parse_cpu_list("0,18\n"), ::testing::ElementsAre(0, 18));
  EXPECT_THAT(parse_cpu_list("0-2,8"), ::testing::ElementsAre(0, 1, 2, 8));
  EXPECT_THROW(parse_cpu_list(""), std::runtime_error);
  EXPECT_THROW(parse_cpu_list("3-1"), std::runtime_error);
  EXPECT_THROW(parse_cpu_list("a"), std::runtime_error);
}

TEST(PerfPowerTest, ReadsTypeEventsScaleAndUnit) {
  test_support::FakeTree tree;
  write_pmu(tree, "0", {{"energy-pkg", "event=0x02"}, {"energy-gpu", "event=0x04"}});
  const PerfPowerPmu pmu = read_perf_power_pmu(tree.root() / "power");
  EXPECT_EQ(pmu.type, 23u);
  EXPECT_THAT(pmu.cpus, ::testing::ElementsAre(0));
  ASSERT_EQ(pmu.events.size(), 2u);
  EXPECT_EQ(pmu.events[0].domain, Domain::kPackage);
  EXPECT_EQ(pmu.events[0].config, 0x02u);
  EXPECT_EQ(pmu.events[1].domain, Domain::kUncore);
  EXPECT_DOUBLE_EQ(pmu.events[1].scale_j, 1.0 / 4294967296.0);
}

TEST(PerfPowerTest, MalformedFilesAreNamed) {
  test_support::FakeTree tree;
  write_pmu(tree, "0", {{"energy-pkg", "umask=0x02"}});
  EXPECT_THROW(
      {
        try {
          read_perf_power_pmu(tree.root() / "power");
        } catch (const std::runtime_error& e) {
          EXPECT_THAT(e.what(), HasSubstr("energy-pkg"));
          throw;
        }
      },
      std::runtime_error);
  write_pmu(tree, "0", {{"energy-pkg", "event=0x02"}});
  tree.write("power/events/energy-pkg.unit", "Watts");
  EXPECT_THROW(read_perf_power_pmu(tree.root() / "power"), std::runtime_error);
  tree.write("power/events/energy-pkg.unit", "Joules");
  tree.write("power/events/energy-pkg.scale", "-1");
  EXPECT_THROW(read_perf_power_pmu(tree.root() / "power"), std::runtime_error);
}

TEST(PerfPowerTest, AbsentPmuSaysWhy) {
  test_support::FakeTree tree;
  try {
    read_perf_power_pmu(tree.root() / "power");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("virtual machine"));
  }
}

TEST(PerfPowerTest, OpensEachEventOnOneCpuOfEachPackageAndScales) {
  test_support::FakeTree tree;
  write_pmu(tree, "0,18", {{"energy-pkg", "event=0x02"}, {"energy-ram", "event=0x03"}});
  SyscallLog calls;
  auto& opened = calls.opened;
  auto& counts = calls.counts;
  {
    PerfPowerSource src(tree.root() / "power", calls.make());
    ASSERT_EQ(opened.size(), 4u);
    EXPECT_EQ(opened[0].type, 23u);
    EXPECT_EQ(opened[3].cpu, 18);
    EXPECT_THAT(src.domains(), ::testing::ElementsAre(Domain::kPackage, Domain::kDram));
    counts[{0x02, 0}] = 4294967296ull * 3;   // 3 J on package 0
    counts[{0x02, 18}] = 4294967296ull / 2;  // 0.5 J on package 1
    counts[{0x03, 18}] = 4294967296ull / 4;
    const EnergyReading r = src.read();
    EXPECT_EQ(r.energy_uj.at(Domain::kPackage), 3'500'000u);
    EXPECT_EQ(r.energy_uj.at(Domain::kDram), 250'000u);
  }
  EXPECT_EQ(calls.closed.size(), 4u);
}

TEST(PerfPowerTest, AFailedOpenClosesWhatWasOpened) {
  test_support::FakeTree tree;
  write_pmu(tree, "0", {{"energy-pkg", "event=0x02"}, {"energy-cores", "event=0x01"}});
  SyscallLog calls;
  EXPECT_THROW(PerfPowerSource(tree.root() / "power", calls.make(1)), std::runtime_error);
  EXPECT_EQ(calls.closed, std::set<int>{101});
}

}  // namespace
}  // namespace oaprof::power
