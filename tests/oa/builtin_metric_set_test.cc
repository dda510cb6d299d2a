#include "oa/builtin_metric_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "oa/metric_xml.h"
#include "oa/topology.h"
#include "tests/oa/igt_files.h"

namespace oaprof::oa {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kGen8To11Files[] = {"bdw",    "chv",    "sklgt2", "sklgt3", "sklgt4",
                                               "bxt",    "glk",    "kblgt2", "kblgt3", "cflgt2",
                                               "cflgt3", "icl",    "ehl"};

std::string normalized(const std::string& equation) {
  std::istringstream in(equation);
  std::string token, out;
  while (in >> token) out += (out.empty() ? "" : " ") + token;
  return out;
}

// The A counter an equation reads when it reads exactly one counter of any file, else -1.
int single_a_counter(const Equation& eq) {
  std::istringstream in(eq.text());
  std::vector<std::string> tokens;
  for (std::string t; in >> t;) tokens.push_back(t);
  int a = -1, reads = 0;
  for (std::size_t i = 2; i < tokens.size(); ++i) {
    if (tokens[i] != "READ") continue;
    ++reads;
    if (tokens[i - 2] == "A") a = std::stoi(tokens[i - 1]);
  }
  return reads == 1 ? a : -1;
}

// Evidence from IGT's files: which A counters keep one meaning in every set of a platform. A
// counter read alone by counters of different names in different sets is reassigned by the set's
// programming (the FLEX registers, for A7–A20); one read under a single name everywhere is not.
TEST(BuiltinMetricSetTest, FixedCountersAreThoseWithOneMeaningInEveryIgtSet) {
  if (testing::igt_files().empty()) GTEST_SKIP() << "no IGT metric files";
  for (const std::string_view name : kGen8To11Files) {
    SCOPED_TRACE(std::string(name));
    const auto path = testing::igt_dir() / ("oa-" + std::string(name) + ".xml");
    const MetricFile file = import_metrics_xml(testing::read_text(path), path.string());
    const Platform platform = platform_by_name(name).value();
    std::map<int, std::set<std::string>> meanings;  // A index -> counter symbols
    std::map<std::string, std::set<std::string>> equations;  // symbol -> equations
    for (const MetricSet& set : file.sets) {
      for (const MetricCounter& c : set.counters()) {
        const int a = single_a_counter(c.equation);
        if (a >= 0) meanings[a].insert(c.symbol);
        equations[c.symbol].insert(normalized(c.equation.text()));
      }
    }
    const MetricSet builtin = builtin_metric_set(platform);
    for (const MetricCounter& c : builtin.counters()) {
      const int a = single_a_counter(c.equation);
      const bool claimed_fixed = std::find(c.attributes.begin(), c.attributes.end(),
                                           std::pair<std::string, std::string>(
                                               std::string(kFixedAttribute), "true")) !=
                                 c.attributes.end();
      if (a >= 0) {
        ASSERT_TRUE(meanings.count(a)) << "A" << a << " is never read alone in " << name;
        const bool evidence_fixed = meanings[a].size() == 1;
        EXPECT_EQ(a_counter_is_fixed(platform, a), evidence_fixed)
            << c.symbol << " reads A" << a << ", read alone in IGT as "
            << ::testing::PrintToString(meanings[a]);
        EXPECT_EQ(claimed_fixed, evidence_fixed) << c.symbol;
      } else {
        EXPECT_TRUE(claimed_fixed) << c.symbol;
      }
      // The built-in equation is IGT's: a fixed counter's equation is identical in every set
      // that has it; the others match the meaning most sets (ComputeBasic) give them.
      ASSERT_TRUE(equations.count(c.symbol)) << c.symbol << " is in no IGT set of " << name;
      if (claimed_fixed) {
        EXPECT_EQ(equations[c.symbol].size(), 1u) << c.symbol;
      }
      const MetricSet* compute_basic = file.find("ComputeBasic");
      ASSERT_NE(compute_basic, nullptr);
      const auto idx = compute_basic->counter_index(c.symbol);
      if (idx) {
        EXPECT_EQ(normalized(compute_basic->counters()[static_cast<std::size_t>(*idx)]
                                 .equation.text()),
                  normalized(c.equation.text()))
            << c.symbol;
      }
    }
  }
}

TEST(BuiltinMetricSetTest, NeedsNoProgrammingAndComputesTheListedCounters) {
  const Platform kbl = *platform_by_name("kblgt2");
  const MetricSet set = builtin_metric_set(kbl);
  EXPECT_FALSE(set.needs_programming());
  EXPECT_EQ(set.symbol(), kBuiltinMetricSetSymbol);
  for (const char* symbol :
       {"GpuTime", "GpuCoreClocks", "AvgGpuCoreFrequency", "GpuBusy", "EuActive", "EuStall",
        "EuFpuBothActive", "Fpu0Active", "Fpu1Active", "EuSendActive", "CsThreads",
        "SlmBytesRead", "SlmBytesWritten", "ShaderMemoryAccesses", "ShaderAtomics",
        "ShaderBarriers"}) {
    EXPECT_TRUE(set.counter_index(symbol).has_value()) << symbol;
  }
  CounterDeltas d;
  d.timestamp = 120'000;  // 10 ms
  d.gpu_ticks = 11'500'000;
  d.a[0] = 11'500'000;
  d.a[9] = 24 * 2'875'000;  // 25 %
  d.a[31] = 3;
  d.a[35] = 7;
  const auto v = set.evaluate(d, device_variables(kbl));
  auto at = [&](const char* s) { return v[static_cast<std::size_t>(*set.counter_index(s))]; };
  EXPECT_EQ(at("GpuTime").u, 10'000'000u);
  EXPECT_EQ(at("AvgGpuCoreFrequency").u, 1'150'000'000u);
  EXPECT_DOUBLE_EQ(at("GpuBusy").as_double(), 100.0);
  EXPECT_DOUBLE_EQ(at("EuFpuBothActive").as_double(), 25.0);
  EXPECT_EQ(at("SlmBytesWritten").u, 192u);
  EXPECT_EQ(at("ShaderBarriers").u, 7u);
}

TEST(BuiltinMetricSetTest, RefusedWhereTheACountersDiffer) {
  for (const char* name : {"hsw", "tglgt2"}) {
    try {
      builtin_metric_set(*platform_by_name(name));
      FAIL() << name;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("--metrics-xml"));
    }
  }
  // Every Gen8–Gen11 part of the PCI table has one, GT1 parts without an IGT file included.
  for (const PciId& id : known_pci_ids()) {
    if (!has_builtin_metric_set(*id.platform)) continue;
    EXPECT_NO_THROW(builtin_metric_set(*id.platform)) << std::hex << id.device;
  }
}

}  // namespace
}  // namespace oaprof::oa
