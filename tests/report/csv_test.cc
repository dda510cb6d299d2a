// report/csv.h, the one CSV quoting of every oaprof writer: RFC 4180 quoting, spreadsheet-formula
// neutralisation of text, numbers left alone, and the reader's undoing of it for any text.
#include "report/csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "report/merge.h"
#include "report/row.h"

namespace oaprof::report {
namespace {

// What a reader gets back from one written cell: its quotes undone as RFC 4180 says, then
// csv_text_read.
std::string read_back(const std::string& written) {
  if (written.size() < 2 || written.front() != '"') return csv_text_read(written, false);
  std::string inner;
  for (std::size_t i = 1; i + 1 < written.size(); ++i) {
    inner += written[i];
    if (written[i] == '"') ++i;  // the second of a doubled quote
  }
  return csv_text_read(inner, true);
}

TEST(CsvTextTest, PlainTextAndTheEmptyCellAreWrittenAsTheyAre) {
  EXPECT_EQ(csv_text("mad_vect4"), "mad_vect4");
  EXPECT_EQ(csv_text("GFLOP/s"), "GFLOP/s");
  EXPECT_EQ(csv_text(""), "");
  EXPECT_EQ(csv_text("a=b"), "a=b");  // only the first character makes a formula
  EXPECT_EQ(csv_text("'quoted'"), "'quoted'");
}

TEST(CsvTextTest, CommasQuotesAndLineBreaksAreQuotedAsRfc4180Says) {
  EXPECT_EQ(csv_text("4096,1,1"), "\"4096,1,1\"");
  EXPECT_EQ(csv_text("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_text("line\nbreak"), "\"line\nbreak\"");
  EXPECT_EQ(csv_text("cr\rhere"), "\"cr\rhere\"");
  EXPECT_EQ(csv_text("\""), "\"\"\"\"");
}

TEST(CsvTextTest, EveryFormulaStartIsNeutralisedAndQuoted) {
  EXPECT_EQ(csv_text("=1+2"), "\"'=1+2\"");
  EXPECT_EQ(csv_text("+1"), "\"'+1\"");
  EXPECT_EQ(csv_text("-2+3+cmd|' /C calc'!A0"), "\"'-2+3+cmd|' /C calc'!A0\"");
  EXPECT_EQ(csv_text("@SUM(A1)"), "\"'@SUM(A1)\"");
  EXPECT_EQ(csv_text("\tx"), "\"'\tx\"");
  EXPECT_EQ(csv_text("\rx"), "\"'\rx\"");
  // Quoting and neutralising together: the formula's own quotes are doubled after the '.
  EXPECT_EQ(csv_text("=HYPERLINK(\"http://x\",\"a,b\")"),
            "\"'=HYPERLINK(\"\"http://x\"\",\"\"a,b\"\")\"");
  // A text that already starts with ' before a formula gets one more, so it reads back whole.
  EXPECT_EQ(csv_text("'=x"), "\"''=x\"");
}

TEST(CsvTextTest, EveryTextReadsBackAsItWasWritten) {
  const std::vector<std::string> texts{"",    "k", "=x",  "+x",   "-x",     "@x",   "\tx",
                                       "\rx", "'", "''",  "'=x",  "''-x",   "'x",   "a,b",
                                       "=",   "-", "x=y", "'\"'", "\"=x\"", "-1.5", "=a\nb"};
  for (const std::string& text : texts) {
    SCOPED_TRACE(text);
    EXPECT_EQ(read_back(csv_text(text)), text);
  }
}

TEST(CsvTextTest, OnlyAQuotedCellLosesItsLeadingQuote) {
  EXPECT_EQ(csv_text_read("'=x", true), "=x");
  EXPECT_EQ(csv_text_read("''=x", true), "'=x");
  // Not the writer's: an unquoted cell (a hand-edited file), or a ' before no formula start.
  EXPECT_EQ(csv_text_read("'=x", false), "'=x");
  EXPECT_EQ(csv_text_read("'x", true), "'x");
  EXPECT_EQ(csv_text_read("'", true), "'");
  EXPECT_EQ(csv_text_read("=x", true), "=x");
}

TEST(CsvTextTest, ALineOfTextCellsIsJoinedByCommas) {
  EXPECT_EQ(csv_text_line({"launch", "kernel", "=A1", "a,b"}), "launch,kernel,\"'=A1\",\"a,b\"");
  EXPECT_EQ(csv_text_line({}), "");
}

TEST(CsvNumberTextTest, NumbersAsOaprofWritesThem) {
  for (const char* number :
       {"0", "42", "-1.5", "1.0", "2000.000", "1e+20", "-3E-7", "18446744073709551615"}) {
    EXPECT_TRUE(csv_number_text(number)) << number;
  }
  for (const char* text : {"", "-", "+1", ".5", "1e", "0x10", "inf", "-nan", " 1", "1 ", "1,2",
                           "=1", "4096,1,1", "1.2.3"}) {
    EXPECT_FALSE(csv_number_text(text)) << text;
  }
}

// A row's number cells are never altered, however they start; its text cells are.
TEST(CsvLineTest, NumbersStayNumbersAndTextIsNeutralised) {
  const std::vector<Field> row{{"kernel", std::string("=cmd")},
                               {"delta", -1.5, 1},
                               {"count", std::uint64_t{7}},
                               {"none", {}},
                               {"flags", std::string("-")}};
  EXPECT_EQ(csv_line(row), "\"'=cmd\",-1.5,7,,\"'-\"");
}

// oaprof merge reads a run's CSV back: a neutralised kernel name is the original name again,
// and writing the merged CSV neutralises it once more, never twice.
TEST(CsvRoundTripTest, MergeReadsNeutralisedCellsBackAndWritesThemOnce) {
  const std::vector<std::string> header{"launch", "kernel", "gpu_time_ns", "host", "rank", "delta"};
  const std::vector<Field> row{{"launch", std::uint64_t{0}}, {"kernel", std::string("=k,1")},
                               {"gpu_time_ns", 100.0, 1},    {"host", std::string("-node")},
                               {"rank", std::string("0")},   {"delta", -2.5, 1}};
  const std::string written = csv_text_line(header) + "\n" + csv_line(row) + "\n";
  const RunTable t = parse_run_csv(written, "run.csv");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.columns, header);
  EXPECT_EQ(t.rows[0][1], "=k,1");
  EXPECT_EQ(t.rows[0][3], "-node");
  EXPECT_EQ(t.rows[0][5], "-2.5");

  std::ostringstream merged;
  write_merged_csv(merged, merge_runs({t}));
  EXPECT_EQ(merged.str(), written);
  const RunTable again = parse_run_csv(merged.str(), "all.csv");
  EXPECT_EQ(again.rows, t.rows);
}

}  // namespace
}  // namespace oaprof::report
