// A metric file an attacker writes to make the importer quadratic: every counter is a `$Name` to
// resolve, and the references form one chain as long as the file. Importing it, and asking which
// counters a device can compute, must cost time in proportion to its size.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "oa/metric_xml.h"
#include "oa/platform.h"
#include "oa/topology.h"

namespace oaprof::oa {
namespace {

// A set of `n` counters, each reading the one before: every counter is a `$Name` to resolve and
// the references form one chain n deep.
std::string chain_metric_file(int n) {
  std::string xml =
      "<?xml version=\"1.0\"?>\n<metrics version=\"1\">\n"
      "<set name=\"Chain\" symbol_name=\"Chain\" chipset=\"KBLGT2\">\n";
  for (int i = 0; i < n; ++i) {
    xml += fmt::format(
        "<counter name=\"C{0}\" symbol_name=\"C{0}\" data_type=\"uint64\" units=\"events\" "
        "equation=\"{1}\"/>\n",
        i, i == 0 ? std::string("A 0 READ") : fmt::format("$C{} 1 UADD", i - 1));
  }
  return xml + "</set>\n</metrics>\n";
}

// Runs `body` in a child limited to `cpu_seconds` of CPU time (SIGXCPU past it); its exit status,
// 128 + N when a signal N ended it. CPU time, not wall time: a loaded machine does not fail it.
int run_with_cpu_limit(rlim_t cpu_seconds, const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const rlimit limit{cpu_seconds, cpu_seconds + 5};  // SIGXCPU, then SIGKILL
    if (::setrlimit(RLIMIT_CPU, &limit) != 0) ::_exit(90);
    ::_exit(body());
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// 300 000 counters in a chain, about 33 MB of XML: linear import and availability take about a
// second of CPU time, where resolving each `$Name` by scanning the set took 80 s (and walking the
// chain once per counter overflowed the stack). 20 s is many times the linear cost, even under a
// sanitizer, and a quarter of the quadratic one.
TEST(HostileMetricFileTest, ImportAndAvailabilityAreLinearInTheNumberOfCounters) {
  constexpr int kCounters = 300'000;
  const std::string xml = chain_metric_file(kCounters);
  const int status = run_with_cpu_limit(20, [&xml] {
    const MetricFile file = import_metrics_xml(xml, "chain.xml");
    if (file.sets.size() != 1 || file.sets[0].counters().size() != kCounters) return 1;
    const MetricSet& set = file.sets[0];
    if (set.counter_index(fmt::format("C{}", kCounters - 1)) != kCounters - 1) return 2;
    const auto vars = device_variables(simulated_platform());
    const std::vector<bool> available = set.available_counters(vars);
    if (std::count(available.begin(), available.end(), true) != kCounters) return 3;
    if (!set.unknown_inputs(vars).back().empty()) return 4;
    return 0;
  });
  EXPECT_EQ(status, 0) << "128 + " << SIGXCPU << " or 128 + " << SIGKILL
                       << ": past the CPU-time limit";
}

}  // namespace
}  // namespace oaprof::oa
