// Taking the OA unit (session/unit.h), the one way both `sudo oaprof` and oaprofd take it: the
// lock, a dead holder's journal put back, a new journal for every register write, the device.
#include "session/unit.h"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mmio/registers.h"
#include "tests/common/daemon_test_util.h"

namespace oaprof::session {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class UnitTest : public ::testing::Test {
 protected:
  void SetUp() override { test_support::create_sim_file(sim_file_); }

  // The shared simulator (a register file other processes could open too), as a device spec.
  gpu::DeviceOptions device() const {
    gpu::DeviceOptions o;
    o.spec = oaprof::gpu::DeviceSpec::sim_file(sim_file_);
    o.forcewake.mode = mmio::ForcewakeMode::kNone;
    return o;
  }
  UnitFiles files() const { return UnitFiles::in(dir_.path()); }

  test_support::ScratchDir dir_;
  fs::path sim_file_ = dir_.path() / "regs";
  std::vector<std::string> notes_;
  std::function<void(const std::string&)> note_ = [this](const std::string& s) {
    notes_.push_back(s);
  };
};

TEST_F(UnitTest, ASecondHolderIsToldWhoHasIt) {
  Unit first = take_unit(files(), "uid 1000, pid 1 since then", device(), note_);
  try {
    (void)take_unit(files(), "uid 1001, pid 2 since now", device(), note_);
    FAIL() << "the unit was taken twice";
  } catch (const UnitBusy& e) {
    EXPECT_EQ(e.holder(), "uid 1000, pid 1 since then");
    EXPECT_THAT(e.what(), HasSubstr("busy: held by uid 1000, pid 1"));
  }
}

TEST_F(UnitTest, EveryWriteIsJournaledAndADeadHoldersJournalIsPutBack) {
  const std::uint32_t before = [&] {
    Unit probe = take_unit(files(), "probe", device(), note_);
    const std::uint32_t value = probe.device.mmio->read32(mmio::reg::kOaCtxControl);
    probe.mark_restored();
    return value;
  }();
  {
    // A holder that writes a register and dies without restoring it: its state file stays.
    Unit dying = take_unit(files(), "dying", device(), note_);
    dying.device.mmio->write32(mmio::reg::kOaCtxControl, before ^ 0x1);
    EXPECT_TRUE(fs::exists(files().state));
  }
  ASSERT_TRUE(fs::exists(files().state));
  Unit next = take_unit(files(), "next", device(), note_);
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_EQ(next.device.mmio->read32(mmio::reg::kOaCtxControl), before);
  next.mark_restored();
}

TEST_F(UnitTest, ADeviceThatDoesNotOpenLeavesNoJournalAndFreesTheLock) {
  gpu::DeviceOptions missing = device();
  missing.spec = oaprof::gpu::DeviceSpec::sim_file((dir_.path() / "no-such-dir" / "regs"));
  EXPECT_ANY_THROW((void)take_unit(files(), "first", missing, note_));
  EXPECT_FALSE(fs::exists(files().state));
  Unit unit = take_unit(files(), "second", device(), note_);  // the lock went with the failure
  unit.mark_restored();
}

// The simulator's auto follows the simulated part's placement: a discrete card's hwmon, an
// integrated GPU's RAPL tree.
TEST(EnergyBackendTest, AutoOnASimulatedGpuIsTheSimulatorAndAnythingElseIsItself) {
  EXPECT_EQ(energy_backend_for("auto", true, false), "sim");
  EXPECT_EQ(energy_backend_for("auto", true, true), "sim-hwmon");
  EXPECT_EQ(energy_backend_for("auto", false, true), "auto");
  EXPECT_EQ(energy_backend_for("powercap", true, false), "powercap");
  EXPECT_EQ(energy_backend_for("none", true, true), "none");
}

}  // namespace
}  // namespace oaprof::session
