// Intentionally empty: the executable oaprof_test_pch exists to own the test binaries' precompiled
// header (tests/CMakeLists.txt), built once with the flags of a test executable and reused by all.
