// Test hooks that point root at files (session/root_paths.h): fixed under sudo, free otherwise.
#include "session/root_paths.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace oaprof::session {
namespace {

using ::testing::HasSubstr;

const Credentials kUser{65534, 65534, ""};

std::string refusal(std::string_view option, std::string_view value, std::string_view fixed,
                    std::string_view prefix = {}) {
  const RootPathOption o[] = {{option, value, fixed, prefix}};
  try {
    require_root_paths_under_sudo(o, kUser);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(RootPathsTest, UnderSudoOnlyTheDefaultOrASystemPathPasses) {
  EXPECT_EQ(refusal("--sysfs-root", "/sys", "/sys"), "accepted");
  EXPECT_THAT(refusal("--sysfs-root", "/home/u/fake", "/sys"),
              HasSubstr("--sysfs-root /home/u/fake: under sudo this option keeps its default "
                        "(/sys), because root would open what it names on behalf of uid 65534"));
  EXPECT_THAT(refusal("--sysfs-root", "/sys/../home/u", "/sys"), HasSubstr("keeps its default"));
  EXPECT_EQ(refusal("--render-node", "auto", "auto", "/dev/dri/renderD"), "accepted");
  EXPECT_EQ(refusal("--render-node", "/dev/dri/renderD129", "auto", "/dev/dri/renderD"),
            "accepted");
  for (const char* bad : {"/dev/dri/renderD", "/dev/dri/renderD1/../../../etc/shadow",
                          "/dev/dri/renderD1//x", "/tmp/node", "dev/dri/renderD128"}) {
    EXPECT_THAT(refusal("--render-node", bad, "auto", "/dev/dri/renderD"),
                HasSubstr("or /dev/dri/renderDN"))
        << bad;
  }
  // Without sudo, or as root on its own, the hooks are free.
  const RootPathOption free[] = {{"--sysfs-root", "/home/u/fake", "/sys"}};
  EXPECT_NO_THROW(require_root_paths_under_sudo(free, std::nullopt));
}

TEST(RootPathsTest, UnderSudoTheSimulatorKeepsItsRegistersInMemory) {
  EXPECT_THROW(
      require_no_register_file_under_sudo(gpu::DeviceSpec::parse("sim:/etc/ld.so.preload"), kUser),
      std::invalid_argument);
  EXPECT_NO_THROW(require_no_register_file_under_sudo(gpu::DeviceSpec::parse("sim"), kUser));
  EXPECT_NO_THROW(
      require_no_register_file_under_sudo(gpu::DeviceSpec::parse("0000:00:02.0"), kUser));
  EXPECT_NO_THROW(
      require_no_register_file_under_sudo(gpu::DeviceSpec::parse("sim:/tmp/regs"), std::nullopt));
}

}  // namespace
}  // namespace oaprof::session
