#include "bench/result_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>
#include <sstream>

namespace oaprof::bench {
namespace {

using ::testing::HasSubstr;

RunResult mad_vect4() {
  RunResult r;
  r.spec = *parse_kernel_name("mad_vect4");
  r.global_size = 4096;
  r.local_size = 64;
  r.iterations = 512;
  r.kernel_ns = {1000, 2000, 3000};
  r.stats = summarize(r.kernel_ns);
  r.ops = 4096.0 * 512 * 8;
  r.work = r.ops;
  r.verified = 16384;
  return r;
}

TEST(ResultWriterTest, TableKeepsTheShapeOaprofParses) {
  std::ostringstream out;
  ResultWriter w(out, OutputFormat::kTable, "pthread-test");
  w.row(mad_vect4(), true);
  w.finish();
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("device: pthread-test\n"));
  std::smatch m;
  // The pipeline test's expectation: name, global size, local size, iterations, repeats.
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(mad_vect4\s+4096\s+64\s+512\s+(\d+))")));
  EXPECT_EQ(m[1], "3");
  // 16.78 MFLOP in a 2 µs median: 8389 GFLOP/s.
  EXPECT_THAT(text, HasSubstr("8389 GFLOP/s"));
  EXPECT_EQ(text.substr(text.size() - 2), "*\n");
}

TEST(ResultWriterTest, CsvHasEveryStatistic) {
  std::ostringstream out;
  ResultWriter w(out, OutputFormat::kCsv, "dev");
  w.row(mad_vect4());
  std::istringstream in(out.str());
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  EXPECT_THAT(header, HasSubstr("kernel,variant,device,global,local,iterations,outer,size_bytes,"
                                "repeats,median_ns,mean_ns,stddev_ns,stderr_ns"));
  EXPECT_EQ(row.rfind("mad_vect4,private,dev,4096,64,512,1,0,3,2000,2000,1000,", 0), 0u) << row;
  EXPECT_THAT(row, HasSubstr(",GFLOP/s,16384,0"));
}

// The device's name is the OpenCL driver's text: quoted where it needs it, and never a formula
// to a spreadsheet (report/csv.h).
TEST(ResultWriterTest, CsvQuotesAndNeutralisesTheDeviceName) {
  std::ostringstream out;
  ResultWriter w(out, OutputFormat::kCsv, "=cmd|\"/C calc\"!A0, GPU");
  w.row(mad_vect4());
  std::istringstream in(out.str());
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  EXPECT_EQ(row.rfind("mad_vect4,private,\"'=cmd|\"\"/C calc\"\"!A0, GPU\",4096,", 0), 0u) << row;
}

TEST(ResultWriterTest, JsonHoldsRawSamplesAndSkips) {
  std::ostringstream out;
  ResultWriter w(out, OutputFormat::kJson, "a \"quoted\" device");
  w.row(mad_vect4());
  w.skipped("add_dp_scalar", "add_dp_scalar: skipped, no fp64");
  w.finish();
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["device"], "a \"quoted\" device");
  ASSERT_EQ(j["results"].size(), 1u);
  const auto& r = j["results"][0];
  EXPECT_EQ(r["kernel"], "mad_vect4");
  EXPECT_EQ(r["repeats"], 3);
  EXPECT_EQ(r["samples_ns"], nlohmann::json::parse("[1000.0, 2000.0, 3000.0]"));
  EXPECT_DOUBLE_EQ(r["median_ns"].get<double>(), 2000);
  EXPECT_EQ(r["unit"], "GFLOP/s");
  EXPECT_EQ(j["skipped"][0]["kernel"], "add_dp_scalar");
}

// Names come from the driver and the command line: any bytes, even ones that are not UTF-8,
// give a document that parses, with the text as it was where it was UTF-8.
TEST(ResultWriterTest, JsonEscapesAnyText) {
  std::ostringstream out;
  ResultWriter w(out, OutputFormat::kJson, "a\"b\\c\n\x01 \xff");
  w.row(mad_vect4());
  w.skipped("k\t", "why \"not\"");
  w.finish();
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["device"], "a\"b\\c\n\x01 \xef\xbf\xbd");  // 0xff: U+FFFD
  EXPECT_EQ(j["skipped"][0]["kernel"], "k\t");
  EXPECT_EQ(j["skipped"][0]["reason"], "why \"not\"");
}

TEST(ResultWriterTest, RatesInTheirUnits) {
  RunResult r;
  r.kernel_ns = {500};
  r.stats = summarize(r.kernel_ns);
  r.work = 1000;
  r.unit = Unit::kGbytes;
  EXPECT_DOUBLE_EQ(r.rate(), 2.0);  // 1000 bytes in 500 ns = 2 GB/s
  r.unit = Unit::kNsPerAccess;
  EXPECT_DOUBLE_EQ(r.rate(), 0.5);
  r.unit = Unit::kUsPerLaunch;
  EXPECT_DOUBLE_EQ(r.rate(), 0.5);
}

}  // namespace
}  // namespace oaprof::bench
