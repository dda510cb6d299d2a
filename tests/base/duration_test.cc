// The one duration syntax of every tool (base/duration.h).
#include "base/duration.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"

namespace oaprof::base {
namespace {

using std::chrono::nanoseconds;
using ::testing::HasSubstr;

TEST(DurationTest, ParsesUnitsAndABareNumberAsMilliseconds) {
  EXPECT_EQ(parse_duration("250ms"), nanoseconds(250'000'000));
  EXPECT_EQ(parse_duration("2s"), nanoseconds(2'000'000'000));
  EXPECT_EQ(parse_duration("1.5s"), nanoseconds(1'500'000'000));
  EXPECT_EQ(parse_duration("500us"), nanoseconds(500'000));
  EXPECT_EQ(parse_duration("20ns"), nanoseconds(20));
  EXPECT_EQ(parse_duration("7"), nanoseconds(7'000'000));
  EXPECT_EQ(parse_duration("0"), nanoseconds(0));
}

TEST(DurationTest, RefusesGarbageAsAUsageError) {
  for (const char* bad : {"fast", "-1s", "1h", "1e30s", "nan", "inf", "", "ms", "1 s"}) {
    EXPECT_THROW(parse_duration(bad), UsageError) << bad;
  }
}

TEST(DurationTest, NamesTheOptionAndTheSyntax) {
  try {
    parse_duration("--interval", "soon");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--interval: 'soon' is not a duration"));
    EXPECT_THAT(e.what(), HasSubstr("250ms"));
  }
}

TEST(ErrorsTest, EachTypeMapsToItsExitStatus) {
  EXPECT_EQ(exit_status_for(UsageError("x")), kExitUsage);
  EXPECT_EQ(exit_status_for(SetupError("x")), kExitSetup);
  EXPECT_EQ(exit_status_for(OutputError("x")), kExitOutput);
  EXPECT_EQ(exit_status_for(std::invalid_argument("x")), kExitUsage);
  EXPECT_EQ(exit_status_for(std::runtime_error("x")), kExitSetup);
}

TEST(ErrorsTest, RunCommandReturnsTheBodysStatusOrTheErrorsAndSaysWhy) {
  EXPECT_EQ(run_command("tool", [] { return 7; }), 7);
  ::testing::internal::CaptureStderr();
  const int status =
      run_command("tool", []() -> int { throw OutputError("cannot write out.csv"); });
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, kExitOutput);
  EXPECT_EQ(said, "tool: cannot write out.csv\n");
}

}  // namespace
}  // namespace oaprof::base
