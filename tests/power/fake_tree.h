// A temporary directory the power tests fill with fake sysfs and /dev files; removed afterwards.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace oaprof::power::test_support {

class FakeTree {
 public:
  FakeTree() {
    static std::atomic<int> serial{0};
    root_ = std::filesystem::temp_directory_path() /
            ("oaprof-power-test-" + std::to_string(::getpid()) + "-" +
             std::to_string(serial.fetch_add(1)));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~FakeTree() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  FakeTree(const FakeTree&) = delete;
  FakeTree& operator=(const FakeTree&) = delete;

  const std::filesystem::path& root() const { return root_; }

  void write(const std::string& rel, const std::string& text) const {
    const std::filesystem::path file = root_ / rel;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::trunc) << text << "\n";
  }

  // Writes a 64-bit little-endian value at byte offset `offset` (an MSR of /dev/cpu/N/msr).
  void write_u64_at(const std::string& rel, std::uint64_t offset, std::uint64_t value) const {
    const std::filesystem::path file = root_ / rel;
    std::filesystem::create_directories(file.parent_path());
    if (!std::filesystem::exists(file)) std::ofstream(file, std::ios::binary);
    std::fstream f(file, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(reinterpret_cast<const char*>(&value), sizeof(value));
  }

 private:
  std::filesystem::path root_;
};

// A powercap class directory (…/class/powercap) inside a FakeTree.
class FakePowercap {
 public:
  explicit FakePowercap(const FakeTree& tree, std::string dir = "class/powercap")
      : tree_(tree), dir_(std::move(dir)) {
    std::filesystem::create_directories(tree_.root() / dir_);
  }
  void zone(const std::string& id, const std::string& name, std::uint64_t energy,
            std::uint64_t range = 262143328850) const {
    tree_.write(dir_ + "/" + id + "/name", name);
    tree_.write(dir_ + "/" + id + "/max_energy_range_uj", std::to_string(range));
    set(id, energy);
  }
  void set(const std::string& id, std::uint64_t energy) const {
    tree_.write(dir_ + "/" + id + "/energy_uj", std::to_string(energy));
  }
  std::filesystem::path root() const { return tree_.root() / dir_; }

 private:
  const FakeTree& tree_;
  std::string dir_;
};

}  // namespace oaprof::power::test_support
