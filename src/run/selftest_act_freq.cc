#include "run/selftest_act_freq.h"

#include <stdlib.h>

#include <fstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace oaprof::run::selftest {
namespace fs = std::filesystem;
namespace {

// Where each driver reports GT 0's actual frequency, the first readable one wins.
std::vector<fs::path> act_freq_files(oa::KernelDriver driver) {
  if (driver == oa::KernelDriver::kXe) return {"device/tile0/gt0/freq0/act_freq"};
  return {"gt/gt0/rps_act_freq_mhz", "gt_act_freq_mhz"};
}

std::optional<double> read_mhz(const fs::path& path) {
  std::ifstream in(path);
  long long mhz = -1;
  if (!(in >> mhz) || mhz < 0) return std::nullopt;
  return static_cast<double>(mhz);
}

}  // namespace

ActFreq read_act_freq(const fs::path& card, oa::KernelDriver driver) {
  for (const fs::path& file : act_freq_files(driver)) {
    if (const auto mhz = read_mhz(card / file)) return {mhz, (card / file).string()};
  }
  return {std::nullopt, fmt::format("no readable {} under {}",
                                    act_freq_files(driver).front().string(), card.string())};
}

SimCardTree::SimCardTree(oa::KernelDriver driver, double mhz) {
  std::string pattern = (fs::temp_directory_path() / "oaprof-sim-card-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot create the simulator's sysfs tree under " +
                             fs::temp_directory_path().string());
  }
  root_ = pattern;
  card_ = root_ / "card0";
  const fs::path file = card_ / act_freq_files(driver).front();
  fs::create_directories(file.parent_path());
  std::ofstream(file) << fmt::format("{:.0f}\n", mhz);
}

SimCardTree::~SimCardTree() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

}  // namespace oaprof::run::selftest
