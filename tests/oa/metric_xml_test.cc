#include "oa/metric_xml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "oa/platform.h"
#include "oa/topology.h"
#include "tests/oa/igt_files.h"

namespace oaprof::oa {
namespace {

using ::testing::HasSubstr;
using testing::igt_files;
using testing::read_text;

class IgtFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (igt_files().empty()) GTEST_SKIP() << "no IGT metric files at " << testing::igt_dir();
  }
};

MetricFile import_igt(std::string_view name) {
  const auto path = testing::igt_dir() / ("oa-" + std::string(name) + ".xml");
  return import_metrics_xml(read_text(path), path.filename().string());
}

TEST_F(IgtFilesTest, EveryFileImportsAndEveryEquationEvaluates) {
  std::mt19937_64 rng(42);
  std::size_t sets = 0, counters = 0, registers = 0;
  for (const auto& path : igt_files()) {
    SCOPED_TRACE(path.filename().string());
    MetricFile file;
    ASSERT_NO_THROW(file = import_metrics_xml(read_text(path), path.filename().string()));
    EXPECT_FALSE(file.sets.empty());
    EXPECT_FALSE(file.chipset.empty());
    // Device variables of the matching platform where oaprof knows it, else KBL GT2's.
    const std::string stem = path.stem().string().substr(3);
    const Platform platform = platform_by_name(stem).value_or(simulated_platform());
    const DeviceVariables vars = device_variables(platform);
    for (const MetricSet& set : file.sets) {
      ++sets;
      EXPECT_EQ(set.evaluation_order().size(), set.counters().size()) << set.symbol();
      for (const auto kind : {RegisterConfig::Kind::kNoa, RegisterConfig::Kind::kBoolean,
                              RegisterConfig::Kind::kFlex}) {
        registers += set.register_count(kind);
        EXPECT_LE(set.writes(kind, vars).size(), set.register_count(kind));
      }
      // Synthetic deltas: random but plausible, including zero clocks once (division by zero).
      for (int round = 0; round < 3; ++round) {
        CounterDeltas d;
        d.timestamp = round == 0 ? 0 : rng() % 100'000'000;
        d.gpu_ticks = round == 0 ? 0 : 1 + rng() % 2'000'000'000;
        d.has_gpu_ticks = true;
        for (auto& a : d.a) a = rng() % 4'000'000'000;
        for (auto& b : d.b) b = rng() % 4'000'000'000;
        for (auto& c : d.c) c = rng() % 4'000'000'000;
        const auto values = set.evaluate(d, vars);
        ASSERT_EQ(values.size(), set.counters().size());
        for (std::size_t i = 0; i < values.size(); ++i) {
          EXPECT_FALSE(std::isnan(values[i].as_double()))
              << set.symbol() << "." << set.counters()[i].symbol;
        }
      }
      for (std::size_t i = 0; i < set.counters().size(); ++i) {
        ++counters;
        const MetricCounter& c = set.counters()[i];
        EXPECT_FALSE(c.attributes.empty());
        if (c.max_equation) c.max_equation->evaluate({CounterDeltas{}, vars});
        set.available(static_cast<int>(i), vars);
      }
    }
  }
  // Every set and counter in the data (403 sets, 12 544 counters counted with grep).
  EXPECT_EQ(sets, 404u);
  EXPECT_EQ(counters, 12544u);
  EXPECT_EQ(registers, 35658u);
}

TEST_F(IgtFilesTest, KblGt2ComputeBasicSpotChecks) {
  const auto file = import_igt("kblgt2");
  EXPECT_EQ(file.chipset, "KBLGT2");
  const MetricSet* set = file.find("ComputeBasic");
  ASSERT_NE(set, nullptr);
  EXPECT_GT(set->register_count(RegisterConfig::Kind::kNoa), 0u);
  EXPECT_GT(set->register_count(RegisterConfig::Kind::kFlex), 0u);
  const DeviceVariables vars = device_variables(*platform_by_name("kblgt2"));
  CounterDeltas d;
  d.timestamp = 12'000;        // 1 ms at 12 MHz
  d.gpu_ticks = 1'000'000;     // 1 GHz
  d.a[0] = 800'000;            // busy 80 %
  d.a[7] = 24 * 500'000 + 23;  // EU active 50 % (integer division by 24 EUs first)
  d.a[30] = 10;
  const auto values = set->evaluate(d, vars);
  auto value = [&](std::string_view symbol) {
    return values.at(static_cast<std::size_t>(*set->counter_index(symbol)));
  };
  EXPECT_EQ(value("GpuTime").u, 1'000'000u);
  EXPECT_EQ(value("GpuCoreClocks").u, 1'000'000u);
  EXPECT_EQ(value("AvgGpuCoreFrequency").u, 1'000'000'000u);
  EXPECT_DOUBLE_EQ(value("GpuBusy").as_double(), 80.0);
  EXPECT_DOUBLE_EQ(value("EuActive").as_double(), 50.0);
  EXPECT_EQ(value("SlmBytesRead").u, 640u);
}

TEST_F(IgtFilesTest, SpotChecksOnOtherPlatformsAndReferenceChains) {
  {
    // Haswell has no GPU_TICKS: its core clocks come from a C counter.
    const auto file = import_igt("hsw");
    const MetricSet* set = file.find("RenderBasic");
    ASSERT_NE(set, nullptr);
    const auto& clocks =
        set->counters()[static_cast<std::size_t>(*set->counter_index("GpuCoreClocks"))];
    EXPECT_EQ(clocks.equation.text(), "C 2 READ");
  }
  {
    // TGL: EU active sums four A counters; references run through GpuCoreClocks.
    const auto file = import_igt("tglgt2");
    const MetricSet* set = file.find("ComputeBasic");
    ASSERT_NE(set, nullptr);
    const DeviceVariables vars = device_variables(*platform_by_name("tglgt2"));
    CounterDeltas d;
    d.gpu_ticks = 1000;
    for (int i = 7; i <= 10; ++i) d.a[static_cast<std::size_t>(i)] = 96 * 100;  // 4 × 10 %
    const auto values = set->evaluate(d, vars);
    const auto idx = static_cast<std::size_t>(*set->counter_index("EuActive"));
    EXPECT_DOUBLE_EQ(values[idx].as_double(), 4 * 96 * 100 / 96 * 100.0 / 1000);
  }
  {
    // Availability on slice masks: a GT3 subslice counter exists only with that slice.
    const auto file = import_igt("icl");
    DeviceVariables vars = device_variables(*platform_by_name("icl"));
    int with_availability = 0;
    for (const MetricSet& set : file.sets) {
      for (std::size_t i = 0; i < set.counters().size(); ++i) {
        if (!set.counters()[i].availability) continue;
        ++with_availability;
        vars.subslice_mask = 0;
        vars.slice_mask = 0;
        const std::string& text = set.counters()[i].availability->text();
        if (text.find("Mask") != std::string::npos) {
          EXPECT_FALSE(set.available(static_cast<int>(i), vars)) << text;
        }
      }
    }
    EXPECT_GT(with_availability, 0);
  }
}

TEST(MetricXmlTest, MinimalSetWithEveryAttribute) {
  // Composed from fragments, as the error cases below are: real sets are read from ../shared
  // (IgtFilesTest), never copied here.
  auto config = [](const std::string& attrs, const std::string& type, const std::string& address,
                   const std::string& value) {
    return "<register_config " + attrs + "><register type='" + type + "' address='" + address +
           "' value='" + value + "'/></register_config>";
  };
  const std::string xml =
      "<?xml version='1.0'?><metrics version='1'>"
      "<set name='Test set' chipset='TEST' symbol_name='TestSet' hw_config_guid='g-1' extra='x'>"
      "<counter name='Ratio' symbol_name='Ratio' data_type='float' units='percent' "
      "semantic_type='ratio' equation='$Clocks 2 FDIV' max_equation='100' "
      "availability='$SliceMask 1 AND' mdapi_group='G'/>"
      "<counter name='Clocks' symbol_name='Clocks' data_type='uint64' units='cycles' "
      "semantic_type='event' equation='GPU_CLOCK 0 READ'/>" +
      config("type='NOA'", "NOA", "0x00009888", "0x00000011") +
      config("type='NOA' availability='$SliceMask 0x02 AND' priority='1'", "NOA", "0x9888", "7") +
      config("type='OA'", "OA", "0x2740", "0x00000000") +
      config("type='FLEX'", "FLEX", "0xe458", "0x00000105") + "</set></metrics>";
  const MetricFile file = import_metrics_xml(xml, "test.xml");
  ASSERT_EQ(file.sets.size(), 1u);
  const MetricSet& set = file.sets[0];
  EXPECT_EQ(set.name(), "Test set");
  EXPECT_EQ(set.guid(), "g-1");
  EXPECT_THAT(set.attributes(),
              ::testing::Contains(std::pair<std::string, std::string>("extra", "x")));
  // The reference to a later counter is evaluated after it.
  EXPECT_EQ(set.evaluation_order(), (std::vector<int>{1, 0}));
  ASSERT_EQ(set.counters().size(), 2u);
  EXPECT_THAT(set.counters()[0].attributes,
              ::testing::Contains(std::pair<std::string, std::string>("mdapi_group", "G")));
  DeviceVariables vars;
  vars.slice_mask = 1;
  EXPECT_EQ(set.writes(RegisterConfig::Kind::kNoa, vars),
            (std::vector<RegisterWrite>{{0x9888, 0x11}}));
  vars.slice_mask = 3;
  EXPECT_EQ(set.writes(RegisterConfig::Kind::kNoa, vars).size(), 2u);
  EXPECT_EQ(set.register_configs()[1].priority, 1);
  EXPECT_EQ(set.writes(RegisterConfig::Kind::kBoolean, vars),
            (std::vector<RegisterWrite>{{0x2740, 0}}));
  EXPECT_EQ(set.writes(RegisterConfig::Kind::kFlex, vars),
            (std::vector<RegisterWrite>{{0xE458, 0x105}}));
  CounterDeltas d;
  d.gpu_ticks = 10;
  const auto values = set.evaluate(d, vars);
  EXPECT_DOUBLE_EQ(values[0].f, 5.0);
  EXPECT_TRUE(set.available(0, vars));
  vars.slice_mask = 2;
  EXPECT_FALSE(set.available(0, vars));
}

std::string import_error(const std::string& xml) {
  try {
    import_metrics_xml(xml, "bad.xml");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(MetricXmlTest, MalformedFilesAreClearErrors) {
  EXPECT_THAT(import_error(""), HasSubstr("bad.xml"));
  EXPECT_THAT(import_error("<metrics><set"), HasSubstr("not well-formed XML"));
  EXPECT_THAT(import_error("<other/>"), HasSubstr("not <metrics>"));
  EXPECT_THAT(import_error("<metrics><set name='n'/></metrics>"),
              HasSubstr("no symbol_name attribute"));
  const std::string head = "<metrics><set name='n' symbol_name='S' hw_config_guid='g'>";
  const std::string tail = "</set></metrics>";
  auto counter = [](const std::string& attrs) {
    return "<counter name='c' symbol_name='C' data_type='uint64' " + attrs + "/>";
  };
  EXPECT_THAT(import_error(head + counter("equation='1 FROB'") + tail),
              HasSubstr("metric set S counter C equation"));
  EXPECT_THAT(import_error(head + counter("equation='$Missing'") + tail),
              HasSubstr("neither a device variable nor a counter"));
  EXPECT_THAT(import_error(head + counter("") + tail), HasSubstr("no equation attribute"));
  EXPECT_THAT(import_error(head +
                           "<counter name='c' symbol_name='C' data_type='int7' "
                           "equation='1'/>" +
                           tail),
              HasSubstr("data_type 'int7'"));
  EXPECT_THAT(import_error(head + counter("equation='1'") + counter("equation='2'") + tail),
              HasSubstr("appears twice"));
  EXPECT_THAT(
      import_error(head +
                   "<counter name='a' symbol_name='A1' data_type='uint64' equation='$B1'/>"
                   "<counter name='b' symbol_name='B1' data_type='uint64' equation='$A1'/>" +
                   tail),
      HasSubstr("cycle"));
  EXPECT_THAT(import_error(head + "<register_config type='MUX'/>" + tail), HasSubstr("type 'MUX'"));
  EXPECT_THAT(import_error(head +
                           "<register_config type='OA'><register address='0x1' "
                           "value='0x1ffffffff'/></register_config>" +
                           tail),
              HasSubstr("not a 32-bit number"));
  EXPECT_THAT(import_error(head +
                           "<register_config type='OA'><register type='FLEX' "
                           "address='1' value='1'/></register_config>" +
                           tail),
              HasSubstr("type FLEX in a OA config"));
  EXPECT_THAT(import_error(head + "<register_config type='OA'><foo/></register_config>" + tail),
              HasSubstr("<foo>"));
  EXPECT_THAT(import_error(head + counter("equation='1' availability='$GpuBusy'") + tail),
              HasSubstr("availability"));
  EXPECT_THAT(
      import_error("<metrics>" + head.substr(9) + tail.substr(0, 6) + head.substr(9) + tail),
      HasSubstr("metric set S appears twice"));
  // Errors carry the line number.
  EXPECT_THAT(import_error("<metrics>\n\n<set name='n'/></metrics>"), HasSubstr("bad.xml:3"));
}

TEST(MetricXmlTest, HostileInputIsRefusedNotExpanded) {
  // Entities are not expanded: a billion-laughs document parses without blowing up, and an
  // external entity is never fetched.
  const std::string laughs = R"(<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<metrics><set name="&lol2;" symbol_name="S" hw_config_guid="&xxe;"/></metrics>)";
  MetricFile file;
  ASSERT_NO_THROW(file = import_metrics_xml(laughs, "laughs.xml"));
  ASSERT_EQ(file.sets.size(), 1u);
  EXPECT_EQ(file.sets[0].guid().find("root:"), std::string::npos);
  // Deep nesting and binary junk are errors or ignored, never a crash.
  std::string deep = "<metrics>";
  for (int i = 0; i < 10000; ++i) deep += "<x>";
  EXPECT_THROW(import_metrics_xml(deep, "deep.xml"), std::invalid_argument);
  const std::string junk("\x00\xff\xfe<metrics>", 12);
  EXPECT_THROW(import_metrics_xml(junk, "junk.xml"), std::invalid_argument);
}

}  // namespace
}  // namespace oaprof::oa
