# Included by CMakeLists.txt where OAPROF_LLD is ON: links with LLVM's lld where the compiler takes
# -fuse-ld=lld (GCC since 9, clang), else with the default linker. GNU ld took 5.7 s to link
# selftest_test in the sanitizer tree, lld 1.9 s, and scripts/test links every test binary of
# three trees from scratch. Included before the hardening checks, so that they ask lld whether
# it takes -z relro and -z now.
include(CheckLinkerFlag)
check_linker_flag(CXX -fuse-ld=lld OAPROF_LINKER_TAKES_LLD)
if(OAPROF_LINKER_TAKES_LLD)
  add_link_options(-fuse-ld=lld)
else()
  message(STATUS "lld not found: linking with the compiler's default linker (slower)")
endif()
