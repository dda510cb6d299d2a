// Reads IGT's metric files from ../shared/metrics/igt beside the checkout (test data, never
// copied into the project) for the tests that check oaprof against every one of them. Meteor
// Lake's files sit apart in ../shared/metrics/igt-mtl, and DG2's (IGT's own cut copies: RenderBasic
// and TestOa only) in ../shared/metrics/igt-dg2, so that the tests reading every file of igt/
// keep their scope; igt_file_for() looks in all three.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace oaprof::oa::testing {

inline std::filesystem::path igt_dir() { return OAPROF_IGT_METRICS_DIR; }
inline std::filesystem::path igt_mtl_dir() { return OAPROF_IGT_MTL_METRICS_DIR; }
inline std::filesystem::path igt_dg2_dir() { return OAPROF_IGT_DG2_METRICS_DIR; }

// oa-<name>.xml from igt/, igt-mtl/ or igt-dg2/; empty when none has it.
inline std::filesystem::path igt_file_for(std::string_view name) {
  const std::string file = "oa-" + std::string(name) + ".xml";
  for (const auto& dir : {igt_dir(), igt_mtl_dir(), igt_dg2_dir()}) {
    if (std::filesystem::is_regular_file(dir / file)) return dir / file;
  }
  return {};
}

inline std::vector<std::filesystem::path> igt_files() {
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::is_directory(igt_dir())) return files;
  for (const auto& entry : std::filesystem::directory_iterator(igt_dir())) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("oa-") && name.ends_with(".xml")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace oaprof::oa::testing
