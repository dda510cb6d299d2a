// choose_metric_sets on IGT's Tiger Lake GT2 file (../shared/metrics/igt/oa-tglgt2.xml, test
// data beside the checkout) and on small sets built here, where the shape of the sets is what is
// tested (a greedy trap, a cover beyond the exact search).
#include "oa/metric_cover.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "oa/metric_xml.h"
#include "tests/oa/igt_files.h"

namespace oaprof::oa {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

std::vector<std::string> symbols_of(const std::vector<const MetricSet*>& sets) {
  std::vector<std::string> symbols;
  for (const MetricSet* set : sets) symbols.push_back(set->symbol());
  return symbols;
}

// The sets of `sets` that have counter `name`, by symbol: the preconditions below check the file
// really has the shape a test relies on, so that no test passes because the data changed.
std::vector<std::string> sets_with(std::span<const MetricSet> sets, const std::string& name) {
  std::vector<std::string> symbols;
  for (const MetricSet& set : sets) {
    if (set.counter_index(name)) symbols.push_back(set.symbol());
  }
  return symbols;
}

std::string message_of(std::span<const MetricSet> sets, const std::vector<std::string>& names) {
  try {
    choose_metric_sets(sets, names);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no exception)";
}

class MetricCoverTglTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto path = testing::igt_file_for("tglgt2");
    if (path.empty()) GTEST_SKIP() << "no oa-tglgt2.xml in " << testing::igt_dir();
    file_ = import_metrics_xml(testing::read_text(path), path.filename().string());
  }
  std::span<const MetricSet> sets() const { return file_.sets; }

  MetricFile file_;
};

TEST_F(MetricCoverTglTest, NameOnlyOneSetHasPicksThatSet) {
  // L3_1 is the sixth set of the file: returning the first set, or the first few, fails.
  ASSERT_THAT(sets_with(sets(), "L30Bank0InputAvailable"), ElementsAre("L3_1"));

  const std::vector<std::string> names{"L30Bank0InputAvailable"};
  const MetricCover cover = choose_metric_sets(sets(), names);

  EXPECT_THAT(symbols_of(cover.sets), ElementsAre("L3_1"));
  EXPECT_THAT(cover.given_by, ElementsAre(Pair("L30Bank0InputAvailable", "L3_1")));
}

TEST_F(MetricCoverTglTest, NamesNoSingleSetHasTakeTwoSets) {
  ASSERT_THAT(sets_with(sets(), "L30Bank0InputAvailable"), ElementsAre("L3_1"));
  ASSERT_THAT(sets_with(sets(), "Sampler00InputAvailable"), ElementsAre("Sampler_1"));
  ASSERT_THAT(sets_with(sets(), "EuActive"), ::testing::Contains("L3_1"));
  ASSERT_THAT(sets_with(sets(), "EuActive"), ::testing::Contains("Sampler_1"));

  // Requested in the order opposite to the file's, so that the sets' order is the file's, not
  // the request's; EuActive is in both chosen sets and goes to the earlier, L3_1.
  const std::vector<std::string> names{"Sampler00InputAvailable", "EuActive",
                                       "L30Bank0InputAvailable"};
  const MetricCover cover = choose_metric_sets(sets(), names);

  EXPECT_THAT(symbols_of(cover.sets), ElementsAre("L3_1", "Sampler_1"));
  EXPECT_THAT(cover.given_by,
              ElementsAre(Pair("Sampler00InputAvailable", "Sampler_1"), Pair("EuActive", "L3_1"),
                          Pair("L30Bank0InputAvailable", "L3_1")));
}

TEST_F(MetricCoverTglTest, ComputeBasicNamesTakeOneSetTheEarliestThatHasThemAll) {
  // Every counter of ComputeBasic is in at least five sets, so the names alone point at none;
  // only RenderBasic (first in the file) and ComputeBasic have them all. A one-set answer exists,
  // the tie goes to RenderBasic, and without RenderBasic it must be ComputeBasic.
  const MetricSet* compute_basic = file_.find("ComputeBasic");
  ASSERT_NE(compute_basic, nullptr);
  std::vector<std::string> names;
  for (const MetricCounter& counter : compute_basic->counters()) names.push_back(counter.symbol);
  for (const std::string& name : names) EXPECT_GE(sets_with(sets(), name).size(), 5u) << name;
  std::vector<std::string> having_all;
  for (const MetricSet& set : sets()) {
    const bool has_all = std::all_of(names.begin(), names.end(),
                                     [&](const std::string& n) { return set.counter_index(n); });
    if (has_all) having_all.push_back(set.symbol());
  }
  ASSERT_THAT(having_all, ElementsAre("RenderBasic", "ComputeBasic"));
  ASSERT_EQ(file_.sets.front().symbol(), "RenderBasic");

  const MetricCover with_render = choose_metric_sets(sets(), names);
  EXPECT_THAT(symbols_of(with_render.sets), ElementsAre("RenderBasic"));

  const MetricCover without_render = choose_metric_sets(sets().subspan(1), names);
  EXPECT_THAT(symbols_of(without_render.sets), ElementsAre("ComputeBasic"));
  ASSERT_EQ(without_render.given_by.size(), names.size());
  for (const auto& [name, set] : without_render.given_by) EXPECT_EQ(set, "ComputeBasic") << name;
}

TEST_F(MetricCoverTglTest, UnknownNamesAreAllListedWithTheirClosestSymbols) {
  // "euactive" is a real symbol in the wrong case: matched exactly, so unknown, but its closest
  // symbol (ignoring case) is EuActive. GpuTime is known and must not be listed.
  const std::string message =
      message_of(sets(), {"GpuTime", "EuActiv", "euactive", "L3ShaderThroughputt"});

  EXPECT_THAT(message, HasSubstr("no metric set has EuActiv (closest: EuActive"));
  EXPECT_THAT(message, HasSubstr("no metric set has euactive (closest: EuActive"));
  EXPECT_THAT(message, HasSubstr("no metric set has L3ShaderThroughputt (closest: "
                                 "L3ShaderThroughput"));
  EXPECT_THAT(message, ::testing::Not(HasSubstr("has GpuTime")));
}

TEST_F(MetricCoverTglTest, EmptyListOrEmptyNameThrowsAndDuplicatesCountOnce) {
  EXPECT_THROW(choose_metric_sets(sets(), std::vector<std::string>{}), std::invalid_argument);
  EXPECT_THAT(message_of(sets(), {"EuActive", ""}), HasSubstr("empty counter name"));

  const std::vector<std::string> names{"L30Bank0InputAvailable", "EuActive",
                                       "L30Bank0InputAvailable"};
  const MetricCover cover = choose_metric_sets(sets(), names);
  EXPECT_THAT(cover.given_by,
              ElementsAre(Pair("L30Bank0InputAvailable", "L3_1"), Pair("EuActive", "L3_1")));
}

// A set whose counters are the given symbols, each a constant: only the symbols matter here.
MetricSet set_of(const std::string& symbol, const std::vector<std::string>& counter_symbols) {
  std::vector<MetricCounter> counters;
  for (const std::string& s : counter_symbols) {
    MetricCounter c;
    c.symbol = s;
    c.name = s;
    c.equation = Equation::compile("1");
    counters.push_back(std::move(c));
  }
  return MetricSet(symbol, symbol, "guid-" + symbol, std::move(counters), {});
}

TEST(MetricCoverTest, FindsTwoSetsWhereGreedyTakesThree) {
  // Greedy takes Wide first (4 names against 3), then still lacks c and f, which only Left and
  // Right have, one each: 3 sets. Left and Right alone give all six.
  const std::vector<MetricSet> sets{set_of("Wide", {"a", "b", "d", "e"}),
                                    set_of("Left", {"a", "b", "c"}),
                                    set_of("Right", {"d", "e", "f"})};
  const std::vector<std::string> names{"a", "b", "c", "d", "e", "f"};

  const MetricCover cover = choose_metric_sets(sets, names);

  EXPECT_THAT(symbols_of(cover.sets), ElementsAre("Left", "Right"));
  EXPECT_THAT(cover.given_by,
              ElementsAre(Pair("a", "Left"), Pair("b", "Left"), Pair("c", "Left"),
                          Pair("d", "Right"), Pair("e", "Right"), Pair("f", "Right")));
}

TEST(MetricCoverTest, CoversBeyondTheExactSearchStillGiveEveryNameInInputOrder) {
  // Five names only five different sets have: no cover of kMaxExactCoverSize (4) sets exists, so
  // the greedy pass runs; it picks Pair first (two names), yet the sets come in input order.
  ASSERT_EQ(kMaxExactCoverSize, 4);
  const std::vector<MetricSet> sets{set_of("A", {"a"}), set_of("Unused", {"z"}),
                                    set_of("B", {"b"}), set_of("C", {"c"}),
                                    set_of("D", {"d"}), set_of("Pair", {"e", "f"})};
  const std::vector<std::string> names{"f", "a", "b", "c", "d", "e"};

  const MetricCover cover = choose_metric_sets(sets, names);

  EXPECT_THAT(symbols_of(cover.sets), ElementsAre("A", "B", "C", "D", "Pair"));
  EXPECT_THAT(cover.given_by, ElementsAre(Pair("f", "Pair"), Pair("a", "A"), Pair("b", "B"),
                                          Pair("c", "C"), Pair("d", "D"), Pair("e", "Pair")));
}

TEST(MetricCoverTest, NoSetsAtAllMakesEveryNameUnknown) {
  EXPECT_THAT(message_of({}, {"EuActive"}), HasSubstr("no metric set has EuActive"));
}

}  // namespace
}  // namespace oaprof::oa
