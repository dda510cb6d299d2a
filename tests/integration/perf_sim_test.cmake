# --access perf end to end on the simulated i915 (included from this folder's CMakeLists.txt).
add_executable(perf_sim_test ${CMAKE_CURRENT_LIST_DIR}/perf_sim_test.cc)
target_link_libraries(perf_sim_test PRIVATE GTest::gtest GTest::gmock GTest::gtest_main fmt::fmt)
target_include_directories(perf_sim_test PRIVATE ${PROJECT_SOURCE_DIR})
target_compile_definitions(perf_sim_test PRIVATE
  OAPROF_BIN="$<TARGET_FILE:oaprof>"
  KERNEL_RUNNER_BIN="$<TARGET_FILE:kernel_runner>"
  OAPROF_IGT_METRICS_DIR="${PROJECT_SOURCE_DIR}/../shared/metrics/igt"
  OAPROF_IGT_MTL_METRICS_DIR="${PROJECT_SOURCE_DIR}/../shared/metrics/igt-mtl"
  OAPROF_IGT_XE_METRICS_DIR="${PROJECT_SOURCE_DIR}/../shared/metrics/igt-xe"
  OAPROF_IGT_DG2_METRICS_DIR="${PROJECT_SOURCE_DIR}/../shared/metrics/igt-dg2")
add_dependencies(perf_sim_test oaprof kernel_runner oaprof_layer)
gtest_discover_tests(perf_sim_test
  PROPERTIES LABELS integration
  ENVIRONMENT "POCL_CACHE_DIR=${PROJECT_BINARY_DIR}/pocl-cache"
  DISCOVERY_TIMEOUT 60)
