// Kernel names an attacker chooses, shown to a user: terminal escapes, bytes XML forbids and
// spreadsheet formulas must reach the terminal tables, the SVG and the CSV as inert text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pugixml.hpp>

#include "report/merge.h"
#include "report/reporter.h"
#include "report/roofline_svg.h"
#include "tests/common/run_util.h"

namespace oaprof::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A kernel name with every byte a terminal acts on or XML forbids, and bytes that are not UTF-8.
const std::string kHostileName = std::string("k\x1b[2J\x1b]0;owned\x07") + std::string(1, '\0') +
                                 "\r\n\t\x01\x7f\xff\xfe\xef\xbf\xbe<&>\"'";

// The byte `c` as the tables and the SVG show it.
std::string shown(unsigned char c) { return fmt::format("\\x{:02x}", c); }

// Whether `text` holds only characters XML 1.0 allows, in UTF-8 (checked here byte by byte,
// apart from the escaping under test): no control byte but tab, LF and CR, no byte that is not
// part of a UTF-8 sequence, no U+FFFE or U+FFFF.
bool only_xml_characters(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return false;
      ++i;
      continue;
    }
    const int length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (length == 0 || i + length > text.size()) return false;
    for (int k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return false;
    }
    if (text.compare(i, 3, "\xef\xbf\xbe") == 0 || text.compare(i, 3, "\xef\xbf\xbf") == 0) {
      return false;
    }
    i += static_cast<std::size_t>(length);
  }
  return true;
}

TEST(HostileKernelNameTest, TheRooflineSvgStaysWellFormedXml) {
  RooflineModel m;
  m.ceilings.push_back({"peak MAD SP", std::string("gpu\x1b[31m", 8), 100, true, false});
  m.ceilings.push_back({"L3", "gpu", 50, false, false});
  RooflinePoint p;
  p.kernel = kHostileName;
  p.intensity = 1;
  p.gflops = 10;
  p.detail = kHostileName;
  m.points.push_back(p);
  const std::string svg = roofline_svg(m, kHostileName);
  EXPECT_TRUE(only_xml_characters(svg));
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_buffer(svg.data(), svg.size());
  ASSERT_TRUE(parsed) << parsed.description() << " at " << parsed.offset;
  const pugi::xml_node point = doc.select_node("//circle[@data-kernel]").node();
  ASSERT_TRUE(point);
  // Every escaped byte is there to read, in order, and the markup characters are text again.
  const std::string kernel = point.attribute("data-kernel").value();
  EXPECT_THAT(kernel, HasSubstr(shown(0x1b) + "[2J" + shown(0x1b) + "]0;owned" + shown(0x07) +
                                shown(0x00) + shown('\r') + shown('\n') + shown('\t') +
                                shown(0x01) + shown(0x7f) + shown(0xff) + shown(0xfe)));
  EXPECT_THAT(kernel, HasSubstr("<&>\"'"));
  EXPECT_THAT(svg, Not(HasSubstr("\x1b")));
  // The HTML report places the same names.
  EXPECT_TRUE(only_xml_characters(html_report(m, kHostileName)));
}

// Whether `text` holds a control byte a terminal would act on (below 0x20 but the line ends the
// table writes itself, and 0x7f).
bool has_terminal_control(const std::string& text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && c != '\n') || byte == 0x7f;
  });
}

// What a reporter writes for a run of one launch of each of `kernels`.
std::string reported(std::unique_ptr<Reporter> (*make)(std::ostream&),
                     const std::vector<std::string>& kernels) {
  std::ostringstream out;
  const auto reporter = make(out);
  RunInfo info;
  info.device = "simulated";
  info.timestamp_hz = 12e6;
  reporter->begin(info);
  RowEnergy energy;
  energy.window = power::unavailable_energy_window("none in this test");
  for (const std::string& name : kernels) {
    oa::LaunchRecord r;
    r.launch.kernel_name = name;
    reporter->add(r, energy);
  }
  reporter->end();
  return out.str();
}

TEST(HostileKernelNameTest, TheEndOfRunTableShowsControlBytesEscaped) {
  const std::string table = reported(make_table_reporter, {kHostileName});
  EXPECT_FALSE(has_terminal_control(table)) << table;
  EXPECT_THAT(table, HasSubstr("k" + shown(0x1b) + "[2J" + shown(0x1b) + "]0;owned"));
  EXPECT_THAT(table, HasSubstr(shown('\r') + shown('\n') + shown('\t') + shown(0x01)));
}

TEST(HostileKernelNameTest, TheMergeTableShowsControlBytesEscaped) {
  std::ostringstream out;
  KernelAcrossRuns k;
  k.kernel = std::string("k\x1b[2J\r", 6) + std::string(1, '\0') + "\x7f";
  k.launches = 1;
  k.runs = 1;
  write_kernels_table(out, {k}, 1);
  EXPECT_FALSE(has_terminal_control(out.str())) << out.str();
  EXPECT_THAT(out.str(),
              HasSubstr("k" + shown(0x1b) + "[2J" + shown('\r') + shown(0x00) + shown(0x7f)));
}

// Verifies the CSV writer's defence (report/csv.h): a name a spreadsheet would run as a formula
// is written behind a single quote, in quotes, whatever character starts it.
TEST(HostileKernelNameTest, CsvCellsThatStartLikeAFormulaAreNeutralised) {
  const std::vector<std::string> formulas{"=1+2",     "+1",   "-2+3+cmd|' /C calc'!A0",
                                          "@SUM(A1)", "\t=1", "\r=1"};
  std::istringstream lines(reported(make_csv_reporter, formulas));
  std::string line;
  std::getline(lines, line);
  const auto columns = testing::split_csv(line);
  const auto kernel = static_cast<std::size_t>(std::find(columns.begin(), columns.end(), "kernel") -
                                               columns.begin());
  ASSERT_LT(kernel, columns.size());
  for (const std::string& name : formulas) {
    ASSERT_TRUE(std::getline(lines, line));
    // The cell as it stands in the file, quotes and all: what a spreadsheet opens.
    const std::string cell = "\"'" + name + "\"";
    EXPECT_THAT(line, HasSubstr("," + cell + ",")) << name;
    EXPECT_EQ(testing::split_csv(line).at(kernel), "'" + name);
  }
}

}  // namespace
}  // namespace oaprof::report
