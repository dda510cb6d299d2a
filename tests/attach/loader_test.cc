#include "attach/loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace oaprof::attach {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace std::string_view_literals;

TEST(LoaderTest, VersionComparison) {
  EXPECT_TRUE(version_at_least("2.3.1", 2, 3));
  EXPECT_TRUE(version_at_least("2.3", 2, 3));
  EXPECT_TRUE(version_at_least("3.0.6", 2, 3));
  EXPECT_FALSE(version_at_least("2.2.14", 2, 3));
  EXPECT_FALSE(version_at_least("1.9", 2, 3));
  EXPECT_FALSE(version_at_least("", 2, 3));
}

// As glibc 2.36's `ldconfig -p` prints it (elf/cache.c, print_entry).
constexpr const char* kListing =
    "823 libs found in cache `/etc/ld.so.cache'\n"
    "\tlibOpenCL.so.1 (libc6,x86-64, hwcap: \"x86-64-v3\") => /lib/hw/libOpenCL.so.1\n"
    "\tlibOpenCL.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libOpenCL.so.1\n"
    "\tlibOpenCL.so.1 (libc6) => /lib/i386-linux-gnu/libOpenCL.so.1\n"
    "\tlibOpenCL.so.1 (libc6,x32) => /libx32/libOpenCL.so.1\n"
    "\tlibOpenCL.so (libc6,x86-64) => /lib/x86_64-linux-gnu/libOpenCL.so\n"
    "\tlibOpenCL.so.1.0.0 (libc6,x86-64) => relative/libOpenCL.so.1\n";

TEST(LoaderTest, CandidatesComeInTheDynamicLinkersOrder) {
#if defined(__x86_64__)
  EXPECT_THAT(library_candidates("libOpenCL.so.1", "/opt/a:;relative:/opt/b;/opt/c", kListing),
              ElementsAre("/opt/a/libOpenCL.so.1", "/opt/b/libOpenCL.so.1", "/opt/c/libOpenCL.so.1",
                          "/lib/hw/libOpenCL.so.1", "/lib/x86_64-linux-gnu/libOpenCL.so.1",
                          "/lib/libOpenCL.so.1", "/usr/lib/libOpenCL.so.1"));
#else
  GTEST_SKIP() << "the listing above is an x86-64 machine's";
#endif
}

TEST(LoaderTest, APathIsTheOnlyCandidate) {
  EXPECT_THAT(library_candidates("/opt/x/libOpenCL.so.1", "/opt/a", kListing),
              ElementsAre("/opt/x/libOpenCL.so.1"));
}

TEST(LoaderTest, TheLoaderIsToldByItsBytes) {
  const LoaderInfo icd = identify_loader("/l/libOpenCL.so.1", "..OCL Icd free software..");
  EXPECT_TRUE(icd.found);
  EXPECT_EQ(icd.name, "ocl-icd");
  EXPECT_FALSE(icd.supports_layers);
  EXPECT_THAT(icd.note, HasSubstr("ocl-icd at /l/libOpenCL.so.1 does not know OPENCL_LAYERS"));
  const LoaderInfo khronos = identify_loader("/k", "Khronos\0OPENCL_LAYERS"sv);
  EXPECT_EQ(khronos.name, "Khronos ICD loader");
  EXPECT_TRUE(khronos.supports_layers);
  EXPECT_EQ(identify_loader("/u", "").name, "unknown ICD loader");
}

TEST(LoaderTest, AMissingLoaderIsReportedNotFatal) {
  const LoaderInfo info = no_loader("libno-such-opencl.so.9");
  EXPECT_FALSE(info.found);
  EXPECT_FALSE(info.supports_layers);
  EXPECT_THAT(info.note, HasSubstr("libno-such-opencl.so.9"));
}

}  // namespace
}  // namespace oaprof::attach
