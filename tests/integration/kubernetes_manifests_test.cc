// deploy/kubernetes/check_manifests.py on the shipped manifests, with oaprofd's real options
// (`oaprofd --help-all`), and on copies with one mistake each, which it must name: a port, a
// label, a flag, a host path or a group that one object gives and another does not take.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>

#include "tests/common/run_util.h"

namespace {

namespace fs = std::filesystem;
using oaprof::testing::CommandResult;
using oaprof::testing::read_file;
using oaprof::testing::run;
using oaprof::testing::shell_quote;
using ::testing::HasSubstr;

class KubernetesManifestsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (run("python3 -c 'import yaml'").status != 0) {
      GTEST_SKIP() << "no python3 with PyYAML (Debian's python3-yaml)";
    }
    dir_ = fs::temp_directory_path() / ("oaprof-k8s-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const auto help = run(shell_quote(OAPROFD_BIN) + " --help-all > " +
                          shell_quote((dir_ / "help.txt").string()));
    ASSERT_EQ(help.status, 0) << help.output;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  CommandResult check(const fs::path& manifests) {
    return run("python3 " + shell_quote(OAPROF_KUBERNETES_DIR "/check_manifests.py") + " --dir " +
               shell_quote(manifests.string()) + " --oaprofd-help " +
               shell_quote((dir_ / "help.txt").string()));
  }

  // The checker's verdict on a copy of the manifests with `from` replaced by `to` in `file`.
  CommandResult check_changed(const std::string& file, const std::string& from,
                              const std::string& to) {
    const fs::path copy = dir_ / "copy";
    fs::remove_all(copy);
    fs::copy(OAPROF_KUBERNETES_DIR, copy);
    std::string text = read_file(copy / file);
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from << " is not in " << file;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    std::ofstream(copy / file, std::ios::trunc) << text;
    return check(copy);
  }

  fs::path dir_;
};

TEST_F(KubernetesManifestsTest, ShippedManifestsAreConsistent) {
  const auto r = check(OAPROF_KUBERNETES_DIR);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("documents consistent"));
}

// One mistake in one file, and what the checker must say about it.
struct Mistake {
  const char* what;
  const char* file;
  const char* from;
  const char* to;
  const char* reported;
};

// Names the parameter in ctest's test names (not its bytes).
void PrintTo(const Mistake& m, std::ostream* os) { *os << m.what; }

class KubernetesMistakeTest : public KubernetesManifestsTest,
                              public ::testing::WithParamInterface<Mistake> {};

TEST_P(KubernetesMistakeTest, IsNamed) {
  const Mistake& m = GetParam();
  const auto r = check_changed(m.file, m.from, m.to);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(m.reported));
}

INSTANTIATE_TEST_SUITE_P(
    Manifests, KubernetesMistakeTest,
    ::testing::Values(
        Mistake{"YamlError", "service.yaml", "  clusterIP: None", "  clusterIP: [None",
                "service.yaml: does not parse as YAML"},
        Mistake{"ServicePortThePodDoesNotDeclare", "service.yaml", "      port: 9464",
                "      port: 9465", "service.yaml: port metrics (9465"},
        Mistake{"MonitorPortTheServiceLacks", "servicemonitor.yaml", "    - port: metrics",
                "    - port: http", "servicemonitor.yaml: port 'http' is not one of"},
        Mistake{"SelectorThatMissesThePods", "podmonitor.yaml", "app.kubernetes.io/name: oaprofd",
                "app.kubernetes.io/name: oaprof-daemon",
                "podmonitor.yaml: spec.selector does not match"},
        Mistake{"OptionOaprofdDoesNotHave", "daemonset.yaml", "- --metrics-listen",
                "- --metrics-address",
                "daemonset.yaml: --metrics-address is not an option of oaprofd"},
        Mistake{"ExporterPortOtherThanTheContainers", "daemonset.yaml", "0.0.0.0:9464",
                "0.0.0.0:9100", "--metrics-listen 0.0.0.0:9100 is not port metrics (9464)"},
        Mistake{"StateDirectoryOffTheHost", "daemonset.yaml", "            path: /run/oaprof",
                "            path: /var/run/oaprofd",
                "--state-dir /run/oaprof is not the host's /run/oaprof"},
        Mistake{"WorkloadWithoutTheSocketsGroup", "workload-example.yaml", "      - 4464",
                "      - 4465", "lack oaprofd's --group 4464"},
        Mistake{"WorkloadThatMountsTheSocketElsewhere", "workload-example.yaml",
                "          mountPath: /run/oaprof", "          mountPath: /var/run/oaprof",
                "oaprof looks for /run/oaprof/oaprofd.sock, which is not"},
        Mistake{"PrivilegedDaemonSet", "daemonset.yaml", "privileged: false", "privileged: true",
                "oaprofd must run unprivileged"},
        Mistake{"MonitorThatOverwritesPodLabels", "servicemonitor.yaml", "honorLabels: true",
                "honorLabels: false", "servicemonitor.yaml: does not honour the exporter's labels"},
        Mistake{"ScrapeJobThatOverwritesPodLabels", "prometheus-scrape.yaml", "honor_labels: true",
                "honor_labels: false",
                "prometheus-scrape.yaml: does not honour the exporter's labels"},
        Mistake{"ScrapeJobThatDropsThePods", "prometheus-scrape.yaml", "regex: oaprofd",
                "regex: oaprof-exporter", "no keep rule that keeps pods labelled"}),
    [](const ::testing::TestParamInfo<Mistake>& param) { return std::string(param.param.what); });

}  // namespace
