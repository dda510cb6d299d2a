// `oaprof merge` and `oaprof report` on files made to cost memory (issue 29, item 7): 16 MiB of
// separators, of empty rows, of an array of empty objects. Each must end with a clear error that
// names the file and the row, inside an address space (256 MiB) that keeping such rows would
// exceed several times over (before the fix: 300 to 600 MB resident for these files).
#include <sys/resource.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "tests/common/run_util.h"
#include "tests/common/sanitizer.h"

namespace oaprof::security {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using ::testing::HasSubstr;

constexpr std::size_t kHostileBytes = std::size_t{16} << 20;
constexpr std::size_t kAddressSpace = std::size_t{256} << 20;

using oaprof::testing::kAddressSanitizer;

class HostileInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // AddressSanitizer reserves terabytes of shadow address space: no limit fits under it.
    if (kAddressSanitizer) GTEST_SKIP() << "an address-space limit cannot hold under ASan";
    if (testing::run("prlimit --version").status != 0) GTEST_SKIP() << "prlimit is missing";
    dir_ = fs::temp_directory_path() / fmt::format("oaprof-hostile-input-{}", ::getpid());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `text` and then `unit` repeated to 16 MiB, then `tail`.
  std::string write(const std::string& name, const std::string& text, const std::string& unit,
                    const std::string& tail) {
    const fs::path path = dir_ / name;
    std::ofstream out(path, std::ios::binary);
    out << text;
    for (std::size_t n = text.size(); n < kHostileBytes; n += unit.size()) out << unit;
    out << tail;
    return path.string();
  }
  // oaprof with `args` in an address space of kAddressSpace.
  static CommandResult limited(const std::string& args) {
    return testing::run(fmt::format("prlimit --as={} {} {}", kAddressSpace, OAPROF_BIN, args));
  }
  std::string out(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

TEST_F(HostileInputTest, MergeOfRowsOfCommasEndsWithTheRowNamed) {
  const std::string in =
      write("commas.csv", "launch,kernel,gpu_time_ns,host,rank,flags\n", ",,,,,\n", "");
  const CommandResult r = limited(fmt::format("merge -q {} -o {}", in, out("all.csv")));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr(in + ": line 2: row 1 is empty (only separators)"));
  const std::string one_line = write("line.csv", "", ",", "\n");
  const CommandResult l = limited(fmt::format("merge -q {} -o {}", one_line, out("all.csv")));
  EXPECT_EQ(l.status, 2) << l.output;
  EXPECT_THAT(l.output, HasSubstr(one_line + ": line 1: more than 1024 cells"));
}

TEST_F(HostileInputTest, MergeAndReportOfEmptyRowsEndWithTheRowNamed) {
  const std::string in =
      write("empty.json", R"({"schema_version":2,"device":"d","launches":[{})", ",{}", "]}");
  for (const std::string& args : {fmt::format("merge -q {} -o {}", in, out("all.csv")),
                                  fmt::format("report {} -o {}", in, out("r.html"))}) {
    const CommandResult r = limited(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(in + ": launch 0 is empty ({})")) << args;
  }
}

TEST_F(HostileInputTest, ReportOfAnArrayOfEmptyObjectsIsRefusedAtItsFirstByte) {
  const std::string in = write("array.json", "[{}", ",{}", "]");
  const CommandResult r = limited(fmt::format("report {} -o {}", in, out("r.html")));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr(in + ": is not a JSON object"));
  const CommandResult m = limited(fmt::format("merge -q {} -o {}", in, out("all.csv")));
  EXPECT_EQ(m.status, 2) << m.output;
  EXPECT_THAT(m.output, HasSubstr(in + ": line 1: more than 1024 cells"));
}

}  // namespace
}  // namespace oaprof::security
