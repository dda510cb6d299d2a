# ctest's fixture for package_test: makes the Debian package from the build tree once (CPack,
# deploy/debian), into OUT, for every test of package_test to unpack. Without dpkg-deb it makes
# nothing, and the tests skip, saying why.
#   cmake -DCPACK=... -DCONFIG=.../CPackConfig.cmake -DOUT=dir -P package_build.cmake
find_program(DPKG_DEB dpkg-deb)
if(NOT DPKG_DEB)
  message(STATUS "no dpkg-deb (Debian's dpkg): no package is made, and package_test skips")
  return()
endif()
file(REMOVE_RECURSE "${OUT}")
execute_process(COMMAND "${CPACK}" -G DEB --config "${CONFIG}" -B "${OUT}"
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cpack could not make the Debian package (exit ${status}):\n${output}")
endif()
file(REMOVE_RECURSE "${OUT}/_CPack_Packages")  # its staging tree; the package is what is tested
