#include "oa/builtin_metric_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "oa/metric_xml.h"
#include "oa/topology.h"
#include "tests/oa/igt_files.h"

namespace oaprof::oa {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kGen8To11Files[] = {"bdw",    "chv", "sklgt2", "sklgt3", "sklgt4",
                                               "bxt",    "glk", "kblgt2", "kblgt3", "cflgt2",
                                               "cflgt3", "icl", "ehl"};

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
    std::map<int, std::set<std::string>> meanings;           // A index -> counter symbols
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
      const bool claimed_fixed =
          std::find(c.attributes.begin(), c.attributes.end(),
                    std::pair<std::string, std::string>(std::string(kFixedAttribute), "true")) !=
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
        EXPECT_EQ(
            normalized(compute_basic->counters()[static_cast<std::size_t>(*idx)].equation.text()),
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
        "EuFpuBothActive", "Fpu0Active", "Fpu1Active", "EuSendActive", "CsThreads", "SlmBytesRead",
        "SlmBytesWritten", "ShaderMemoryAccesses", "ShaderAtomics", "ShaderBarriers"}) {
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

// The A counters an equation reads when every READ of it is an A counter (Gen12 sums four per
// EU figure), else empty.
std::set<int> a_group(const Equation& eq) {
  std::istringstream in(eq.text());
  std::vector<std::string> tokens;
  for (std::string t; in >> t;) tokens.push_back(t);
  std::set<int> out;
  for (std::size_t i = 2; i < tokens.size(); ++i) {
    if (tokens[i] != "READ") continue;
    if (tokens[i - 2] != "A") return {};
    out.insert(std::stoi(tokens[i - 1]));
  }
  return out;
}

// Gen12 and Xe-LPG: the same evidence, with an A counter's meaning taken from every counter that
// reads only A counters (Gen12's EuActive reads A7-A10). Xe-LPG's media sets are left out: they
// are reports of the media unit (OAM, oa_format="128B_MPEC8_NOA16"), whose A0-A7 are MPEC
// counters, not OAG's.
TEST(BuiltinMetricSetTest, Gen12AndXeLpgFixedCountersAreThoseWithOneMeaningInEverySet) {
  for (const std::string_view name :
       {"tglgt1", "tglgt2", "rkl", "adl", "dg1", "mtlgt2", "mtlgt3"}) {
    SCOPED_TRACE(std::string(name));
    const auto path = testing::igt_file_for(name);
    if (path.empty()) GTEST_SKIP() << "no IGT metric file for " << name;
    const MetricFile file = import_metrics_xml(testing::read_text(path), path.string());
    const Platform platform = platform_by_name(name).value();
    std::map<int, std::set<std::string>> meanings;
    std::map<std::string, std::set<std::string>> equations;
    int sets = 0;
    for (const MetricSet& set : file.sets) {
      const auto format =
          std::find(set.attributes().begin(), set.attributes().end(),
                    std::pair<std::string, std::string>("oa_format", "128B_MPEC8_NOA16"));
      if (format != set.attributes().end()) continue;
      ++sets;
      for (const MetricCounter& c : set.counters()) {
        for (const int a : a_group(c.equation)) meanings[a].insert(c.symbol);
        equations[c.symbol].insert(normalized(c.equation.text()));
      }
    }
    EXPECT_GT(sets, 20);
    // The evidence decides every A counter any set reads alone or in a group.
    for (const auto& [a, symbols] : meanings) {
      EXPECT_EQ(a_counter_is_fixed(platform, a), symbols.size() == 1)
          << "A" << a << " is read as " << ::testing::PrintToString(symbols);
    }
    const MetricSet builtin = builtin_metric_set(platform);
    const MetricSet* compute_basic = file.find("ComputeBasic");
    ASSERT_NE(compute_basic, nullptr);
    for (const MetricCounter& c : builtin.counters()) {
      SCOPED_TRACE(c.symbol);
      bool evidence_fixed = true;
      for (const int a : a_group(c.equation))
        evidence_fixed = evidence_fixed && meanings[a].size() == 1;
      const bool claimed_fixed =
          std::find(c.attributes.begin(), c.attributes.end(),
                    std::pair<std::string, std::string>(std::string(kFixedAttribute), "true")) !=
          c.attributes.end();
      EXPECT_EQ(claimed_fixed, evidence_fixed);
      if (claimed_fixed) {
        EXPECT_EQ(equations[c.symbol].size(), 1u);
      }
      const auto idx = compute_basic->counter_index(c.symbol);
      ASSERT_TRUE(idx.has_value()) << c.symbol << " is not in ComputeBasic";
      const MetricCounter& igt = compute_basic->counters()[static_cast<std::size_t>(*idx)];
      EXPECT_EQ(normalized(igt.equation.text()), normalized(c.equation.text()));
      EXPECT_EQ(igt.data_type, c.data_type);
      EXPECT_EQ(igt.units, c.units);
    }
  }
}

TEST(BuiltinMetricSetTest, Gen12SumsFourEuCountersAndXeLpgReadsGtiTraffic) {
  const Platform tgl = *platform_by_name("tglgt2");
  const MetricSet gen12 = builtin_metric_set(tgl);
  EXPECT_FALSE(gen12.needs_programming());
  CounterDeltas d;
  d.timestamp = 192'000;  // 10 ms at 19.2 MHz
  d.gpu_ticks = 13'500'000;
  d.a[0] = 13'500'000;
  for (int i = 7; i <= 10; ++i) d.a[i] = 96 * 13'500'000 / 8;  // 4 × 1/8: 50 % EU active
  d.a[30] = 5;
  auto at = [](const MetricSet& set, const std::vector<EquationValue>& v, const char* s) {
    return v[static_cast<std::size_t>(*set.counter_index(s))];
  };
  const auto v = gen12.evaluate(d, device_variables(tgl));
  EXPECT_DOUBLE_EQ(at(gen12, v, "EuActive").as_double(), 50.0);
  EXPECT_EQ(at(gen12, v, "GpuTime").u, 10'000'000u);
  EXPECT_EQ(at(gen12, v, "SlmBytesRead").u, 320u);
  EXPECT_FALSE(gen12.counter_index("Fpu0Active").has_value());  // EuActivity sets only

  const Platform mtl = *platform_by_name("mtlgt3");
  const MetricSet xe = builtin_metric_set(mtl);
  CounterDeltas m;
  m.gpu_ticks = 1'000'000;
  // 8 × A15 / threads / XVEs / clocks: one thread of 8 busy on every XVE reads 12.5 %.
  m.a[15] = 128 * 1'000'000 / 8;
  m.a[36] = 10;
  m.a[37] = 3;
  const auto w = xe.evaluate(m, device_variables(mtl));
  EXPECT_DOUBLE_EQ(at(xe, w, "XveThreadOccupancy").as_double(), 12.5);
  EXPECT_EQ(at(xe, w, "GtiReadThroughput").u, 320u);
  EXPECT_EQ(at(xe, w, "GtiWriteThroughput").u, 96u);
}

TEST(BuiltinMetricSetTest, RefusedWhereTheACountersDiffer) {
  for (const char* name : {"hsw"}) {
    try {
      builtin_metric_set(*platform_by_name(name));
      FAIL() << name;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("--metrics-xml"));
    }
  }
  // Every Gen8–Xe-LPG part of the PCI table has one, GT1 parts without an IGT file included.
  for (const PciId& id : known_pci_ids()) {
    if (!has_builtin_metric_set(*id.platform)) continue;
    EXPECT_NO_THROW(builtin_metric_set(*id.platform)) << std::hex << id.device;
  }
}

}  // namespace
}  // namespace oaprof::oa
