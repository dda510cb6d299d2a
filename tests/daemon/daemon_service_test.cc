#include "daemon/daemon_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include <fmt/format.h>

#include "mmio/registers.h"
#include "mmio/saved_registers.h"
#include "oa/builtin_metric_set.h"
#include "oa/platform.h"
#include "session/daemon_paths.h"
#include "session/register_journal.h"
#include "session/session_lock.h"
#include "session/state_dir.h"
#include "session/trusted_metrics.h"
#include "tests/common/daemon_test_util.h"

namespace oaprof::daemon {
namespace {

namespace wire = ipc::wire;
using test_support::ScratchDir;
using ::testing::HasSubstr;

class DaemonServiceTest : public ::testing::Test {
 protected:
  DaemonServiceTest() {
    regs_ = dir_.path() / "regs";
    test_support::create_sim_file(regs_);
    ServiceOptions o;
    o.device.spec = oaprof::gpu::DeviceSpec::sim_file(regs_);
    o.state_dir = dir_.path();
    o.log = [this](int, const std::string& line) { log_ += line + "\n"; };
    service_ = std::make_unique<DaemonService>(o);
  }

  wire::Open open_request() {
    wire::Open o;
    o.pid = 1;
    o.energy = "none";
    return o;
  }

  // A service's options on the fixture's simulated device and state directory, its metric sets
  // from `dirs`.
  ServiceOptions options_with_metrics(std::vector<std::filesystem::path> dirs) const {
    ServiceOptions o;
    o.device.spec = oaprof::gpu::DeviceSpec::sim_file(regs_);
    o.state_dir = dir_.path();
    o.metrics_dirs = std::move(dirs);
    return o;
  }

  // The service's simulated device opened as a session that will "crash": every first write is
  // journaled to the service's state file, which outlives the device.
  struct CrashingSession {
    std::unique_ptr<session::StateFile> state;
    gpu::Device device;
  };
  void open_crashing_session(CrashingSession& s) {
    gpu::DeviceOptions o;
    o.spec = oaprof::gpu::DeviceSpec::sim_file(regs_);
    o.forcewake.mode = mmio::ForcewakeMode::kNone;
    session::StateContents header{o.spec.str(), "", "uid 7, pid 8 since then", {}};
    o.wrap_mmio = [&, header](std::unique_ptr<mmio::Mmio> inner) mutable {
      header.identity = inner->describe();
      return std::make_unique<session::JournalingMmio>(
          std::move(inner), [&, header](const mmio::RestoreStep& e) {
            if (!s.state)
              s.state = std::make_unique<session::StateFile>(service_->state_file(), header);
            s.state->append(e);
          });
    };
    s.device = gpu::open_device(o);
  }

  ScratchDir dir_;
  std::filesystem::path regs_;
  std::string log_;
  std::unique_ptr<DaemonService> service_;
  const Peer alice_{1000, 1000, 4321};
  const Peer bob_{1001, 1001, 5555};
};

TEST_F(DaemonServiceTest, ASessionProgramsSamplesAndRestoresEveryRegister) {
  const auto before = test_support::file_bytes(regs_);
  const wire::Body opened = service_->handle(1, alice_, open_request());
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(opened))
      << std::get<wire::Error>(opened).message;
  const auto& o = std::get<wire::Opened>(opened);
  EXPECT_TRUE(o.simulated);
  EXPECT_EQ(o.label, "simulated");
  EXPECT_EQ(o.format, "A32u40_A4u32_B8_C8");
  EXPECT_EQ(o.metric_set, "Builtin");
  EXPECT_TRUE(o.metrics_file.empty());
  EXPECT_TRUE(o.energy_backend.empty());

  // Programmed: the file changed, and the state file journals the priors.
  EXPECT_FALSE(test_support::differing_registers(before, test_support::file_bytes(regs_)).empty());
  const auto state = session::read_state_file(service_->state_file());
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->device_spec, "sim:" + regs_.string());
  EXPECT_THAT(state->holder, HasSubstr("uid 1000, pid 4321 since "));
  EXPECT_FALSE(state->entries.empty());

  EXPECT_TRUE(std::holds_alternative<wire::Ok>(service_->handle(1, alice_, wire::Kernel{true})));
  const wire::Body sampled = service_->handle(1, alice_, wire::Sample{7, wire::kSampleReport});
  ASSERT_TRUE(std::holds_alternative<wire::Sampled>(sampled));
  const auto& s = std::get<wire::Sampled>(sampled);
  ASSERT_TRUE(s.report.has_value());
  EXPECT_EQ(s.report->size(), 256u);  // A32u40_A4u32_B8_C8
  EXPECT_EQ((*s.report)[0], 7);       // RPT_ID, the first dword, carries the report id
  const wire::Body no_energy = service_->handle(1, alice_, wire::Sample{0, wire::kSampleEnergy});
  EXPECT_EQ(std::get<wire::Error>(no_energy).code, wire::ErrorCode::kBadRequest);

  EXPECT_TRUE(std::holds_alternative<wire::Ok>(service_->handle(1, alice_, wire::Close{})));
  EXPECT_FALSE(service_->session_open());
  EXPECT_FALSE(std::filesystem::exists(service_->state_file()));
  EXPECT_EQ(test_support::differing_registers(before, test_support::file_bytes(regs_)),
            std::vector<std::size_t>{});
  EXPECT_THAT(log_, HasSubstr("session opened for uid 1000, pid 4321"));
}

// The largest rise of any plane between two energy samples.
std::uint64_t largest_rise_uj(const wire::EnergyValues& from, const wire::EnergyValues& to) {
  std::uint64_t rise = 0;
  for (std::size_t i = 0; i < std::min(from.energy_uj.size(), to.energy_uj.size()); ++i) {
    rise = std::max(rise, to.energy_uj[i].second - from.energy_uj[i].second);
  }
  return rise;
}

// Issue 35: oaprofd's simulated energy draws from the simulated GPU's per-event model, as a
// local run's does: a kernel start that carries heavy known work (1e12 FP32 operations: joules
// in the model, counted in full when the kernel ends) shows in the planes, where the activity
// model would add milliwatts over the microseconds it ran.
TEST_F(DaemonServiceTest, SimulatedEnergyFollowsTheKnownWorkOfAKernel) {
  ServiceOptions so = options_with_metrics({});
  so.energy_min_interval_ns = 0;
  service_ = std::make_unique<DaemonService>(so);
  wire::Open o = open_request();
  o.energy = "sim";
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(service_->handle(1, alice_, o)));
  const auto energy = [&] {
    return *std::get<wire::Sampled>(
                service_->handle(1, alice_, wire::Sample{0, wire::kSampleEnergy}))
                .energy;
  };
  const wire::EnergyValues before = energy();
  oa::KernelWork heavy;
  heavy.work_items = 4096;
  heavy.fp32_ops = 1e12;
  ASSERT_TRUE(
      std::holds_alternative<wire::Ok>(service_->handle(1, alice_, wire::Kernel{true, heavy})));
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(service_->handle(1, alice_, wire::Kernel{false})));
  // The planes publish at RAPL's update interval (1 ms): read until one has passed since.
  wire::EnergyValues after = energy();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (after.time_ns < before.time_ns + 3'000'000 &&
         std::chrono::steady_clock::now() < deadline) {
    after = energy();
  }
  EXPECT_GT(largest_rise_uj(before, after), 1'000'000u) << "at least a joule";
}

TEST_F(DaemonServiceTest, ASummaryCarriesThePodItsClientRanIn) {
  // A fake /proc where alice's pid is in a pod (containerd, systemd driver) and bob's is not.
  const std::string uid = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", id(64, 'c');
  const std::filesystem::path proc = dir_.path() / "proc";
  std::filesystem::create_directories(proc / std::to_string(alice_.pid));
  std::filesystem::create_directories(proc / std::to_string(bob_.pid));
  std::ofstream(proc / std::to_string(alice_.pid) / "cgroup")
      << "0::/kubepods.slice/kubepods-pod0a1b2c3d_4e5f_4a6b_8c7d_9e0f1a2b3c4d.slice/"
      << "cri-containerd-" << id << ".scope\n";
  std::ofstream(proc / std::to_string(bob_.pid) / "cgroup") << "0::/user.slice\n";
  ServiceOptions o = options_with_metrics({});
  o.proc_root = proc;
  service_ = std::make_unique<DaemonService>(o);

  for (const Peer& peer : {alice_, bob_}) {
    ASSERT_TRUE(std::holds_alternative<wire::Opened>(service_->handle(1, peer, open_request())));
    const wire::Summary summary{{{"k", 1, 2, 3}}, false};
    ASSERT_TRUE(std::holds_alternative<wire::Ok>(service_->handle(1, peer, summary)));
    service_->handle(1, peer, wire::Close{});
  }
  const std::vector<ClientSummary> kept = service_->take_summaries();
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].pod, (PodIdentity{uid, id}));
  EXPECT_EQ(kept[1].pod, PodIdentity{});
}

TEST_F(DaemonServiceTest, ASecondClientIsToldWhoHoldsTheUnit) {
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(service_->handle(1, alice_, open_request())));
  const auto busy = std::get<wire::Error>(service_->handle(2, bob_, open_request()));
  EXPECT_EQ(busy.code, wire::ErrorCode::kBusy);
  EXPECT_THAT(busy.message, ::testing::MatchesRegex("busy: held by uid 1000, pid 4321 since "
                                                    "20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9:]+Z"));
  // Bob may not drive Alice's session.
  EXPECT_EQ(std::get<wire::Error>(service_->handle(2, bob_, wire::Sample{1, 1})).code,
            wire::ErrorCode::kNoSession);
  EXPECT_EQ(std::get<wire::Error>(service_->handle(2, bob_, wire::Close{})).code,
            wire::ErrorCode::kNoSession);
  EXPECT_EQ(std::get<wire::Error>(service_->handle(1, alice_, open_request())).code,
            wire::ErrorCode::kBadRequest);
  service_->client_gone(1);
  EXPECT_TRUE(std::holds_alternative<wire::Opened>(service_->handle(2, bob_, open_request())));
}

TEST_F(DaemonServiceTest, BadRequestsAreRefusedWithTheReason) {
  auto untrusted = open_request();
  const auto xml = dir_.path() / "mine.xml";
  std::ofstream(xml) << "<metrics/>";
  untrusted.metric_set = "ComputeBasic";
  untrusted.metrics_xml = xml.string();
  const auto e = std::get<wire::Error>(service_->handle(1, alice_, untrusted));
  EXPECT_EQ(e.code, wire::ErrorCode::kBadRequest);
  EXPECT_THAT(e.message, HasSubstr("refuses the metric file"));

  auto relative = open_request();
  relative.metric_set = "ComputeBasic";
  relative.metrics_xml = "mine.xml";
  EXPECT_THAT(std::get<wire::Error>(service_->handle(1, alice_, relative)).message,
              HasSubstr("absolute path"));

  auto no_dirs = open_request();
  no_dirs.metric_set = "ComputeBasic";
  EXPECT_THAT(std::get<wire::Error>(service_->handle(1, alice_, no_dirs)).message,
              HasSubstr("no metric file"));

  auto other_device = open_request();
  other_device.device = "0000:00:02.0";
  EXPECT_THAT(std::get<wire::Error>(service_->handle(1, alice_, other_device)).message,
              HasSubstr("this oaprofd serves --device sim:"));

  auto plain_sim = open_request();
  plain_sim.device = "sim";  // any simulator will do
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(service_->handle(1, alice_, plain_sim)));
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(service_->handle(1, alice_, wire::Close{})));

  auto bad_format = open_request();
  bad_format.format = "nonsense";
  EXPECT_EQ(std::get<wire::Error>(service_->handle(1, alice_, bad_format)).code,
            wire::ErrorCode::kBadRequest);

  auto bad_access = open_request();
  bad_access.access = "telepathy";
  EXPECT_EQ(std::get<wire::Error>(service_->handle(1, alice_, bad_access)).code,
            wire::ErrorCode::kBadRequest);

  // Nothing was left behind by the refused opens.
  EXPECT_FALSE(service_->session_open());
  EXPECT_FALSE(std::filesystem::exists(service_->state_file()));
  EXPECT_TRUE(std::holds_alternative<wire::Opened>(service_->handle(1, alice_, open_request())));
}

TEST_F(DaemonServiceTest, MalformedBytesGetErrorRepliesAndServingGoesOn) {
  const auto reply_to = [&](const std::vector<std::uint8_t>& bytes) {
    return std::get<wire::Message>(wire::decode(service_->handle(1, alice_, bytes)));
  };
  auto good = wire::encode({5, open_request()});
  std::vector<std::vector<std::uint8_t>> bad = {
      {}, {1, 2, 3}, std::vector<std::uint8_t>(good.begin(), good.begin() + 20)};
  auto version = good;
  version[4] = 9;
  bad.push_back(version);
  auto type = good;
  type[6] = 0x42;
  bad.push_back(type);
  for (const auto& b : bad) {
    const auto m = reply_to(b);
    ASSERT_TRUE(std::holds_alternative<wire::Error>(m.body));
  }
  EXPECT_EQ(std::get<wire::Error>(reply_to(version).body).code,
            wire::ErrorCode::kUnsupportedVersion);
  EXPECT_EQ(reply_to(version).request_id, 5u);
  EXPECT_EQ(std::get<wire::Error>(reply_to(type).body).code, wire::ErrorCode::kUnknownType);
  // Replies and layer messages are not requests.
  EXPECT_EQ(std::get<wire::Error>(reply_to(wire::encode({6, wire::Ok{}})).body).code,
            wire::ErrorCode::kBadRequest);
  EXPECT_EQ(std::get<wire::Error>(reply_to(wire::encode({6, wire::Snapshot{}})).body).code,
            wire::ErrorCode::kBadRequest);
  const auto m = reply_to(good);
  EXPECT_EQ(m.request_id, 5u);
  EXPECT_TRUE(std::holds_alternative<wire::Opened>(m.body));
}

TEST_F(DaemonServiceTest, RecoverRestoresWhatACrashedRunLeft) {
  EXPECT_EQ(service_->recover(), std::nullopt);
  const auto before = test_support::file_bytes(regs_);
  {
    // A "crashed" session: registers written through the journal, the state file kept.
    CrashingSession crashed;
    open_crashing_session(crashed);
    gpu::Device& d = crashed.device;
    d.mmio->write32(mmio::reg::kOaDebug, mmio::reg::masked_enable(0x6));
    d.mmio->write32(0x9840, 0xDEADBEEF);
    d.mmio->write32(0x9840, 0x12345678);  // a second write keeps the first prior
  }
  ASSERT_FALSE(test_support::differing_registers(before, test_support::file_bytes(regs_)).empty());
  const auto state = session::read_state_file(service_->state_file());
  ASSERT_TRUE(state.has_value());
  ASSERT_EQ(state->entries.size(), 2u);
  EXPECT_EQ(state->entries[0].kind, mmio::RestoreKind::kMasked);
  EXPECT_EQ(state->entries[1].kind, mmio::RestoreKind::kPlain);

  const auto done = service_->recover();
  ASSERT_TRUE(done.has_value());
  EXPECT_THAT(*done, HasSubstr("restored 2 registers"));
  EXPECT_THAT(*done, HasSubstr("uid 7, pid 8"));
  EXPECT_FALSE(std::filesystem::exists(service_->state_file()));
  EXPECT_EQ(test_support::differing_registers(before, test_support::file_bytes(regs_)),
            std::vector<std::size_t>{});
}

// The lock of a dead holder goes with it, its state file does not: a local oaprof killed while
// oaprofd runs, say. The next session oaprofd opens restores it first, instead of writing a
// new journal over it.
TEST_F(DaemonServiceTest, OpeningASessionRestoresWhatADeadHolderLeft) {
  const auto before = test_support::file_bytes(regs_);
  {
    CrashingSession crashed;
    open_crashing_session(crashed);
    crashed.device.mmio->write32(0x9840, 0xDEADBEEF);
  }
  ASSERT_TRUE(std::filesystem::exists(service_->state_file()));
  const wire::Body opened = service_->handle(1, alice_, open_request());
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(opened))
      << std::get<wire::Error>(opened).message;
  EXPECT_TRUE(std::holds_alternative<wire::Ok>(service_->handle(1, alice_, wire::Close{})));
  EXPECT_EQ(test_support::differing_registers(before, test_support::file_bytes(regs_)),
            std::vector<std::size_t>{});
  EXPECT_FALSE(std::filesystem::exists(service_->state_file()));
}

TEST_F(DaemonServiceTest, RecoverDropsOnlyTheCrashedSessionsForcewakeBit) {
  {
    // A crashed session that held forcewake through the registers: its request writes are
    // journaled, and nothing released them.
    CrashingSession crashed;
    open_crashing_session(crashed);
    gpu::Device& d = crashed.device;
    for (std::uint32_t request :
         {mmio::reg::kForcewakeRender, mmio::reg::kForcewakeGt, mmio::reg::kForcewakeMedia}) {
      d.mmio->write32(request, mmio::reg::masked_enable(mmio::reg::kForcewakeOaprofBit));
    }
    // i915 asks for the render domain while the session runs.
    d.mmio->write32(mmio::reg::kForcewakeRender, mmio::reg::masked_enable(1));
  }
  ASSERT_TRUE(service_->recover().has_value());
  gpu::DeviceOptions o;
  o.spec = oaprof::gpu::DeviceSpec::sim_file(regs_);
  o.forcewake.mode = mmio::ForcewakeMode::kNone;
  gpu::Device after = gpu::open_device(o);
  EXPECT_EQ(after.mmio->read32(mmio::reg::kForcewakeRender), 1u);  // the driver's bit stays
  EXPECT_EQ(after.mmio->read32(mmio::reg::kForcewakeGt), 0u);
  EXPECT_EQ(after.mmio->read32(mmio::reg::kForcewakeMedia), 0u);
}

TEST_F(DaemonServiceTest, RecoverRefusesAnotherDevice) {
  {
    session::StateFile f(service_->state_file(),
                         {"sim:" + regs_.string(), "some other GPU", "x", {}});
    f.append({0x9840, 1, mmio::RestoreKind::kPlain});
  }
  EXPECT_THROW(
      {
        try {
          (void)service_->recover();
        } catch (const std::runtime_error& e) {
          EXPECT_THAT(e.what(), HasSubstr("not restoring registers on another device"));
          throw;
        }
      },
      std::runtime_error);
  EXPECT_TRUE(std::filesystem::exists(service_->state_file()));
}

TEST_F(DaemonServiceTest, ALocalSudoOaprofHoldingTheLockMakesTheDaemonBusy) {
  std::string holder;
  auto local = session::SessionLock::try_acquire(service_->lock_file(),
                                                 session::holder_text(0, 777), &holder);
  ASSERT_TRUE(local.has_value());
  const auto busy = std::get<wire::Error>(service_->handle(1, alice_, open_request()));
  EXPECT_EQ(busy.code, wire::ErrorCode::kBusy);
  EXPECT_THAT(busy.message, HasSubstr("busy: held by uid 0, pid 777 since "));
  EXPECT_FALSE(service_->session_open());
  local.reset();
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(service_->handle(1, alice_, open_request())));
  // And the other way round: the daemon's session keeps a local run out.
  EXPECT_FALSE(session::SessionLock::try_acquire(service_->lock_file(), "x", &holder).has_value());
  EXPECT_THAT(holder, HasSubstr("uid 1000, pid 4321 since "));
}

TEST(StateFileTest, ATornLastLineIsIgnoredAndGarbageRefused) {
  ScratchDir dir;
  const auto path = dir.path() / "state";
  std::ofstream(path) << "oaprofd-state 1\ndevice sim\nidentity x\nholder h\n"
                         "write 0x00002b04 0x00000002 masked\nwrite 0x0000984";
  const auto c = session::read_state_file(path);
  ASSERT_TRUE(c.has_value());
  ASSERT_EQ(c->entries.size(), 1u);
  EXPECT_EQ(c->entries[0].offset, 0x2B04u);
  EXPECT_EQ(c->entries[0].prior, 2u);
  EXPECT_EQ(c->entries[0].kind, mmio::RestoreKind::kMasked);
  std::ofstream(path) << "hello\n";
  EXPECT_THROW((void)session::read_state_file(path), std::runtime_error);
  std::ofstream(path) << "oaprofd-state 1\nwrite 0x1 0x2 sideways\n";
  EXPECT_THROW((void)session::read_state_file(path), std::runtime_error);
  EXPECT_EQ(session::read_state_file(dir.path() / "absent"), std::nullopt);
}

// Each step is written with its kind; a file from before the "owned" kind journaled a forcewake
// request as masked, and what it meant then is what "owned" means now: clear oaprof's bit.
TEST(StateFileTest, StepsRoundTripAndAnOldMaskedForcewakeLineIsOaprofsBit) {
  ScratchDir dir;
  const auto path = dir.path() / "state";
  {
    session::StateFile file(path, session::StateContents{"sim", "x", "h", {}});
    file.append({mmio::reg::kOaDebug, 0x42, mmio::RestoreKind::kMasked});
    file.append(
        {mmio::reg::kForcewakeGt, mmio::reg::kForcewakeOaprofBit, mmio::RestoreKind::kOwnedBits});
    file.append({0x9888, 0xDEADBEEF, mmio::RestoreKind::kPlain});
  }
  const auto c = session::read_state_file(path);
  ASSERT_TRUE(c.has_value());
  ASSERT_EQ(c->entries.size(), 3u);
  EXPECT_EQ(c->entries[1],
            (mmio::RestoreStep{mmio::reg::kForcewakeGt, mmio::reg::kForcewakeOaprofBit,
                               mmio::RestoreKind::kOwnedBits}));
  EXPECT_EQ(c->entries[2], (mmio::RestoreStep{0x9888, 0xDEADBEEF, mmio::RestoreKind::kPlain}));
  std::ofstream(path) << fmt::format(
      "oaprofd-state 1\ndevice sim\nidentity x\nholder h\n"
      "write 0x{:08x} 0x00000001 masked\n",
      mmio::reg::kForcewakeRender);
  const auto old = session::read_state_file(path);
  ASSERT_TRUE(old.has_value());
  ASSERT_EQ(old->entries.size(), 1u);
  EXPECT_EQ(old->entries[0],
            (mmio::RestoreStep{mmio::reg::kForcewakeRender, mmio::reg::kForcewakeOaprofBit,
                               mmio::RestoreKind::kOwnedBits}));
}

// The journal sees only register writes; SavedRegisters is told what each write means. For the
// writes oaprof makes both must keep the same restore plan, so that the journal's fallback and a
// crashed run's restore leave what the normal end leaves.
TEST(JournalTest, SeesTheSameStepsAsSavedRegistersForTheSameWrites) {
  std::vector<mmio::RestoreStep> recorded;
  gpu::DeviceOptions o;
  o.spec = oaprof::gpu::DeviceSpec::sim();
  o.forcewake.mode = mmio::ForcewakeMode::kNone;
  o.wrap_mmio = [&](std::unique_ptr<mmio::Mmio> inner) {
    return std::make_unique<session::JournalingMmio>(
        std::move(inner), [&](const mmio::RestoreStep& s) { recorded.push_back(s); });
  };
  gpu::Device d = gpu::open_device(o);
  d.mmio->write32(mmio::reg::kOaDebug, mmio::reg::masked_enable(0x3));  // a prior to keep
  recorded.clear();
  std::vector<mmio::RestoreStep> saved_steps;
  {
    mmio::SavedRegisters saved(*d.mmio);
    saved.set_owned_bits(mmio::reg::kForcewakeRender, mmio::reg::kForcewakeOaprofBit);
    saved.write_masked(mmio::reg::kOaDebug, mmio::reg::masked_enable(0x10));
    saved.write(0x9888, 0x1234);
    saved.write(0x9888, 0x5678);
    saved.write_masked(mmio::reg::kHalfSliceChicken2, mmio::reg::masked_enable(0x1));
    saved_steps = saved.steps();
  }
  // The journal already had OA_DEBUG from the write before: its step is the older one.
  ASSERT_FALSE(recorded.empty());
  std::vector<mmio::RestoreStep> expected = saved_steps;
  std::erase_if(expected, [](const auto& s) { return s.offset == mmio::reg::kOaDebug; });
  EXPECT_EQ(recorded, expected);
  EXPECT_EQ(saved_steps[1].kind, mmio::RestoreKind::kMasked);
  EXPECT_EQ(saved_steps[1].prior, 0x3u);
}

TEST(StateFileTest, AStateFileThatExistsButCannotBeReadIsNotTakenForNone) {
  ScratchDir dir;
  const auto expect_unreadable = [](const std::filesystem::path& path, const std::string& why) {
    try {
      const auto c = session::read_state_file(path);
      ADD_FAILURE() << path << " read as " << (c ? "a state file" : "no state file");
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), HasSubstr("cannot read the state file " + path.string() + ": " + why));
    }
  };
  std::filesystem::create_directory(dir.path() / "a-directory");
  expect_unreadable(dir.path() / "a-directory", std::strerror(EISDIR));
  // A link whose target is gone is still something there, not the absence of state.
  std::filesystem::create_symlink(dir.path() / "gone", dir.path() / "dangling");
  expect_unreadable(dir.path() / "dangling", "it is a symbolic link");
  std::ofstream(dir.path() / "plain") << "x";
  expect_unreadable(dir.path() / "plain" / "state", std::strerror(ENOTDIR));
}

TEST_F(DaemonServiceTest, AnOpenedReplyTooLongToSendEndsTheSession) {
  // A metric file whose path is longer than the protocol carries: the reply cannot be encoded
  // without cutting the path, so the client gets an error and the session does not stay open.
  ScratchDir metrics(std::filesystem::current_path());
  ::chmod(metrics.path().c_str(), 0755);
  auto deep = metrics.path();
  while (deep.string().size() <= wire::kMaxTextBytes) deep /= std::string(200, 'd');
  std::filesystem::create_directories(deep);
  for (auto p = deep; p != metrics.path(); p = p.parent_path()) ::chmod(p.c_str(), 0755);
  std::filesystem::copy_file(std::filesystem::path(OAPROF_IGT_METRICS_DIR) / "oa-kblgt2.xml",
                             deep / "oa-kblgt2.xml");
  ::chmod((deep / "oa-kblgt2.xml").c_str(), 0644);
  try {
    session::require_trusted_file(deep / "oa-kblgt2.xml", ::geteuid());
  } catch (const std::exception& e) {
    GTEST_SKIP() << "no metric file can be trusted here: " << e.what();
  }
  ServiceOptions o = options_with_metrics({deep});
  o.metrics_owner = ::geteuid();
  DaemonService service(o);
  auto request = open_request();
  request.metric_set = "ComputeBasic";
  const auto reply = wire::decode(service.handle(1, alice_, wire::encode({9, request})));
  ASSERT_TRUE(std::holds_alternative<wire::Message>(reply));
  const auto& m = std::get<wire::Message>(reply);
  EXPECT_EQ(m.request_id, 9u);
  ASSERT_TRUE(std::holds_alternative<wire::Error>(m.body));
  EXPECT_THAT(std::get<wire::Error>(m.body).message,
              HasSubstr("oaprofd cannot send its reply: its metrics file path is"));
  EXPECT_FALSE(service.session_open());
  EXPECT_FALSE(std::filesystem::exists(service.state_file()));
}

TEST(SessionJournalTest, TheStateFileStaysUnlessEveryRegisterIsBack) {
  ScratchDir dir;
  const auto regs = dir.path() / "regs";
  test_support::create_sim_file(regs);
  const auto before = test_support::file_bytes(regs);
  const auto state = dir.path() / "state";
  for (const bool restored : {false, true}) {
    SCOPED_TRACE(restored ? "marked restored" : "not marked");
    {
      session::SessionJournal journal(state,
                                      {"sim:" + regs.string(), {}, "uid 1, pid 2 since then", {}});
      gpu::DeviceOptions o;
      o.spec = oaprof::gpu::DeviceSpec::sim_file(regs);
      o.forcewake.mode = mmio::ForcewakeMode::kNone;
      o.wrap_mmio = [&](std::unique_ptr<mmio::Mmio> inner) {
        return journal.wrap(std::move(inner));
      };
      gpu::Device d = gpu::open_device(o);
      d.mmio->write32(0x9840, 0x80);
      d.mmio->write32(0x9840, 0x00);  // a second write keeps the first prior
      journal.write_back();
      if (restored) journal.mark_restored();
    }  // the device closes first, then the journal
    EXPECT_EQ(test_support::differing_registers(before, test_support::file_bytes(regs)),
              std::vector<std::size_t>{});
    EXPECT_EQ(std::filesystem::exists(state), !restored);
    if (!restored) {
      const auto c = session::read_state_file(state);
      ASSERT_TRUE(c.has_value());
      EXPECT_THAT(c->identity, HasSubstr("registers in " + regs.string()));
      ASSERT_EQ(c->entries.size(), 1u);
      EXPECT_EQ(c->entries[0].offset, 0x9840u);
      std::filesystem::remove(state);
    }
  }
}

// Why oaprofd would refuse IGT's Kaby Lake file where it is here (not root's all the way up), or
// empty when it would take it.
std::string igt_kbl_file_refused() {
  try {
    const std::filesystem::path file =
        std::filesystem::path(OAPROF_IGT_METRICS_DIR) / "oa-kblgt2.xml";
    session::require_trusted_file(std::filesystem::canonical(file));
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

TEST_F(DaemonServiceTest, ANamedSetFromTheDaemonsDirectoriesIsProgrammed) {
  const auto igt_file = std::filesystem::path(OAPROF_IGT_METRICS_DIR) / "oa-kblgt2.xml";
  if (const std::string why = igt_kbl_file_refused(); !why.empty()) {
    GTEST_SKIP() << "oaprofd would refuse IGT's files where they are here: " << why;
  }
  ServiceOptions o = options_with_metrics({dir_.path() / "absent", OAPROF_IGT_METRICS_DIR});
  DaemonService with_sets(o);
  auto request = open_request();
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(with_sets.handle(1, alice_, request)));
  const std::size_t builtin_registers =
      session::read_state_file(with_sets.state_file())->entries.size();
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(with_sets.handle(1, alice_, wire::Close{})));
  request.metric_set = "ComputeBasic";
  const wire::Body reply = with_sets.handle(1, alice_, request);
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(reply)) << std::get<wire::Error>(reply).message;
  const auto& opened = std::get<wire::Opened>(reply);
  EXPECT_EQ(opened.metric_set, "ComputeBasic");
  EXPECT_EQ(opened.metrics_file, std::filesystem::canonical(igt_file).string());
  // The set's mux and boolean programming went through the journal too.
  const auto state = session::read_state_file(with_sets.state_file());
  ASSERT_TRUE(state.has_value());
  EXPECT_GT(state->entries.size(), builtin_registers);
  request.metric_set = "NoSuchSet";
  EXPECT_TRUE(std::holds_alternative<wire::Ok>(with_sets.handle(1, alice_, wire::Close{})));
  EXPECT_THAT(std::get<wire::Error>(with_sets.handle(1, alice_, request)).message,
              HasSubstr("metric set 'NoSuchSet' is not in"));
}

// Kernel replay across sets through oaprofd: the holder switches the unit among the sets of the
// file its session opened, by name. Each switch reprograms the registers; an unknown name is
// refused and a client without the session is told so; closing puts every register back.
TEST_F(DaemonServiceTest, TheHolderSwitchesAmongSetsOfItsFileAndCloseRestoresEveryRegister) {
  if (const std::string why = igt_kbl_file_refused(); !why.empty()) GTEST_SKIP() << why;
  ServiceOptions o = options_with_metrics({OAPROF_IGT_METRICS_DIR});
  o.log = [this](int, const std::string& line) { log_ += line + "\n"; };
  DaemonService with_sets(o);
  const auto before = test_support::file_bytes(regs_);
  EXPECT_EQ(std::get<wire::Error>(with_sets.handle(1, alice_, wire::SwitchSet{"L3_1"})).code,
            wire::ErrorCode::kNoSession);
  auto request = open_request();
  request.metric_set = "ComputeBasic";
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(with_sets.handle(1, alice_, request)));
  const auto compute = test_support::file_bytes(regs_);
  for (int i = 0; i < 2; ++i) {
    const wire::Body to_l3 = with_sets.handle(1, alice_, wire::SwitchSet{"L3_1"});
    ASSERT_TRUE(std::holds_alternative<wire::Ok>(to_l3)) << std::get<wire::Error>(to_l3).message;
    EXPECT_FALSE(
        test_support::differing_registers(compute, test_support::file_bytes(regs_)).empty());
    ASSERT_TRUE(std::holds_alternative<wire::Ok>(
        with_sets.handle(1, alice_, wire::SwitchSet{"ComputeBasic"})));
  }
  const wire::Body sampled = with_sets.handle(1, alice_, wire::Sample{3, wire::kSampleReport});
  EXPECT_TRUE(std::holds_alternative<wire::Sampled>(sampled));
  const wire::Body unknown = with_sets.handle(1, alice_, wire::SwitchSet{"NoSuchSet"});
  EXPECT_EQ(std::get<wire::Error>(unknown).code, wire::ErrorCode::kBadRequest);
  EXPECT_THAT(std::get<wire::Error>(unknown).message,
              HasSubstr("metric set 'NoSuchSet' is not in"));
  EXPECT_EQ(std::get<wire::Error>(with_sets.handle(2, bob_, wire::SwitchSet{"L3_1"})).code,
            wire::ErrorCode::kNoSession);
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(with_sets.handle(1, alice_, wire::Close{})));
  EXPECT_EQ(test_support::differing_registers(before, test_support::file_bytes(regs_)),
            std::vector<std::size_t>{});
  // Said once per set, not once per switch.
  const std::string line = "switches among metric sets, now also L3_1";
  ASSERT_NE(log_.find(line), std::string::npos) << log_;
  EXPECT_EQ(log_.find(line), log_.rfind(line));
}

// A hostile holder's file: the session opened a set from a file the client named, and that file
// is checked again at every set it switches to. Made writable by others after the open, or
// swapped for a symbolic link, it is refused, and the unit keeps the set it had.
TEST_F(DaemonServiceTest, ASwitchChecksTheClientsFileAgain) {
  const test_support::TrustedMetricsDir metrics(std::filesystem::path(OAPROF_IGT_METRICS_DIR) /
                                                "oa-kblgt2.xml");
  const std::filesystem::path file = metrics.path() / "oa-kblgt2.xml";
  ServiceOptions o = options_with_metrics({metrics.path()});
  DaemonService with_sets(o);
  auto request = open_request();
  request.metric_set = "ComputeBasic";
  request.metrics_xml = file.string();
  const wire::Body opened = with_sets.handle(1, alice_, request);
  if (const auto* e = std::get_if<wire::Error>(&opened)) {
    GTEST_SKIP() << "oaprofd would refuse a file here: " << e->message;
  }
  ASSERT_TRUE(
      std::holds_alternative<wire::Ok>(with_sets.handle(1, alice_, wire::SwitchSet{"L3_1"})));
  const auto l3 = test_support::file_bytes(regs_);
  ::chmod(file.c_str(), 0666);
  const wire::Body writable = with_sets.handle(1, alice_, wire::SwitchSet{"Sampler"});
  ASSERT_TRUE(std::holds_alternative<wire::Error>(writable));
  EXPECT_EQ(std::get<wire::Error>(writable).code, wire::ErrorCode::kBadRequest);
  ::chmod(file.c_str(), 0644);
  const std::filesystem::path real = metrics.path() / "real.xml";
  std::filesystem::rename(file, real);
  std::filesystem::create_symlink(real, file);
  const wire::Body linked = with_sets.handle(1, alice_, wire::SwitchSet{"Sampler"});
  ASSERT_TRUE(std::holds_alternative<wire::Error>(linked));
  EXPECT_EQ(std::get<wire::Error>(linked).code, wire::ErrorCode::kBadRequest);
  EXPECT_EQ(test_support::differing_registers(l3, test_support::file_bytes(regs_)),
            std::vector<std::size_t>{})
      << "a refused switch leaves the unit as it was";
  // The sets it already read stay what they were.
  EXPECT_TRUE(std::holds_alternative<wire::Ok>(
      with_sets.handle(1, alice_, wire::SwitchSet{"ComputeBasic"})));
  EXPECT_TRUE(std::holds_alternative<wire::Ok>(with_sets.handle(1, alice_, wire::Close{})));
}

// A holder that names set after set keeps at most kMaxSessionSets programmings in the daemon's
// memory: a file with more sets than that (IGT's ComputeBasic copied under other names) lets it
// switch among the first ones and refuses the next with the bound, while sets already read
// still switch.
TEST_F(DaemonServiceTest, ASessionSwitchesAmongABoundedNumberOfSets) {
  std::ifstream in(std::filesystem::path(OAPROF_IGT_METRICS_DIR) / "oa-kblgt2.xml");
  std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t symbol = xml.find("symbol_name=\"ComputeBasic\"");
  ASSERT_NE(symbol, std::string::npos);
  const std::size_t begin = xml.rfind("<set", symbol);
  const std::size_t end = xml.find("</set>", symbol) + std::string("</set>").size();
  const std::string set = xml.substr(begin, end - begin);
  std::string copies;
  for (std::size_t i = 0; i < DaemonService::kMaxSessionSets; ++i) {
    std::string copy = set;
    const std::string name = "symbol_name=\"ComputeBasic\"";
    copy.replace(copy.find(name), name.size(), fmt::format("symbol_name=\"Copy{}\"", i));
    // The GUID's last group, 12 hex digits, made the copy's own.
    const std::string guid = "hw_config_guid=\"";
    copy.replace(copy.find(guid) + guid.size() + 24, 12, fmt::format("{:012x}", i));
    copies += copy + "\n";
  }
  xml.insert(end, "\n" + copies);
  test_support::ScratchDir source;
  std::ofstream(source.path() / "oa-kblgt2.xml") << xml;
  const test_support::TrustedMetricsDir metrics(source.path() / "oa-kblgt2.xml");
  ServiceOptions o = options_with_metrics({metrics.path()});
  DaemonService with_sets(o);
  auto request = open_request();
  request.metric_set = "ComputeBasic";
  const wire::Body opened = with_sets.handle(1, alice_, request);
  if (const auto* e = std::get_if<wire::Error>(&opened)) {
    GTEST_SKIP() << "oaprofd would refuse a file here: " << e->message;
  }
  // ComputeBasic is the first kept; 63 copies make 64.
  for (std::size_t i = 0; i + 1 < DaemonService::kMaxSessionSets; ++i) {
    const wire::Body r = with_sets.handle(1, alice_, wire::SwitchSet{fmt::format("Copy{}", i)});
    ASSERT_TRUE(std::holds_alternative<wire::Ok>(r))
        << i << ": " << std::get<wire::Error>(r).message;
  }
  const std::string last = fmt::format("Copy{}", DaemonService::kMaxSessionSets - 1);
  const wire::Body refused = with_sets.handle(1, alice_, wire::SwitchSet{last});
  ASSERT_TRUE(std::holds_alternative<wire::Error>(refused));
  EXPECT_THAT(std::get<wire::Error>(refused).message, HasSubstr("at most 64 metric sets"));
  EXPECT_TRUE(
      std::holds_alternative<wire::Ok>(with_sets.handle(1, alice_, wire::SwitchSet{"Copy0"})));
  EXPECT_TRUE(std::holds_alternative<wire::Ok>(with_sets.handle(1, alice_, wire::Close{})));
}

TEST_F(DaemonServiceTest, APerfSessionsSamplesCarryTheStreamsLosses) {
  // IGT's file from its own directory: a checkout below /tmp (writable by others) is refused.
  if (const std::string why = igt_kbl_file_refused(); !why.empty()) {
    GTEST_SKIP() << "oaprofd would refuse IGT's files where they are here: " << why;
  }
  ServiceOptions o;
  o.device.spec = oaprof::gpu::DeviceSpec::sim_file(regs_);
  // A report every 64 timestamp ticks (5.33 µs) fills a 256 KiB OA buffer in 6 ms (i915's
  // 16 MiB would take 350 ms, some minutes of reports in a sanitizer build).
  o.device.perf_period_exponent = 5;
  o.device.sim_oa_buffer_bytes = 256u << 10;
  o.state_dir = dir_.path();
  o.metrics_dirs = {OAPROF_IGT_METRICS_DIR};
  DaemonService perf(o);
  auto request = open_request();
  request.access = "perf";
  request.metric_set = "ComputeBasic";
  const wire::Body opened = perf.handle(1, alice_, request);
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(opened))
      << std::get<wire::Error>(opened).message;
  const auto sample = [&] {
    const wire::Body reply = perf.handle(1, alice_, wire::Sample{1, wire::kSampleReport});
    EXPECT_TRUE(std::holds_alternative<wire::Sampled>(reply));
    return std::get<wire::Sampled>(reply);
  };
  (void)sample();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // nobody reads: it overflows
  const wire::Sampled lossy = sample();
  ASSERT_TRUE(lossy.stream_losses.has_value());
  EXPECT_GE(lossy.stream_losses->buffer_lost, 1u);
  EXPECT_TRUE(std::holds_alternative<wire::Ok>(perf.handle(1, alice_, wire::Close{})));
}

// Issue 16: oaprofd serves a part xe drives (a simulated Lunar Lake) through xe's observation
// stream: the Opened names the part, the PEC format and the facts xe's queries gave, and each
// snapshot is a whole 576-byte report that crosses the protocol intact. The register read-outs
// are refused with the reason, as real hardware refuses them.
TEST_F(DaemonServiceTest, AnXe2PartIsServedThroughXesObservationStream) {
  const test_support::TrustedMetricsDir metrics(std::filesystem::path(OAPROF_IGT_XE_METRICS_DIR) /
                                                "oa-lnl.xml");
  DaemonService service(test_support::sim_xe_service_options(dir_.path(), metrics.path()));
  auto request = open_request();
  request.access = "perf";
  request.format = "auto";
  request.metric_set = "ComputeBasic";
  const wire::Body reply = service.handle(1, alice_, request);
  if (const auto* e = std::get_if<wire::Error>(&reply)) {
    if (e->message.find("refuses the metric file") != std::string::npos) {
      GTEST_SKIP() << "the build directory cannot hold a trusted metric file: " << e->message;
    }
    FAIL() << e->message;
  }
  const auto& opened = std::get<wire::Opened>(reply);
  EXPECT_EQ(opened.pci_id, 0x64A0);
  EXPECT_EQ(opened.format, "PEC64u64");
  EXPECT_EQ(opened.metric_set, "ComputeBasic");
  EXPECT_EQ(opened.facts.topology_source, oa::TopologySource::kXeQuery);
  EXPECT_EQ(opened.facts.timestamp_source, oa::TimestampSource::kXeOaUnit);
  EXPECT_TRUE(opened.facts.compute_engines.has_value());
  // What the client reads back is what the daemon read.
  const auto crossed =
      std::get<wire::Opened>(std::get<wire::Message>(wire::decode(wire::encode({1, opened}))).body);
  EXPECT_EQ(crossed.facts.compute_engines, opened.facts.compute_engines);
  EXPECT_EQ(crossed.facts.topology.eus, opened.facts.topology.eus);

  const wire::Body sampled = service.handle(1, alice_, wire::Sample{1, wire::kSampleReport});
  ASSERT_TRUE(std::holds_alternative<wire::Sampled>(sampled))
      << std::get<wire::Error>(sampled).message;
  const auto back = std::get<wire::Sampled>(
      std::get<wire::Message>(wire::decode(wire::encode({2, sampled}))).body);
  ASSERT_TRUE(back.report.has_value());
  EXPECT_EQ(back.report->size(), 576u);
  EXPECT_EQ(back.report, std::get<wire::Sampled>(sampled).report);
  // Only one stream per OA unit: a second client is told who holds it.
  const wire::Body second = service.handle(2, bob_, request);
  ASSERT_TRUE(std::holds_alternative<wire::Error>(second));
  EXPECT_EQ(std::get<wire::Error>(second).code, wire::ErrorCode::kBusy);
  ASSERT_TRUE(std::holds_alternative<wire::Ok>(service.handle(1, alice_, wire::Close{})));

  for (const char* access : {"mmio", "rpc"}) {
    request.access = access;
    const wire::Body refused = service.handle(1, alice_, request);
    ASSERT_TRUE(std::holds_alternative<wire::Error>(refused)) << access;
    EXPECT_THAT(std::get<wire::Error>(refused).message, HasSubstr("use --access perf"));
  }
}

TEST_F(DaemonServiceTest, FilesInTheDaemonsDirectoriesMustBeRootsAndUnwritableByOthers) {
  // A directory of the daemon's own, beside the test rather than under the world-writable /tmp.
  ScratchDir metrics(std::filesystem::current_path());
  ::chmod(metrics.path().c_str(), 0755);
  const auto file = metrics.path() / "oa-kblgt2.xml";
  std::filesystem::copy_file(std::filesystem::path(OAPROF_IGT_METRICS_DIR) / "oa-kblgt2.xml", file);
  ::chmod(file.c_str(), 0644);
  ServiceOptions o = options_with_metrics({metrics.path()});
  o.metrics_owner = ::geteuid();  // root here; the owner the test can be without root
  DaemonService service(o);
  auto request = open_request();
  request.metric_set = "ComputeBasic";
  const auto open_error = [&]() -> std::string {
    const wire::Body reply = service.handle(1, alice_, request);
    if (const auto* e = std::get_if<wire::Error>(&reply)) {
      EXPECT_EQ(e->code, wire::ErrorCode::kBadRequest);
      return e->message;
    }
    EXPECT_TRUE(std::holds_alternative<wire::Ok>(service.handle(1, alice_, wire::Close{})));
    return {};
  };
  // The place itself must be trusted for the first case to mean anything.
  struct stat st {};
  for (auto p = metrics.path().parent_path();; p = p.parent_path()) {
    ASSERT_EQ(::lstat(p.c_str(), &st), 0);
    if (S_ISLNK(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 022) != 0) {
      GTEST_SKIP() << p << " is not the test's own and unwritable by others, so no metric file "
                   << "below it can be trusted";
    }
    if (p == p.root_path()) break;
  }
  EXPECT_EQ(open_error(), "");

  ::chmod(metrics.path().c_str(), 0777);
  EXPECT_THAT(open_error(), HasSubstr(metrics.path().string() + " is writable by group or others"));
  ::chmod(metrics.path().c_str(), 0755);

  ::chmod(file.c_str(), 0666);
  EXPECT_THAT(open_error(), HasSubstr(file.string() + " is writable by group or others"));
  ::chmod(file.c_str(), 0644);

  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(file.c_str(), 4242, 4242), 0);
    const std::string e = open_error();
    EXPECT_THAT(e, HasSubstr(file.string() + " is owned by uid 4242"));
    EXPECT_THAT(e, HasSubstr("take the directory out of oaprofd's --metrics-dir"));
    ASSERT_EQ(::chown(file.c_str(), 0, 0), 0);
  }

  // A symbolic link from the configured directory is followed, and the target judged.
  ScratchDir linked(std::filesystem::current_path());
  const auto link_dir = linked.path() / "metrics";
  std::filesystem::create_directory_symlink(metrics.path(), link_dir);
  ServiceOptions through_link = o;
  through_link.metrics_dirs = {link_dir};
  DaemonService via_link(through_link);
  const wire::Body reply = via_link.handle(1, alice_, request);
  ASSERT_TRUE(std::holds_alternative<wire::Opened>(reply)) << std::get<wire::Error>(reply).message;
  EXPECT_EQ(std::get<wire::Opened>(reply).metrics_file, std::filesystem::canonical(file).string());
  EXPECT_FALSE(service.session_open());
}

TEST(StateDirTest, OneItCreatesIsOpenedToClientsAnExistingOneMustBeClosedAndOurs) {
  ScratchDir dir;
  const auto run = dir.path() / "run" / "oaprof";
  session::prepare_state_dir(run);
  struct stat st {};
  ASSERT_EQ(::stat(run.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);              // clients reach oaprofd's socket in it
  EXPECT_NO_THROW(session::prepare_state_dir(run));  // ours and closed: taken as it is
  const auto refused = [](const std::filesystem::path& p) -> std::string {
    try {
      session::prepare_state_dir(p);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "accepted";
  };
  ::chmod(run.c_str(), 01777);  // as /tmp is
  EXPECT_THAT(refused(run), HasSubstr(run.string() + " is writable by group or others"));
  EXPECT_EQ(::stat(run.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 01777u) << "an existing directory keeps its mode";
  ::chmod(run.c_str(), 0755);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(run.c_str(), 4242, 4242), 0);
    EXPECT_THAT(refused(run), HasSubstr("is owned by uid 4242, not 0"));
  }
  std::ofstream(dir.path() / "file") << "x";
  EXPECT_THAT(refused(dir.path() / "file"), HasSubstr("is not a directory"));
  EXPECT_EQ(session::state_dir_from({}), std::filesystem::path(session::kDefaultStateDir));
  EXPECT_EQ(session::state_dir_from({{session::kStateDirEnv, "/elsewhere"}}),
            std::filesystem::path("/elsewhere"));
}

TEST(TrustedMetricsTest, SkylakeGt15HasNoIgtSetButTheBuiltinOneWorks) {
  // 0x1913 is in the kernel's INTEL_SKL_ULT_GT1_IDS ("GT1.5"), so IGT, which takes the kernel's
  // GT, loads no metric set for it (Mesa calls it GT2): an IGT set is refused by name.
  const oa::Platform skl = *oa::platform_for_pci_id(0x1913);
  ScratchDir dir;
  EXPECT_EQ(
      session::choose_metric_set(skl, oa::kBuiltinMetricSetSymbol, "", {dir.path()}).set.symbol(),
      oa::kBuiltinMetricSetSymbol);
  try {
    session::choose_metric_set(skl, "ComputeBasic", "", {dir.path()});
    FAIL() << "SKL GT1.5 has no IGT metric set";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("IGT describes no metric set for SKL GT1.5"));
    EXPECT_THAT(e.what(), HasSubstr("--metric-set Builtin"));
  }
}

TEST(TrustedFileTest, OnlyRootOwnedChainsWithoutOtherWritersPass) {
  struct stat st {};
  if (::stat("/etc/passwd", &st) != 0 || st.st_uid != 0 || (st.st_mode & 022) != 0) {
    GTEST_SKIP() << "/etc/passwd is not a root-owned, unwritable file here";
  }
  EXPECT_NO_THROW(session::require_trusted_file("/etc/passwd"));
  ScratchDir dir;  // under /dev/shm or /tmp, which everyone may write
  const auto file = dir.path() / "f.xml";
  std::ofstream(file) << "x";
  try {
    session::require_trusted_file(file);
    ADD_FAILURE() << "a file under " << dir.path().parent_path() << " passed";
  } catch (const std::invalid_argument& e) {
    // As root the file and its directory pass and the shared parent is the culprit; otherwise
    // the file.
    EXPECT_THAT(e.what(), HasSubstr(::geteuid() == 0 ? dir.path().parent_path().string() +
                                                           " is writable by group or others"
                                                     : "is owned by uid"));
  }
  const auto link = dir.path() / "link.xml";
  std::filesystem::create_symlink("/etc/passwd", link);
  EXPECT_THROW(session::require_trusted_file(link), std::invalid_argument);
  // stat succeeded: the message names what the path is, whatever errno held before.
  errno = EACCES;
  try {
    session::require_trusted_file("/etc");
    ADD_FAILURE() << "a directory passed";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("/etc: not a regular file (a directory)"));
    EXPECT_THAT(e.what(), ::testing::Not(HasSubstr(std::strerror(EACCES))));
  }
  // Another owner is refused even where no one else may write.
  EXPECT_THROW(session::require_trusted_file("/etc/passwd", 1234), std::invalid_argument);
}

}  // namespace
}  // namespace oaprof::daemon
