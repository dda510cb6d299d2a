// Where the kernel_runner that ships with this oaprof is: beside the oaprof binary (both go to the
// same directory, in the build tree and installed: tools/CMakeLists.txt). The selftest starts it,
// as the invoking user, to put known work on a real GPU.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace oaprof::run {

// kernel_runner in `bin_dir` if it is there as an executable file; nullopt otherwise, with
// `*looked` saying where it looked and what it found there (for a skip's reason).
std::optional<std::filesystem::path> kernel_runner_in(const std::filesystem::path& bin_dir,
                                                      std::string* looked);

// kernel_runner beside the running binary (/proc/self/exe's directory).
std::optional<std::filesystem::path> installed_kernel_runner(std::string* looked);

}  // namespace oaprof::run
