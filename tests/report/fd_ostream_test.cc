#include "report/fd_ostream.h"

#include <fcntl.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/reporter.h"

namespace oaprof::report {
namespace {

TEST(FdOstreamTest, WritesSeeksAndClosesItsDescriptor) {
  const auto path =
      std::filesystem::temp_directory_path() / ("oaprof-fdostream-" + std::to_string(::getpid()));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  {
    FdOstream out(fd);
    out << "head,";
    const auto tail = out.tellp();
    EXPECT_EQ(tail, std::streampos(5));
    out << "TAIL";
    out.seekp(tail);  // as the JSON reporter rewrites its closing bracket
    out << "row,TAIL";
    flush_or_throw(out, "test");
  }
  EXPECT_EQ(::fcntl(fd, F_GETFD), -1) << "the stream owns and closes its descriptor";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "head,row,TAIL");
  std::filesystem::remove(path);
}

TEST(FdOstreamTest, APipeIsNotSeekableAndAFullDiskIsAnError) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  {
    FdOstream out(p[1]);
    out << "x";
    EXPECT_EQ(out.tellp(), std::streampos(-1)) << "a pipe: unseekable, as for any stream";
  }
  char c = 0;
  EXPECT_EQ(::read(p[0], &c, 1), 1);
  EXPECT_EQ(c, 'x');
  ::close(p[0]);
  const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (full < 0) GTEST_SKIP() << "no /dev/full here";
  FdOstream out(full);
  out << "a row\n";
  try {
    flush_or_throw(out, "CSV");
    ADD_FAILURE() << "a write to a full disk passed";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("writing the CSV file failed: No space left"));
  }
}

}  // namespace
}  // namespace oaprof::report
