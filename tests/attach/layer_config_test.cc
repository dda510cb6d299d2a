#include "attach/layer_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace oaprof::attach {
namespace {

using ::testing::HasSubstr;
using Env = std::map<std::string, std::string, std::less<>>;

// from_env over a map: the tests never touch the process environment.
LayerConfig read(const Env& env) {
  return LayerConfig::from_env([&env](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
}

Env as_map(const LayerConfig& c) {
  Env env;
  for (const auto& [k, v] : c.to_env()) env.emplace(k, v);
  return env;
}

// One value other than its default in every field.
LayerConfig fully_set() {
  LayerConfig c;
  c.min_window = std::chrono::milliseconds(120);
  c.replay = {ReplayConfig::Mode::kFixed, 4};
  c.attribution = Attribution::kSampled;
  c.socket = "@oaprof-0123";
  c.kernel_name = "regex:mad_.*";
  c.launch_skip = 2;
  c.launch_count = 5;
  c.work_hints = true;
  c.channel = false;
  c.spin = std::chrono::microseconds(0);
  c.quiet = true;
  c.ze_host_wait = std::chrono::milliseconds(300);
  return c;
}

TEST(LayerConfigTest, AFullySetConfigComesBackWhole) {
  const LayerConfig c = fully_set();
  const LayerConfig back = read(as_map(c));
  EXPECT_TRUE(back.errors.empty()) << back.errors.front();
  EXPECT_EQ(back, c);
}

TEST(LayerConfigTest, AutoReplayComesBackWithItsWindow) {
  LayerConfig c;
  c.replay.mode = ReplayConfig::Mode::kAuto;
  c.min_window = std::chrono::milliseconds(40);
  EXPECT_EQ(read(as_map(c)), c);
}

TEST(LayerConfigTest, DefaultsComeBackAsDefaults) {
  EXPECT_EQ(read(as_map(LayerConfig{})), LayerConfig{});
  EXPECT_EQ(read({}), LayerConfig{});
}

// Programs, scripts and docs name these variables: they must not change.
TEST(LayerConfigTest, WritesTheDocumentedNames) {
  const Env env = as_map(fully_set());
  EXPECT_EQ(env.at("OAPROF_MIN_TIME_MS"), "120");
  EXPECT_EQ(env.at("OAPROF_REPLAY"), "4");
  EXPECT_EQ(env.at("OAPROF_ATTRIBUTION"), "sampled");
  EXPECT_EQ(env.at("OAPROF_SOCKET"), "@oaprof-0123");
  EXPECT_EQ(env.at("OAPROF_KERNEL_NAME"), "regex:mad_.*");
  EXPECT_EQ(env.at("OAPROF_LAUNCH_SKIP"), "2");
  EXPECT_EQ(env.at("OAPROF_LAUNCH_COUNT"), "5");
  EXPECT_EQ(env.at("OAPROF_WORK_HINTS"), "1");
  EXPECT_EQ(env.at("OAPROF_CHANNEL"), "off");
  EXPECT_EQ(env.at("OAPROF_SPIN_US"), "0");
  EXPECT_EQ(env.at("OAPROF_LAYER_QUIET"), "1");
  EXPECT_EQ(env.at("OAPROF_ZE_HOST_WAIT_MS"), "300");
  EXPECT_EQ(env.size(), 12u);
}

// Left out at their defaults, so the user's own OAPROF_CHANNEL (say) still reaches the layer;
// the run's window, replay, attribution and work hints are always written, so inherited ones
// cannot win.
TEST(LayerConfigTest, DefaultsLeaveTheUsersKnobsAlone) {
  const Env env = as_map(LayerConfig{});
  EXPECT_EQ(env, (Env{{"OAPROF_ATTRIBUTION", "bracketed"},
                      {"OAPROF_MIN_TIME_MS", "50"},
                      {"OAPROF_REPLAY", "off"},
                      {"OAPROF_WORK_HINTS", "0"}}));
}

// Issue 35: OAPROF_WORK_HINTS is 1 (on), or 0 or empty (off); anything else is off with a message
// naming it, and measuring goes on (the hints only feed the simulator).
TEST(LayerConfigTest, WorkHintsAreOnForOneAndOffForZeroOrEmpty) {
  const LayerConfig on = read({{"OAPROF_WORK_HINTS", "1"}});
  EXPECT_TRUE(on.work_hints);
  EXPECT_TRUE(on.errors.empty());
  for (const char* off : {"0", ""}) {
    const LayerConfig c = read({{"OAPROF_WORK_HINTS", off}});
    EXPECT_FALSE(c.work_hints) << "'" << off << "'";
    EXPECT_TRUE(c.errors.empty()) << "'" << off << "'";
  }
}

// On a real device oaprof writes work_hints off; its variables go over the program's inherited
// environment (run/profile_run.cc: program_spec), so a user's OAPROF_WORK_HINTS=1 cannot make
// the layer name kernels to the privileged side there.
TEST(LayerConfigTest, AnInheritedWorkHintsIsOverriddenOnARealDevice) {
  LayerConfig real_device;
  real_device.socket = "@oaprof-0123";
  Env env{{"OAPROF_WORK_HINTS", "1"}};  // the user's own
  for (const auto& [k, v] : real_device.to_env()) env[k] = v;
  EXPECT_FALSE(read(env).work_hints);
}

// Every value a user or a script could get wrong: the default, a message naming the variable,
// and measuring goes on.
TEST(LayerConfigTest, AMalformedValueGivesTheDefaultAndAnError) {
  const std::map<std::string, std::vector<std::string>> bad{
      {"OAPROF_MIN_TIME_MS", {"soon", "-1", "2.5", "99999999999999999999", "9000000000001"}},
      {"OAPROF_ATTRIBUTION", {"sample", "SAMPLED"}},
      {"OAPROF_CHANNEL", {"of", "0"}},
      {"OAPROF_SPIN_US", {"fast", "-5", "10001", "99999999999999999999"}},
      {"OAPROF_REPLAY", {"often", "-3", "99999999999999999999"}},
      {"OAPROF_WORK_HINTS", {"yes", "true", "2", " 1", "01"}},
      {"OAPROF_ZE_HOST_WAIT_MS", {"soon", "0", "-1", "1.5", "600001", "99999999999999999999"}},
  };
  for (const auto& [var, values] : bad) {
    for (const std::string& value : values) {
      LayerConfig c;
      EXPECT_NO_THROW(c = read({{var, value}}));
      ASSERT_EQ(c.errors.size(), 1u) << var << "=" << value;
      EXPECT_THAT(c.errors[0], HasSubstr(var + "='" + value + "'"));
      c.errors.clear();
      EXPECT_EQ(c, LayerConfig{}) << var << "=" << value;
    }
  }
}

// A selection that cannot be honoured stops measuring (rows of the wrong launches would be worse
// than none), as the layer always did; the other values stay usable.
TEST(LayerConfigTest, AMalformedSelectionTurnsMeasuringOff) {
  const std::map<std::string, std::vector<std::string>> bad{
      {"OAPROF_LAUNCH_SKIP", {"", "x", "-1", "3x", "99999999999999999999"}},
      {"OAPROF_LAUNCH_COUNT", {"", "-2", "1e3", "18446744073709551616"}},
      {"OAPROF_KERNEL_NAME", {"regex:(", "regex:[a-"}},
  };
  for (const auto& [var, values] : bad) {
    for (const std::string& value : values) {
      LayerConfig c;
      EXPECT_NO_THROW(c = read({{var, value}, {"OAPROF_SOCKET", "@s"}}));
      EXPECT_FALSE(c.measure) << var << "=" << value;
      ASSERT_EQ(c.errors.size(), 1u) << var << "=" << value;
      EXPECT_THAT(c.errors[0], HasSubstr("running unprofiled"));
      EXPECT_EQ(c.socket, "@s");
      EXPECT_EQ(c.kernel_name, "");
      EXPECT_EQ(c.launch_skip, 0u);
      EXPECT_EQ(c.launch_count, std::nullopt);
    }
  }
  EXPECT_THAT(read({{"OAPROF_LAUNCH_SKIP", "-1"}}).errors[0],
              HasSubstr("OAPROF_LAUNCH_SKIP='-1' is not a whole number"));
}

TEST(LayerConfigTest, TheLargestCountsAreAccepted) {
  const LayerConfig c = read({{"OAPROF_LAUNCH_COUNT", "18446744073709551615"},
                              {"OAPROF_SPIN_US", "10000"},
                              {"OAPROF_MIN_TIME_MS", "9000000000000"},
                              {"OAPROF_ZE_HOST_WAIT_MS", "600000"}});
  EXPECT_TRUE(c.errors.empty());
  EXPECT_EQ(c.ze_host_wait, kMaxZeHostWait);
  EXPECT_EQ(c.launch_count, UINT64_MAX);
  EXPECT_EQ(c.spin, std::chrono::microseconds(10000));
  EXPECT_EQ(c.min_window, kMaxMinWindow);
}

// Auto replay needs a window of 1 ms to an hour; outside it, kernels run once, as before.
TEST(LayerConfigTest, AutoReplayWithoutAUsableWindowRunsKernelsOnce) {
  for (const char* ms : {"soon", "0", "-1", "3600001"}) {
    const LayerConfig c = read({{"OAPROF_REPLAY", "auto"}, {"OAPROF_MIN_TIME_MS", ms}});
    EXPECT_EQ(c.replay.mode, ReplayConfig::Mode::kOff) << ms;
    ASSERT_EQ(c.errors.size(), 1u) << ms;
    EXPECT_THAT(c.errors[0], HasSubstr("OAPROF_MIN_TIME_MS"));
    EXPECT_THAT(c.errors[0], HasSubstr("no replay"));
    EXPECT_TRUE(c.measure);
  }
  const LayerConfig c = read({{"OAPROF_REPLAY", "auto"}, {"OAPROF_MIN_TIME_MS", "3600000"}});
  EXPECT_EQ(c.replay.mode, ReplayConfig::Mode::kAuto);
  EXPECT_EQ(c.min_window, std::chrono::hours(1));
}

// What the layer always did with these: an empty value is an unset one; any OAPROF_LAYER_QUIET
// is quiet; fixed replay ignores a bad window but still reports it.
TEST(LayerConfigTest, KeepsTheLayersOldReadings) {
  const LayerConfig c = read({{"OAPROF_SOCKET", ""},
                              {"OAPROF_MIN_TIME_MS", ""},
                              {"OAPROF_SPIN_US", ""},
                              {"OAPROF_ATTRIBUTION", ""},
                              {"OAPROF_CHANNEL", ""},
                              {"OAPROF_LAYER_QUIET", "0"}});
  EXPECT_TRUE(c.errors.empty());
  EXPECT_EQ(c.socket, std::nullopt);
  EXPECT_EQ(c.min_window, kDefaultMinWindow);
  EXPECT_TRUE(c.channel);
  EXPECT_TRUE(c.quiet);
  const LayerConfig fixed = read({{"OAPROF_REPLAY", "3"}, {"OAPROF_MIN_TIME_MS", "soon"}});
  EXPECT_EQ(fixed.replay, (ReplayConfig{ReplayConfig::Mode::kFixed, 3}));
  EXPECT_EQ(fixed.errors.size(), 1u);
  EXPECT_EQ(read({{"OAPROF_REPLAY", "1"}}).replay.mode, ReplayConfig::Mode::kOff);
}

TEST(LayerConfigTest, AGetterThatThrowsTurnsMeasuringOffAndNeverThrows) {
  LayerConfig c;
  EXPECT_NO_THROW(c = LayerConfig::from_env([](std::string_view) -> std::optional<std::string> {
                    throw std::runtime_error("no environment");
                  }));
  EXPECT_FALSE(c.measure);
  EXPECT_EQ(c.errors.size(), 1u);
}

}  // namespace
}  // namespace oaprof::attach
