#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "report/run_input.h"

namespace oaprof::report {
namespace {

using ::testing::HasSubstr;

constexpr const char* kOaprof =
    R"({"schema_version":1,"oaprof_version":"0.1.0","device":"simulated",
 "device_detail":"simulated KBL GT2","platform":"kblgt2","mode":"kernel","eus":24,"max_freq_mhz":1150,
 "min_freq_mhz":300,"start_freq_mhz":null,"timestamp_hz":12000000,"energy_backend":"sim",
 "topology":{"subslices":3},
 "launches":[{"kernel":"k","kernel_ns":1000,"gpu_time_ns":1100,"igpu_power_w":2.5,"flags":"a;b",
              "GpuCoreClocks_cycles":1150,"local_size":null}]})";

std::string error_of(const std::string& text) {
  try {
    parse_run_json(text, "in.json");
  } catch (const RunInputError& e) {
    return e.what();
  }
  return "";
}

TEST(RunInputTest, ReadsOaprofRuns) {
  const auto run = std::get<OaprofRun>(parse_run_json(kOaprof, "in.json"));
  EXPECT_TRUE(run.simulated());
  EXPECT_EQ(run.eus, 24);
  EXPECT_EQ(run.subslices, 3);
  EXPECT_FALSE(run.start_freq_mhz.has_value());
  ASSERT_EQ(run.launches.size(), 1u);
  EXPECT_EQ(run.launches[0].kernel, "k");
  EXPECT_EQ(run.launches[0].kernel_ns, 1000);
  EXPECT_EQ(run.launches[0].flags, "a;b");
  EXPECT_EQ(run.launches[0].numbers.at("GpuCoreClocks_cycles"), 1150);
  EXPECT_EQ(run.launches[0].local_size, "");
}

TEST(RunInputTest, ReadsKernelRunnerRuns) {
  const auto run = std::get<RunnerRun>(parse_run_json(
      R"({"device":"dev","results":[{"kernel":"mad_vect4","variant":"private","global":4096,
          "local":64,"work":16,"rate":4.5,"unit":"GFLOP/s","fills_hw_threads":true}],"skipped":[]})",
      "kr.json"));
  ASSERT_EQ(run.results.size(), 1u);
  EXPECT_EQ(run.results[0].global, 4096);
  EXPECT_TRUE(run.results[0].fills_hw_threads);
}

TEST(RunInputTest, RefusesWhatIsNotARun) {
  EXPECT_THAT(error_of("{\"launches\": ["), HasSubstr("in.json: is not valid JSON"));
  EXPECT_THAT(error_of("[1]"), HasSubstr("not a JSON object"));
  EXPECT_THAT(error_of("{\"x\":1}"), HasSubstr("neither oaprof's JSON"));
  EXPECT_THAT(error_of(std::string(100, '[') + std::string(100, ']')),
              HasSubstr("nested deeper than 32"));
}

TEST(RunInputTest, NamesTheBadField) {
  std::string bad = kOaprof;
  bad.replace(bad.find("\"kernel_ns\":1000"), 16, "\"kernel_ns\":-1");
  EXPECT_THAT(error_of(bad),
              HasSubstr("launch 0: \"kernel_ns\" must be a finite number, not negative"));
  bad = kOaprof;
  bad.replace(bad.find("\"kernel\":\"k\""), 12, "\"kernel\":7");
  EXPECT_THAT(error_of(bad), HasSubstr("launch 0: \"kernel\" must be a string"));
  bad = kOaprof;
  bad.replace(bad.find("\"schema_version\":1"), 18, "\"schema_version\":9");
  EXPECT_THAT(error_of(bad), HasSubstr("schema_version 9"));
  bad = kOaprof;
  bad.replace(bad.find("\"eus\":24"), 8, "\"eus\":2.5");
  EXPECT_THAT(error_of(bad), HasSubstr("\"eus\" must be a whole number"));
  EXPECT_THAT(error_of(R"({"device":"d","results":[{"kernel":"k","global":1}]})"),
              HasSubstr("result 0 has no \"local\""));
}

TEST(RunInputTest, BracketsInsideStringsAreNotNesting) {
  std::string deep = kOaprof;
  deep.replace(deep.find("\"a;b\""), 5, "\"" + std::string(100, '[') + "\"");
  EXPECT_NO_THROW(parse_run_json(deep, "in.json"));
}

// Schema 2 (oaprof --json since issue 29): the header names the columns once, a row is its
// values. It reads as schema 1 does; a launch keeps only the figures the roofline draws.
TEST(RunInputTest, ReadsRowsOfValuesNamedByTheColumns) {
  const auto run = std::get<OaprofRun>(parse_run_json(
      R"({"schema_version":2,"device":"simulated","eus":24,
          "columns":["kernel","kernel_ns","local_size","flags","GpuCoreClocks_cycles","A0","energy"],
          "launches":[["k",1000,null,"a;b",1150,7,{"measured":false}],
                      ["k2",2000,"64",null,1,8,{}]]})",
      "v2.json"));
  ASSERT_EQ(run.launches.size(), 2u);
  EXPECT_EQ(run.launches[0].kernel, "k");
  EXPECT_EQ(run.launches[0].kernel_ns, 1000);
  EXPECT_EQ(run.launches[0].flags, "a;b");
  EXPECT_EQ(run.launches[0].numbers.at("GpuCoreClocks_cycles"), 1150);
  EXPECT_FALSE(run.launches[0].numbers.contains("A0"));  // the roofline does not read it
  EXPECT_EQ(run.launches[1].local_size, "64");
}

// Rows that are no launch, or hold more than a launch can, are refused where they stand (issue
// 29, item 7): nothing of them is kept, and the message names the row.
TEST(RunInputTest, RefusesEmptyAndOversizedRowsWhereTheyStand) {
  const std::string head = R"({"schema_version":2,"device":"d",)";
  EXPECT_THAT(error_of(head + R"("launches":[{},{}]})"),
              HasSubstr("in.json: launch 0 is empty ({})"));
  EXPECT_THAT(error_of(head + R"("columns":["kernel"],"launches":[["k"],[]]})"),
              HasSubstr("launch 1 is empty ([])"));
  EXPECT_THAT(error_of(head + R"("launches":[["k"]]})"), HasSubstr("no \"columns\""));
  EXPECT_THAT(error_of(head + R"("columns":["kernel","x"],"launches":[["k"]]})"),
              HasSubstr("launch 0 has 1 values, \"columns\" names 2"));
  EXPECT_THAT(error_of(head + R"("columns":["k","k"],"launches":[]})"), HasSubstr("twice"));
  EXPECT_THAT(error_of(head + R"("launches":[5]})"), HasSubstr("launch 0 is not an object"));
  std::string many = "0";
  for (std::size_t i = 0; i < kMaxRunRowValues; ++i) many += ",0";
  EXPECT_THAT(error_of(head + R"("launches":[{"kernel":"k","x":[)" + many + "]}]}"),
              HasSubstr("launch 0 holds more than 4096 values"));
  EXPECT_THAT(error_of(head + R"("command":[)" + many + R"(],"launches":[]})"),
              HasSubstr("more than 4096 values outside"));
  EXPECT_THAT(error_of(head + R"("launches":[{"kernel":")" + std::string(30000, 'k') + "\"}]}"),
              HasSubstr("a string longer than 4096"));
  EXPECT_THAT(error_of(R"({"device":"d","results":[{}]})"), HasSubstr("result 0 is empty"));
  EXPECT_THAT(error_of(head + R"("launches":[{"kernel":"k","x":)" + std::string(100, '7') + "}]}"),
              HasSubstr("a number or literal longer than 64"));
  // Found by run_input_fuzz: nlohmann throws out_of_range, not parse_error, for this.
  EXPECT_THAT(error_of(head + R"("launches":[{"kernel":"k","x":7e7777}]})"),
              HasSubstr("a number out of range"));
}

}  // namespace
}  // namespace oaprof::report
