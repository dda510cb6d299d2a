// --metrics-xml as a hostile client of oaprofd names it: files outside the daemon's directories
// (the daemon would read them as root and quote them back), "..", links to /etc/shadow, FIFOs,
// files of the user's, not-XML files, and a malformed file whose error would echo its content.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "daemon/daemon_service.h"
#include "session/trusted_metrics.h"
#include "tests/common/daemon_test_util.h"
#include "tests/security/hostile.h"

namespace oaprof::session {
namespace {

namespace fs = std::filesystem;
namespace wire = ipc::wire;
using ::testing::HasSubstr;
using ::testing::Not;

class MetricPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Beside the test, not under the world-writable /tmp, where nothing can be trusted.
    ::chmod(dir_.path().c_str(), 0755);
    fs::create_directory(metrics_);
    ::chmod(metrics_.c_str(), 0755);
    install(metrics_ / "oa-kblgt2.xml",
            std::ifstream(fs::path(OAPROF_IGT_METRICS_DIR) / "oa-kblgt2.xml"));
    try {
      require_trusted_file(metrics_ / "oa-kblgt2.xml", ::geteuid());
    } catch (const std::exception& e) {
      GTEST_SKIP() << "no metric file can be trusted here: " << e.what();
    }
    test_support::create_sim_file(regs_);
    daemon::ServiceOptions o;
    o.device.spec = oaprof::gpu::DeviceSpec::sim_file(regs_);
    o.state_dir = dir_.path();
    o.metrics_dirs = {metrics_};
    o.metrics_owner = ::geteuid();
    o.log = [this](int, const std::string& line) { log_ += line + "\n"; };
    service_ = std::make_unique<daemon::DaemonService>(o);
  }

  static void install(const fs::path& p, std::istream&& text) {
    std::ofstream(p) << text.rdbuf();
    ::chmod(p.c_str(), 0644);
  }
  static void install(const fs::path& p, const std::string& text) {
    std::ofstream(p) << text;
    ::chmod(p.c_str(), 0644);
  }

  // The refusal of an open naming `xml`, or "" when it opened (then closed again).
  std::string open_error(const std::string& xml) {
    wire::Open o;
    o.pid = 1;
    o.energy = "none";
    o.metric_set = "ComputeBasic";
    o.metrics_xml = xml;
    const wire::Body reply = service_->handle(1, daemon::Peer{1000, 1000, 4321}, o);
    if (const auto* e = std::get_if<wire::Error>(&reply)) return e->message;
    EXPECT_TRUE(std::holds_alternative<wire::Ok>(service_->handle(1, {}, wire::Close{})));
    return "";
  }

  test_support::ScratchDir dir_{fs::current_path()};
  fs::path metrics_ = dir_.path() / "metrics";
  fs::path regs_ = dir_.path() / "regs";
  std::string log_;
  std::unique_ptr<daemon::DaemonService> service_;
};

TEST_F(MetricPathTest, AFileOutsideTheDaemonsDirectoriesIsNeitherReadNorQuoted) {
  // Root's own file in a root-only chain, just not one of the daemon's metric directories.
  const fs::path secret = dir_.path() / "secret.xml";
  install(secret, "<secret-root-token/>\n");
  const std::string e = open_error(secret.string());
  EXPECT_THAT(e, HasSubstr("oaprofd refuses the metric file " + secret.string() +
                           ": it is not in one of oaprofd's metric directories (" +
                           metrics_.string() + ")"));
  EXPECT_THAT(e, Not(HasSubstr("secret-root-token")));
  EXPECT_THAT(open_error("/etc/shadow"), HasSubstr("not an .xml file"));
  EXPECT_THAT(open_error((metrics_ / ".." / "secret.xml").string()),
              HasSubstr("it has a '..' component"));
  EXPECT_THAT(open_error("metrics/oa-kblgt2.xml"), HasSubstr("oaprofd needs an absolute path"));
  EXPECT_FALSE(service_->session_open());
}

TEST_F(MetricPathTest, LinksFifosAndOthersFilesInTheDirectoryAreRefused) {
  EXPECT_EQ(open_error((metrics_ / "oa-kblgt2.xml").string()), "") << "the control case opens";

  fs::create_symlink("/etc/shadow", metrics_ / "shadow.xml");
  EXPECT_THAT(open_error((metrics_ / "shadow.xml").string()),
              HasSubstr((metrics_ / "shadow.xml").string() + " is a symbolic link"));
  fs::create_directory_symlink("/etc", metrics_ / "etc");
  EXPECT_THAT(open_error((metrics_ / "etc" / "passwd.xml").string()),
              HasSubstr((metrics_ / "etc").string() + " is a symbolic link"));

  ASSERT_EQ(::mkfifo((metrics_ / "fifo.xml").c_str(), 0644), 0);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_THAT(open_error((metrics_ / "fifo.xml").string()),
              HasSubstr("not a regular file (a device, socket or pipe)"));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5))
      << "a FIFO must not be opened and waited on";

  if (::geteuid() == 0) {
    install(metrics_ / "users.xml",
            std::ifstream(fs::path(OAPROF_IGT_METRICS_DIR) / "oa-kblgt2.xml"));
    ASSERT_EQ(::chown((metrics_ / "users.xml").c_str(), security::kUser, security::kUserGroup), 0);
    EXPECT_THAT(open_error((metrics_ / "users.xml").string()),
                HasSubstr((metrics_ / "users.xml").string() + " is owned by uid 65534"));
  }
  install(metrics_ / "notes.txt", "<metrics/>");
  EXPECT_THAT(open_error((metrics_ / "notes.txt").string()), HasSubstr("not an .xml file"));
  EXPECT_FALSE(service_->session_open());
}

TEST_F(MetricPathTest, AnImportErrorNamesTheFileNotItsContent) {
  install(metrics_ / "bad.xml", "<secret-token-9876/>\n");
  const std::string e = open_error((metrics_ / "bad.xml").string());
  EXPECT_THAT(e,
              HasSubstr("oaprofd cannot import the metric file " + (metrics_ / "bad.xml").string() +
                        ": it is not a valid IGT metric file"));
  EXPECT_THAT(e, Not(HasSubstr("secret-token")));
  // The administrator still learns where it broke, in the daemon's own log.
  EXPECT_THAT(log_, HasSubstr("secret-token-9876"));
  EXPECT_FALSE(service_->session_open());
}

}  // namespace
}  // namespace oaprof::session
