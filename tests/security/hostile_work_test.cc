// Issue 35's work hints played by an attacker: the kernel names a layer puts in its 'before'
// snapshots (the program's, so anything) and the work figures a client hands oaprofd with its
// kernel signal. Names are bounded on the wire and only ever looked up in the catalogue; figures
// past their bound, or with the wrong signal, are refused and the session goes on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "bench/known_work.h"
#include "daemon/daemon_service.h"
#include "ipc/wire.h"
#include "tests/common/daemon_test_util.h"

namespace oaprof::security {
namespace {

namespace wire = ipc::wire;

// Names a program may give its kernels: none is a catalogue kernel, so none gives the simulator
// work to count (its counters keep the workload fractions), and none is shown anywhere.
TEST(HostileWorkTest, NamesOutsideTheCatalogueResolveToNoWork) {
  const std::string names[] = {"mad_vect4\x1b[2J",
                               "../../mad_vect4",
                               std::string("mad_vect4\0x", 11),
                               "mad_vect4\n",
                               std::string(wire::kMaxWorkNameBytes, 'm'),
                               "power_mad_vect4"};  // its outer repeats are unknown
  for (const std::string& name : names) {
    EXPECT_FALSE(bench::known_work(name, 4096)) << ::testing::PrintToString(name);
  }
  // The largest size a hint carries keeps every figure within what the wire carries to oaprofd.
  const auto most = bench::known_work("mad_dp_vect16", wire::kMaxWorkItems);
  ASSERT_TRUE(most);
  EXPECT_LE(most->flops, static_cast<double>(wire::kMaxWorkCount));
}

class HostileKernelWorkTest : public ::testing::Test {
 protected:
  HostileKernelWorkTest() {
    test_support::create_sim_file(regs_);
    daemon::ServiceOptions o;
    o.device.spec = oaprof::gpu::DeviceSpec::sim_file(regs_);
    o.state_dir = dir_.path();
    service_ = std::make_unique<daemon::DaemonService>(o);
  }
  wire::Body send(const std::vector<std::uint8_t>& bytes) {
    const auto reply = wire::decode(service_->handle(1, alice_, bytes));
    return std::get<wire::Message>(reply).body;
  }
  static wire::ErrorCode error_code(const wire::Body& body) {
    const auto* e = std::get_if<wire::Error>(&body);
    return e != nullptr ? e->code : wire::ErrorCode{0};
  }

  test_support::ScratchDir dir_;
  std::filesystem::path regs_ = dir_.path() / "regs";
  std::unique_ptr<daemon::DaemonService> service_;
  static inline const daemon::Peer alice_{1000, 1000, 4321, nullptr};
};

TEST_F(HostileKernelWorkTest, OaprofdRefusesWorkPastItsBoundOrWithAnEndAndServesOn) {
  oa::KernelWork w;
  w.work_items = 64;
  w.fp32_ops = 1e6;
  // Without a session, work or not, nothing happens to the unit.
  EXPECT_EQ(error_code(send(wire::encode({1, wire::Kernel{true, w}}))),
            wire::ErrorCode::kNoSession);
  wire::Open open;
  open.pid = 1;
  open.energy = "none";
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(send(wire::encode({2, open}))));
  auto past = wire::encode({3, wire::Kernel{true, w}});
  const std::uint64_t too_many = wire::kMaxWorkCount + 1;
  std::memcpy(&past[wire::kHeaderBytes + 1 + 8], &too_many, 8);  // fp32_ops
  EXPECT_EQ(error_code(send(past)), wire::ErrorCode::kBadMessage);
  auto ending = wire::encode({4, wire::Kernel{true, w}});
  ending[wire::kHeaderBytes] = 0;  // an end that claims work
  EXPECT_EQ(error_code(send(ending)), wire::ErrorCode::kBadMessage);
  // The session goes on: a sane start and end, then a close that restores the registers.
  EXPECT_TRUE(std::holds_alternative<wire::Ok>(send(wire::encode({5, wire::Kernel{true, w}}))));
  EXPECT_TRUE(std::holds_alternative<wire::Ok>(send(wire::encode({6, wire::Kernel{false}}))));
  EXPECT_TRUE(std::holds_alternative<wire::Ok>(send(wire::encode({7, wire::Close{}}))));
}

}  // namespace
}  // namespace oaprof::security
