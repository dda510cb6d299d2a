#include "mmio/forcewake.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mmio/registers.h"
#include "mmio/sim_gpu.h"
#include "tests/mmio/signalled_child.h"

namespace oaprof::mmio {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// What Forcewake::acquire throws; a failure of the test when it takes forcewake instead.
std::string acquire_failure(Mmio& mmio, const ForcewakeOptions& options) {
  try {
    Forcewake::acquire(mmio, options);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "forcewake was taken";
  return "";
}

class ForcewakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / fs::path("oaprof-fw-" + std::to_string(getpid()));
    fs::create_directories(root_ / "dri/0");
  }
  void TearDown() override { fs::remove_all(root_); }

  int open_fds() {
    int n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
    return n;
  }

  fs::path root_;
  ManualClock clock_;
  SimGpu sim_{SimConfig{}, clock_};
};

TEST_F(ForcewakeTest, HoldsTheDebugfsFileOpenUntilReleased) {
  std::ofstream(root_ / "dri/0/i915_forcewake_user").put('\n');
  ForcewakeOptions opt;
  opt.debugfs_root = root_.string();
  const int before = open_fds();
  auto fw = Forcewake::acquire(sim_, opt);
  EXPECT_THAT(fw->method(), HasSubstr("dri/0/i915_forcewake_user"));
  EXPECT_EQ(open_fds(), before + 1);
  EXPECT_EQ(sim_.read32(reg::kForcewakeRender), 0u);  // the registers stay untouched
  fw.reset();
  EXPECT_EQ(open_fds(), before);
}

TEST_F(ForcewakeTest, DebugfsIsTheDevicesOwnMinorAndNoneWithoutACard) {
  std::ofstream(root_ / "dri/0/i915_forcewake_user").put('\n');  // another GPU's
  fs::create_directories(root_ / "dri/1");
  std::ofstream(root_ / "dri/1/i915_forcewake_user").put('\n');
  ForcewakeOptions opt;
  opt.debugfs_root = root_.string();
  opt.dri_minor = 1;
  EXPECT_THAT(Forcewake::acquire(sim_, opt)->method(), HasSubstr("dri/1/i915_forcewake_user"));
  // No DRM card for the device: another GPU's debugfs file must not be taken for it.
  opt.dri_minor = std::nullopt;
  EXPECT_EQ(Forcewake::acquire(sim_, opt)->method(), "registers");
  opt.mode = ForcewakeMode::kDebugfs;
  const std::string error = acquire_failure(sim_, opt);
  EXPECT_THAT(error, HasSubstr("no DRM card in sysfs"));
  EXPECT_THAT(error, HasSubstr("--forcewake registers"));
}

TEST_F(ForcewakeTest, FallsBackToTheRegistersAndWaitsForEveryAck) {
  ForcewakeOptions opt;
  opt.debugfs_root = (root_ / "absent").string();
  sim_.write32(reg::kForcewakeRender, reg::masked_enable(1));  // i915's own request, bit 0
  {
    auto fw = Forcewake::acquire(sim_, opt);
    EXPECT_EQ(fw->method(), "registers");
    for (std::uint32_t ack : {reg::kForcewakeAckRender, reg::kForcewakeAckGt,
                              reg::kForcewakeAckMedia}) {
      EXPECT_NE(sim_.read32(ack) & reg::kForcewakeOaprofBit, 0u) << std::hex << ack;
    }
    EXPECT_EQ(sim_.read32(reg::kForcewakeRender), 1u | reg::kForcewakeOaprofBit);
  }
  // Released: our bit is gone, the kernel's request untouched.
  EXPECT_EQ(sim_.read32(reg::kForcewakeRender), 1u);
  EXPECT_EQ(sim_.read32(reg::kForcewakeGt), 0u);
  EXPECT_EQ(sim_.read32(reg::kForcewakeAckGt) & reg::kForcewakeOaprofBit, 0u);
}

TEST_F(ForcewakeTest, ReleaseKeepsARequestTheDriverMadeDuringTheSession) {
  ForcewakeOptions opt;
  opt.mode = ForcewakeMode::kRegisters;
  auto fw = Forcewake::acquire(sim_, opt);
  // i915 takes forcewake for its own work while oaprof holds it (bit 0 is the kernel's).
  sim_.write32(reg::kForcewakeRender, reg::masked_enable(1));
  sim_.write32(reg::kForcewakeMedia, reg::masked_enable(1));
  fw->release();
  EXPECT_EQ(sim_.read32(reg::kForcewakeRender), 1u);  // the driver's request survives
  EXPECT_EQ(sim_.read32(reg::kForcewakeMedia), 1u);
  EXPECT_EQ(sim_.read32(reg::kForcewakeGt), 0u);
  EXPECT_EQ(sim_.read32(reg::kForcewakeAckRender), 1u);  // and the domain stays awake for it
  fw->release();  // idempotent: nothing more is written
  EXPECT_EQ(sim_.read32(reg::kForcewakeRender), 1u);
}

// Forcewake request registers on shared memory, masked as on the hardware, each domain acking
// what is requested: a parent sees what a child it signals leaves behind.
class SharedForcewakeRegisters final : public Mmio {
 public:
  explicit SharedForcewakeRegisters(std::uint32_t* words) : words_(words) {}
  std::uint32_t read32(std::uint32_t offset) override {
    const std::uint32_t request = request_of_ack(offset);
    return words_[(request != 0 ? request : offset) / 4];
  }
  void write32(std::uint32_t offset, std::uint32_t value) override {
    words_[offset / 4] = reg::apply_masked(words_[offset / 4], value);
  }
  std::string describe() const override { return "shared forcewake registers"; }

 private:
  static std::uint32_t request_of_ack(std::uint32_t ack) {
    switch (ack) {
      case reg::kForcewakeAckRender: return reg::kForcewakeRender;
      case reg::kForcewakeAckGt: return reg::kForcewakeGt;
      case reg::kForcewakeAckMedia: return reg::kForcewakeMedia;
      default: return 0;
    }
  }
  std::uint32_t* words_;
};

TEST_F(ForcewakeTest, SigtermReleasesRegisterForcewakeAndKeepsTheDriversRequest) {
  testing::SharedWords shared(SimGpu::kRegisterFileBytes);
  SharedForcewakeRegisters parent(shared.data());
  const int status = testing::run_child_until_signalled(
      [&] {  // static: what the child sets up must outlive set_up, until the signal
        static SharedForcewakeRegisters m(shared.data());
        ForcewakeOptions opt;
        opt.mode = ForcewakeMode::kRegisters;
        static auto fw = Forcewake::acquire(m, opt);
      },
      [&] {
        for (std::uint32_t request :
             {reg::kForcewakeRender, reg::kForcewakeGt, reg::kForcewakeMedia}) {
          EXPECT_EQ(parent.read32(request), reg::kForcewakeOaprofBit) << std::hex << request;
        }
        parent.write32(reg::kForcewakeGt, reg::masked_enable(1));  // i915 wakes GT meanwhile
      },
      SIGTERM);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);  // and still died of it
  EXPECT_EQ(parent.read32(reg::kForcewakeRender), 0u);
  EXPECT_EQ(parent.read32(reg::kForcewakeMedia), 0u);
  EXPECT_EQ(parent.read32(reg::kForcewakeGt), 1u);
}

TEST_F(ForcewakeTest, AMissingAckTimesOutWithAMessage) {
  class NoAck final : public Mmio {
   public:
    std::uint32_t read32(std::uint32_t) override { return 0; }
    void write32(std::uint32_t, std::uint32_t) override {}
    std::string describe() const override { return "deaf GPU"; }
  } deaf;
  ForcewakeOptions opt;
  opt.mode = ForcewakeMode::kRegisters;
  opt.ack_timeout = std::chrono::milliseconds(1);
  const std::string error = acquire_failure(deaf, opt);
  EXPECT_THAT(error, HasSubstr("deaf GPU: the render power well"));
  EXPECT_THAT(error, HasSubstr("0xD84"));
}

TEST_F(ForcewakeTest, DebugfsModeWithoutTheFileSaysWhatToDo) {
  ForcewakeOptions opt;
  opt.mode = ForcewakeMode::kDebugfs;
  opt.debugfs_root = root_.string();
  const std::string error = acquire_failure(sim_, opt);
  EXPECT_THAT(error, HasSubstr("i915_forcewake_user"));
  EXPECT_THAT(error, HasSubstr("--forcewake registers"));
  EXPECT_EQ(parse_forcewake_mode("none"), ForcewakeMode::kNone);
  EXPECT_THROW(parse_forcewake_mode("always"), std::invalid_argument);
  opt.mode = ForcewakeMode::kNone;
  EXPECT_EQ(Forcewake::acquire(sim_, opt)->method(), "none");
}

}  // namespace
}  // namespace oaprof::mmio
