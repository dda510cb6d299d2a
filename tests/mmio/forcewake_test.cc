#include "mmio/forcewake.h"
#include "mmio/signal_restore.h"

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
    Forcewake::acquire(mmio, oa::simulated_platform(), options);
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
  auto fw = Forcewake::acquire(sim_, oa::simulated_platform(), opt);
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
  EXPECT_THAT(Forcewake::acquire(sim_, oa::simulated_platform(), opt)->method(),
              HasSubstr("dri/1/i915_forcewake_user"));
  // No DRM card for the device: another GPU's debugfs file must not be taken for it.
  opt.dri_minor = std::nullopt;
  EXPECT_EQ(Forcewake::acquire(sim_, oa::simulated_platform(), opt)->method(), "registers");
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
    auto fw = Forcewake::acquire(sim_, oa::simulated_platform(), opt);
    EXPECT_EQ(fw->method(), "registers");
    for (std::uint32_t ack : {reg::kForcewakeAckRender, reg::kForcewakeAckGt}) {
      EXPECT_NE(sim_.read32(ack) & reg::kForcewakeOaprofBit, 0u) << std::hex << ack;
    }
    // No OA register is in Gen9's media domain: it is left to sleep.
    EXPECT_EQ(sim_.read32(reg::kForcewakeMedia), 0u);
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
  auto fw = Forcewake::acquire(sim_, oa::simulated_platform(), opt);
  // i915 takes forcewake for its own work while oaprof holds it (bit 0 is the kernel's).
  sim_.write32(reg::kForcewakeRender, reg::masked_enable(1));
  sim_.write32(reg::kForcewakeMedia, reg::masked_enable(1));
  fw->release();
  EXPECT_EQ(sim_.read32(reg::kForcewakeRender), 1u);  // the driver's request survives
  EXPECT_EQ(sim_.read32(reg::kForcewakeMedia), 1u);
  EXPECT_EQ(sim_.read32(reg::kForcewakeGt), 0u);
  EXPECT_EQ(sim_.read32(reg::kForcewakeAckRender), 1u);  // and the domain stays awake for it
  fw->release();                                         // idempotent: nothing more is written
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
      case reg::kForcewakeAckRender:
        return reg::kForcewakeRender;
      case reg::kForcewakeAckGt:
        return reg::kForcewakeGt;
      case reg::kForcewakeAckMedia:
        return reg::kForcewakeMedia;
      default:
        return 0;
    }
  }
  std::uint32_t* words_;
};

TEST_F(ForcewakeTest, SigtermReleasesRegisterForcewakeAndKeepsTheDriversRequest) {
  testing::SharedWords shared(SimGpu::kRegisterFileBytes);
  SharedForcewakeRegisters parent(shared.data());
  const int status = testing::run_child_until_signalled(
      [&] {  // static: what the child sets up must outlive set_up, until the signal
        SignalThread::start();  // as oaprof's main does, before anything is programmed
        static SharedForcewakeRegisters m(shared.data());
        ForcewakeOptions opt;
        opt.mode = ForcewakeMode::kRegisters;
        static auto fw = Forcewake::acquire(m, oa::simulated_platform(), opt);
      },
      [&] {
        for (std::uint32_t request : {reg::kForcewakeRender, reg::kForcewakeGt}) {
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

oa::Platform platform_of(std::uint16_t pci_id) {
  const auto p = oa::platform_for_pci_id(pci_id);
  if (!p) ADD_FAILURE() << "no platform for PCI id " << std::hex << pci_id;
  return p.value_or(oa::simulated_platform());
}

// One part of each generation (and Cherryview, a Gen8 with Valleyview's forcewake), the request
// registers oaprof must set there, and those that do not exist there.
struct GenerationCase {
  const char* name;
  std::uint16_t pci_id;
  std::vector<std::uint32_t> held;
  std::vector<std::uint32_t> foreign;
};

std::vector<GenerationCase> generation_cases() {
  return {{"HSW", 0x0412, {reg::kForcewakeMt}, {reg::kForcewakeRender, reg::kForcewakeVlv}},
          {"BDW", 0x1616, {reg::kForcewakeMt}, {reg::kForcewakeRender, reg::kForcewakeMedia}},
          {"CHV",
           0x22B0,
           {reg::kForcewakeVlv, reg::kForcewakeMediaVlv},
           {reg::kForcewakeMt, reg::kForcewakeRender}},
          {"SKL", 0x1916, {reg::kForcewakeRender, reg::kForcewakeGt}, {reg::kForcewakeVlv}},
          {"ICL",
           0x8A52,
           {reg::kForcewakeRender, reg::kForcewakeGt},
           {reg::kForcewakeMedia, reg::kForcewakeVlv}},
          {"TGL",
           0x9A49,
           {reg::kForcewakeRender, reg::kForcewakeGt},
           {reg::kForcewakeMedia, reg::kForcewakeVlv}}};
}

// A simulated GPU of each generation acks only that generation's domains (a Gen9 media request
// on a Gen11 part waits forever): the registers path takes the domains the generation has, waits
// for their acks, touches nothing else and lets go of all of them.
TEST(ForcewakeGenerationTest, TakesTheDomainsOfEachGeneration) {
  for (const GenerationCase& c : generation_cases()) {
    SCOPED_TRACE(c.name);
    ManualClock clock;
    SimConfig config;
    config.platform = platform_of(c.pci_id);
    SimGpu sim(config, clock);
    ForcewakeOptions opt;
    opt.mode = ForcewakeMode::kRegisters;
    opt.ack_timeout = std::chrono::milliseconds(5);
    {
      std::unique_ptr<Forcewake> fw;
      ASSERT_NO_THROW(fw = Forcewake::acquire(sim, config.platform, opt));
      for (std::uint32_t request : c.held) {
        EXPECT_EQ(sim.read32(request), reg::kForcewakeOaprofBit) << std::hex << request;
      }
      for (const auto& d : oa_forcewake_domains(config.platform)) {
        EXPECT_EQ(sim.read32(d.ack) & reg::kForcewakeOaprofBit, reg::kForcewakeOaprofBit) << d.name;
      }
      for (std::uint32_t other : c.foreign) EXPECT_EQ(sim.read32(other), 0u) << std::hex << other;
    }
    for (std::uint32_t request : c.held) EXPECT_EQ(sim.read32(request), 0u) << std::hex << request;
  }
}

// The old Gen9-only table on a Gen11 part: the media domain it waits for is not there.
TEST(ForcewakeGenerationTest, AnotherGenerationsDomainTimesOutOnTheSimulator) {
  ManualClock clock;
  SimConfig config;
  config.platform = platform_of(0x8A52);  // Ice Lake: no 0xA270 media domain
  SimGpu sim(config, clock);
  sim.write32(reg::kForcewakeMedia, reg::masked_enable(reg::kForcewakeOaprofBit));
  EXPECT_EQ(sim.read32(reg::kForcewakeAckMedia), 0u);
  config.platform = platform_of(0x1916);  // while a Skylake acks it
  SimGpu skl(config, clock);
  skl.write32(reg::kForcewakeMedia, reg::masked_enable(reg::kForcewakeOaprofBit));
  EXPECT_EQ(skl.read32(reg::kForcewakeAckMedia), reg::kForcewakeOaprofBit);
}

// Which forcewake domain each OA register needs, from i915's forcewake range tables (linux
// drivers/gpu/drm/i915/intel_uncore.c __gen6_fw_ranges, __chv_fw_ranges, __gen9_fw_ranges,
// __gen11_fw_ranges, __gen12_fw_ranges @ torvalds/linux 002c6ca75289a4ac4f6738213dd2d258704886e4):
// every domain a register needs must be among those oaprof holds.
TEST(ForcewakeGenerationTest, TheHeldDomainsCoverEveryOaRegister) {
  struct Need {
    std::uint32_t reg;
    std::vector<std::string> domains;
  };
  const std::vector<Need> gen9_11 = {
      {0x2B00, {"GT"}},     {0x2800, {"GT"}},     {0x2910, {"GT"}},     {0x2710, {"GT"}},
      {0x2740, {"GT"}},     {0x2770, {"GT"}},     {0x2360, {"render"}}, {0x2358, {"render"}},
      {0x20CC, {"render"}}, {0x9888, {"GT"}},     {0x9840, {"GT"}},     {0x91B8, {"GT"}},
      {0xE180, {"render"}}, {0xE458, {"render"}}, {0xE65C, {"render"}}, {0xE758, {"render"}},
      {0xA01C, {"GT"}},     {0xA26C, {"GT"}}};
  const std::vector<Need> gen12 = {{0xDAF4, {"GT"}},     {0xD980, {"GT"}},     {0xDA90, {"GT"}},
                                   {0xD900, {"GT"}},     {0x2360, {"render"}}, {0x2358, {"render"}},
                                   {0x20CC, {"render"}}, {0x9888, {"GT"}},     {0xE458, {"render"}},
                                   {0xE758, {"render"}}, {0xA26C, {"GT"}}};
  const std::vector<Need> chv = {{0x2B00, {"render"}},          {0x2800, {"render"}},
                                 {0x9888, {"render", "media"}}, {0x9840, {"render", "media"}},
                                 {0xE180, {"render"}},          {0xE458, {"render"}}};
  const std::vector<Need> hsw_bdw = {
      {0x2B00, {"render"}}, {0x9888, {"render"}}, {0xE458, {"render"}}, {0x2360, {"render"}}};
  const std::vector<std::pair<std::uint16_t, const std::vector<Need>*>> parts = {
      {0x0412, &hsw_bdw}, {0x1616, &hsw_bdw}, {0x22B0, &chv},  {0x1916, &gen9_11},
      {0x5916, &gen9_11}, {0x8A52, &gen9_11}, {0x9A49, &gen12}};
  for (const auto& [id, needs] : parts) {
    const oa::Platform p = platform_of(id);
    std::vector<std::string> held;
    for (const auto& d : oa_forcewake_domains(p)) held.emplace_back(d.name);
    for (const Need& n : *needs) {
      for (const std::string& domain : n.domains) {
        EXPECT_THAT(held, ::testing::Contains(domain))
            << p.codename << " register 0x" << std::hex << n.reg;
      }
    }
    // What oaprof holds, i915 has on that generation.
    for (const auto& d : oa_forcewake_domains(p)) {
      bool known = false;
      for (const auto& k : all_forcewake_domains(p)) known = known || k.request == d.request;
      EXPECT_TRUE(known) << p.codename << " " << d.name;
    }
  }
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
  EXPECT_EQ(Forcewake::acquire(sim_, oa::simulated_platform(), opt)->method(), "none");
}

}  // namespace
}  // namespace oaprof::mmio
