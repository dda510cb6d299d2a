#include "run/opencl_loader.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace oaprof::run {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The file the dynamic linker gives this (unprivileged) test for `library`, or "".
std::string linked_path(const char* library) {
  void* h = ::dlopen(library, RTLD_LAZY | RTLD_LOCAL);
  if (h == nullptr) return {};
  link_map* map = nullptr;
  std::string path;
  if (::dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr) path = map->l_name;
  ::dlclose(h);
  return path;
}

TEST(OpenClLoaderTest, TheInstalledLoaderIsTheFileTheDynamicLinkerLoads) {
  const std::string linked = linked_path("libOpenCL.so.1");
  if (linked.empty()) GTEST_SKIP() << "no libOpenCL.so.1 here";
  const attach::LoaderInfo info = find_opencl_loader("libOpenCL.so.1", "", std::nullopt);
  ASSERT_TRUE(info.found) << info.note;
  EXPECT_THAT(info.note, HasSubstr(" at " + linked + " ")) << info.note;
}

TEST(OpenClLoaderTest, ALoaderOnTheProgramsLibraryPathIsReadNeverRun) {
  const fs::path marker =
      fs::temp_directory_path() / ("oaprof-loader-ran-" + std::to_string(::getpid()));
  fs::remove(marker);
  ::setenv("OAPROF_TEST_LOADER_MARKER", marker.c_str(), 1);
  const std::string dir = OAPROF_FAKE_LOADER_DIR;
  const attach::LoaderInfo info =
      find_opencl_loader("libOpenCL.so.1", "/nonexistent:" + dir, std::nullopt);
  ::unsetenv("OAPROF_TEST_LOADER_MARKER");
  EXPECT_TRUE(info.found);
  EXPECT_EQ(info.name, "ocl-icd");
  EXPECT_TRUE(info.supports_layers);
  EXPECT_THAT(info.note, HasSubstr(dir + "/libOpenCL.so.1"));
  EXPECT_FALSE(fs::exists(marker)) << "the loader's constructor ran in oaprof";
  fs::remove(marker);
}

// Under sudo the candidates are read as the user: a loader in a directory only root may enter is
// not the program's (its linker could not open it), and root does not say it is there.
TEST(OpenClLoaderTest, UnderSudoALoaderOnlyRootCanReadIsNotTheProgramsLoader) {
  if (::geteuid() != 0) GTEST_SKIP() << "reading as another user needs root";
  const fs::path closed =
      fs::temp_directory_path() / ("oaprof-closed-loader-" + std::to_string(::getpid()));
  fs::create_directories(closed);
  fs::permissions(closed, fs::perms::owner_all);
  fs::copy_file(fs::path(OAPROF_FAKE_LOADER_DIR) / "libOpenCL.so.1", closed / "libOpenCL.so.1");
  const session::Credentials nobody{65534, 65534, ""};
  const attach::LoaderInfo as_user = find_opencl_loader("libOpenCL.so.1", closed, nobody);
  const attach::LoaderInfo as_root = find_opencl_loader("libOpenCL.so.1", closed, std::nullopt);
  fs::remove_all(closed);
  EXPECT_THAT(as_root.note, HasSubstr(closed.string()));
  EXPECT_THAT(as_user.note, ::testing::Not(HasSubstr(closed.string())));
}

TEST(OpenClLoaderTest, NoReadableFileIsAFindingNotAnError) {
  const attach::LoaderInfo info =
      find_opencl_loader("libno-such-opencl.so.9", "/nonexistent", std::nullopt);
  EXPECT_FALSE(info.found);
  EXPECT_THAT(info.note, HasSubstr("libno-such-opencl.so.9"));
}

TEST(OpenClLoaderTest, TheLinkersCacheIsListed) {
  const std::string listing = ldconfig_listing();
  if (listing.empty()) GTEST_SKIP() << "no ldconfig here";
  EXPECT_THAT(listing, HasSubstr("libc.so.6 ("));
}

}  // namespace
}  // namespace oaprof::run
