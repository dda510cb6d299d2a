// oaprof merge's inputs and its table: what parses, what is refused (with the file named), and the
// per-kernel figures across runs.
#include "report/merge.h"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace oaprof::report {
namespace {

using ::testing::HasSubstr;

const std::string kHeader = "launch,kernel,gpu_time_ns,host,rank,flags\n";

std::string refusal(const std::string& text) {
  try {
    (void)parse_run_table(text, "in.csv");
  } catch (const RunInputError& e) {
    return e.what();
  }
  return "";
}

TEST(MergeInputTest, ReadsQuotedCellsCrlfAndALastLineWithoutNewline) {
  const RunTable t = parse_run_csv(
      kHeader + "0,k,100,node1,0,\"a,b\"\r\n1,\"k\"\"2\",200,node1,0,\"line\nbreak\"", "r0.csv");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][5], "a,b");
  EXPECT_EQ(t.rows[1][1], "k\"2");
  EXPECT_EQ(t.rows[1][5], "line\nbreak");
}

TEST(MergeInputTest, HostileAndTruncatedInputsAreRefusedWithTheFileNamed) {
  EXPECT_THAT(refusal(""), HasSubstr("in.csv: empty"));
  EXPECT_THAT(refusal(kHeader + "0,k,100,node1\n"), HasSubstr("row 1 has 4 cells, the header 6"));
  EXPECT_THAT(refusal(kHeader + "0,k,100,node1,0,\"cut"), HasSubstr("never closed"));
  EXPECT_THAT(refusal(kHeader + std::string("0,k\0,1,h,0,\n", 13)), HasSubstr("NUL"));
  EXPECT_THAT(refusal(kHeader + "0,k," + std::string(5000, '9') + ",h,0,\n"),
              HasSubstr("longer than 4096"));
  EXPECT_THAT(refusal("launch,kernel,gpu_time_ns\n0,k,1\n"), HasSubstr("no 'host' column"));
  EXPECT_THAT(refusal("kernel,kernel,gpu_time_ns,host,rank\n"), HasSubstr("appears twice"));
  std::string wide;
  for (int i = 0; i < 1100; ++i) wide += "c" + std::to_string(i) + ",";
  EXPECT_THAT(refusal(wide + "\n"), HasSubstr("more than 1024 cells"));
  EXPECT_THAT(refusal("{\"launches\": [}"), HasSubstr("in.csv"));
  EXPECT_THAT(refusal(R"({"device":"d","results":[]})"), HasSubstr("kernel_runner"));
}

// A row of separators alone, or one without its kernel, is no launch: refused with its line
// (issue 29, item 7), not kept at the cost of a row each.
TEST(MergeInputTest, RowsOfOnlySeparatorsOrWithoutAKernelAreRefusedWithTheirLine) {
  EXPECT_THAT(refusal(kHeader + "0,k,1,h,0,\n,,,,,\n,,,,,\n"),
              HasSubstr("in.csv: line 3: row 2 is empty (only separators)"));
  EXPECT_THAT(refusal(kHeader + "0,,1,h,0,\n"), HasSubstr("line 2: row 1 has no kernel"));
  EXPECT_THAT(refusal(R"({"schema_version":1,"launches":[{"kernel":null,"gpu_time_ns":null,
                          "host":null,"rank":null}]})"),
              HasSubstr("launch 0 is empty (only separators)"));
  EXPECT_THAT(refusal(R"({"schema_version":1,"launches":[{}]})"), HasSubstr("launch 0 is empty"));
}

// oaprof's JSON before issue 29 (rows as objects) and after (a "columns" list, rows of values):
// both give the same table.
TEST(MergeInputTest, ReadsJsonOfBothSchemas) {
  const RunTable v1 = parse_run_table(
      R"({"schema_version":1,"metric_set":"S","launches":[
          {"kernel":"k","gpu_time_ns":10.5,"host":"n","rank":"0","energy":{"measured":false}}]})",
      "v1.json");
  const RunTable v2 = parse_run_table(
      R"({"schema_version":2,"metric_set":"S","columns":["kernel","gpu_time_ns","host","rank","energy"],
          "launches":[["k",10.5,"n","0",{"measured":false}]]})",
      "v2.json");
  EXPECT_EQ(v1.columns, v2.columns);
  EXPECT_EQ(v1.rows, v2.rows);
  EXPECT_EQ(v2.metric_set, "S");
  EXPECT_EQ(v2.rows[0][1], "10.5");
  EXPECT_EQ(v2.rows[0][4], R"({"measured":false})");
}

// A file is read a chunk (64 KiB) at a time: a doubled quote and a CRLF that straddle a chunk's
// end read as they do in one piece.
TEST(MergeInputTest, ReadsAFileAcrossItsChunks) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("merge-chunks-" + std::to_string(::getpid()) + ".csv");
  std::string text = kHeader;
  std::size_t rows = 0;
  while (text.size() < (std::size_t{1} << 16) - 40) {
    text += "0,k,1,h,0,x\r\n";
    ++rows;
  }
  text += "0,k,1,h,0,\"" + std::string((std::size_t{1} << 16) - text.size() - 1, 'a') +
          "\"\"b\"\r\n";  // the doubled quote's first half is the chunk's last byte
  ++rows;
  std::ofstream(path, std::ios::binary) << text;
  const RunTable t = read_run_table(path.string());
  std::filesystem::remove(path);
  ASSERT_EQ(t.rows.size(), rows);
  EXPECT_EQ(t.rows[0][5], "x");
  EXPECT_TRUE(t.rows[rows - 1][5].ends_with("a\"b"));
}

TEST(MergeTest, RowsOfEveryRunAndEachKernelsSpreadAcrossThem) {
  std::vector<RunTable> tables;
  tables.push_back(parse_run_csv(kHeader + "0,a,100,n1,0,\n1,a,100,n1,0,\n2,b,50,n1,0,\n", "r0"));
  tables.push_back(parse_run_csv(kHeader + "0,a,400,n1,1,\n", "r1"));
  tables.push_back(parse_run_csv(kHeader + "0,a,300,n2,2,\n1,b,70,n2,2,\n", "r2"));
  const MergedRuns m = merge_runs(tables);
  EXPECT_EQ(m.rows.size(), 6u);
  EXPECT_EQ(m.sources.size(), 3u);
  EXPECT_EQ(m.runs(), 3u);
  const auto kernels = kernels_across_runs(m);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].kernel, "a");
  EXPECT_EQ(kernels[0].launches, 4u);
  EXPECT_EQ(kernels[0].runs, 3u);
  EXPECT_EQ(kernels[0].gpu_ns_min, 200);  // rank 0: two launches of 100
  EXPECT_EQ(kernels[0].gpu_ns_median, 300);
  EXPECT_EQ(kernels[0].gpu_ns_max, 400);
  EXPECT_EQ(kernels[1].runs, 2u);
  EXPECT_EQ(kernels[1].gpu_ns_median, 60);

  std::ostringstream csv, json;
  write_merged_csv(csv, m);
  EXPECT_EQ(parse_run_csv(csv.str(), "all.csv").rows.size(), 6u);  // merge's own output merges
  write_merged_json(json, m, kernels);
  const auto doc = nlohmann::json::parse(json.str());
  EXPECT_EQ(doc["launches"].size(), 6u);
  EXPECT_EQ(doc["launches"][3]["rank"], "1");
  EXPECT_EQ(doc["launches"][3]["gpu_time_ns"], 400.0);
  EXPECT_EQ(doc["kernels"][0]["gpu_ns_max"], 400.0);
}

// CSV cells are bytes: a host or kernel name that is not UTF-8 (found by merge_input_fuzz) still
// gives a valid JSON document, each stray byte written as U+FFFD.
TEST(MergeTest, CellsThatAreNotUtf8StillGiveValidJson) {
  const RunTable t = parse_run_csv(kHeader + "0,k\xe8,100,n\xe8\xe8,0,\n", "r0.csv");
  const MergedRuns m = merge_runs({t});
  std::ostringstream json;
  ASSERT_NO_THROW(write_merged_json(json, m, kernels_across_runs(m)));
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(json.str())) << json.str();
  EXPECT_EQ(doc["launches"][0]["host"], "n\uFFFD\uFFFD");
  EXPECT_EQ(doc["kernels"][0]["kernel"], "k\uFFFD");
}

TEST(MergeTest, FilesThatDoNotBelongTogetherAreRefused) {
  const RunTable r0 = parse_run_csv(kHeader + "0,a,1,n1,0,\n", "r0.csv");
  const RunTable other = parse_run_csv(
      "launch,kernel,gpu_time_ns,EuActive_percent,host,rank,flags\n0,a,1,5,n1,1,\n", "r1.csv");
  try {
    (void)merge_runs({r0, other});
    FAIL();
  } catch (const RunInputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("r0.csv and r1.csv have other columns (from column 4"));
  }
  const RunTable again = parse_run_csv(kHeader + "5,a,1,n1,0,\n", "copy.csv");
  EXPECT_THROW((void)merge_runs({r0, again}), RunInputError);  // host n1 rank 0 twice
  RunTable a = r0, b = parse_run_csv(kHeader + "0,a,1,n1,1,\n", "r1.csv");
  a.metric_set = "ComputeBasic";
  b.metric_set = "L3_1";
  EXPECT_THROW((void)merge_runs({a, b}), RunInputError);
  EXPECT_THROW((void)merge_runs({}), RunInputError);
  // Outside a job (no rank) each file is a run of its own, whatever its host.
  const RunTable solo1 = parse_run_csv(kHeader + "0,a,1,n1,,\n", "one.csv");
  const RunTable solo2 = parse_run_csv(kHeader + "0,a,3,n1,,\n", "two.csv");
  const MergedRuns m = merge_runs({solo1, solo2});
  EXPECT_EQ(m.runs(), 2u);
  EXPECT_EQ(kernels_across_runs(m)[0].gpu_ns_max, 3);
}

}  // namespace
}  // namespace oaprof::report
