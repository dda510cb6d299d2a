// Runs the kernel_runner executable: the catalogue listing, name suggestions, sweeps (one row per
// step, marks where the launch fills the hardware threads), peaks and the usage exit code.
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

struct Result {
  int status = -1;
  std::string out;  // stdout only
};

// Captures stdout, or stderr alone when `want_stderr`.
Result run(const std::string& args, bool want_stderr = false) {
  Result r;
  FILE* p = ::popen(fmt::format("{} {} {}", KERNEL_RUNNER_BIN, args,
                                want_stderr ? "2>&1 >/dev/null" : "2>/dev/null")
                        .c_str(),
                    "r");
  if (!p) return r;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) r.out += buf;
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

std::string stderr_of(const std::string& args) { return run(args, true).out; }

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

constexpr const char* kSmall = "--wi 8 --iterations 8 --min-time 0 --max-repeats 2 --quiet";

TEST(KernelRunnerTest, ListsTheWholeCatalogue) {
  const Result r = run("--list");
  EXPECT_EQ(r.status, 0);
  const auto l = lines(r.out);
  EXPECT_EQ(l.size(), 153u);
  EXPECT_THAT(r.out, HasSubstr("\nmad_vect4 "));
  EXPECT_THAT(r.out, HasSubstr("\npchase_lat "));
  EXPECT_THAT(r.out, HasSubstr("\npower_add_int_vect16 "));
}

TEST(KernelRunnerTest, UnknownNamesSuggestTheNearest) {
  const Result r = run("mad_vec4");
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(stderr_of("mad_vec4"),
              HasSubstr("unknown kernel 'mad_vec4'; did you mean mad_vect4"));
}

TEST(KernelRunnerTest, BadOptionsAreUsageErrors) {
  EXPECT_EQ(run("load_store_vect4 --size 12Q").status, 2);
  EXPECT_EQ(run("mad_vect4 --sweep wg=4:1").status, 2);
  EXPECT_EQ(run("mad_vect4 --variant fastest").status, 2);
  EXPECT_THAT(stderr_of("mad_vect4 --variant fastest"), HasSubstr("use private, loop"));
}

TEST(KernelRunnerTest, AWorkGroupSweepHasOneRowPerStep) {
  const Result r = run(fmt::format("mad_scalar {} --sweep wg=1:5 --csv", kSmall));
  ASSERT_EQ(r.status, 0) << r.out;
  const auto l = lines(r.out);
  ASSERT_EQ(l.size(), 6u) << r.out;  // header + 5 steps
  for (std::size_t step = 1; step <= 5; ++step) {
    EXPECT_EQ(l[step].rfind(fmt::format("mad_scalar,private,", step), 0), 0u) << l[step];
    EXPECT_THAT(l[step], HasSubstr(fmt::format(",{},8,8,", step * 8))) << l[step];
  }
}

TEST(KernelRunnerTest, SweepsMarkWhereTheHardwareThreadsAreFilled) {
  // 2 EUs × 7 = 14 threads; 32 work-items a thread: 14 and 28 groups fill them.
  const Result r =
      run(fmt::format("empty --wi 32 --min-time 0 --max-repeats 1 --quiet "
                      "--sweep wg=13:15 --eus 2 --sysfs-root /nonexistent"));
  ASSERT_EQ(r.status, 0) << r.out;
  const auto l = lines(r.out);
  ASSERT_EQ(l.size(), 5u) << r.out;  // device line, header, 3 rows
  EXPECT_NE(l[2].back(), '*');
  EXPECT_EQ(l[3].back(), '*') << l[3];
  EXPECT_NE(l[4].back(), '*');
}

TEST(KernelRunnerTest, SizeAndWorkItemSweeps) {
  const Result sizes = run(fmt::format("load_store_vect4 {} --sweep size=1K:8K:x2 --json", kSmall));
  ASSERT_EQ(sizes.status, 0) << sizes.out;
  const auto j = nlohmann::json::parse(sizes.out);
  ASSERT_EQ(j["results"].size(), 4u);
  EXPECT_EQ(j["results"][3]["size_bytes"], 8192);
  EXPECT_EQ(j["results"][0]["unit"], "GB/s");
  const Result wi =
      run("add_int_scalar --iterations 4 --min-time 0 --max-repeats 1 --quiet "
          "--wg 2 --sweep wi=1:7 --csv");
  ASSERT_EQ(wi.status, 0) << wi.out;
  EXPECT_EQ(lines(wi.out).size(), 8u);
}

TEST(KernelRunnerTest, PeaksFromOptions) {
  const Result r =
      run("--peaks --eus 24 --subslices 3 --freq-mhz 1150 --json "
          "--sysfs-root /nonexistent");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["add_sp_gflops"].get<double>(), 220.8, 1e-6);
  EXPECT_NEAR(j["mad_sp_gflops"].get<double>(), 441.6, 1e-6);
  EXPECT_NEAR(j["mad_dp_gflops"].get<double>(), 110.4, 1e-6);
  EXPECT_NEAR(j["l3_gbytes_per_s"].get<double>(), 220.8, 1e-6);
  EXPECT_EQ(j["hw_threads"], 168);
}

// A sysfs tree under `root` whose 0000:00:02.0 is an Intel display device with PCI id `device`.
void fake_intel_gpu(const fs::path& root, const char* device) {
  fs::remove_all(root);
  const fs::path d = root / "bus/pci/devices/0000:00:02.0";
  fs::create_directories(d);
  std::ofstream(d / "vendor") << "0x8086\n";
  std::ofstream(d / "class") << "0x030000\n";
  std::ofstream(d / "device") << device << "\n";
}

TEST(KernelRunnerTest, PeaksFromThePlatformTable) {
  const fs::path root = fs::temp_directory_path() / "oaprof_kernel_runner_sysfs";
  fake_intel_gpu(root, "0x5926");  // KBL GT3: 48 EUs
  const Result r = run(fmt::format("--peaks --sysfs-root {}", root.string()));
  // A render node that is not i915's is not asked either.
  fs::create_directories(root / "bus/pci/devices/0000:00:02.0/drm/renderD130");
  fs::create_directories(root / "dev/dri");
  std::ofstream(root / "dev/dri/renderD130") << "";
  const Result other = run(
      fmt::format("--peaks --sysfs-root {} --dev-root {}", root.string(), (root / "dev").string()));
  fs::remove_all(root);
  EXPECT_THAT(other.out, HasSubstr("renderD130 is not driven by i915"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("48 EUs, 6 subslices"));
  EXPECT_THAT(r.out, HasSubstr("platform table: KBL GT3"));
  // Its own topology (i915 on its render node) would count fused-off EUs out; it has none here.
  EXPECT_THAT(r.out, HasSubstr("its own topology could not be read (0000:00:02.0 has no DRM "
                               "render node"));
  EXPECT_THAT(r.out, HasSubstr("336 threads"));
  // Nothing to go on: a usage error that says what to give.
  EXPECT_EQ(run("--peaks --sysfs-root /nonexistent").status, 2);
  EXPECT_THAT(stderr_of("--peaks --sysfs-root /nonexistent"), HasSubstr("give all three"));
}

TEST(KernelRunnerTest, PeaksSayNoFp64WhereThereIsNone) {
  // Ice Lake GT2 (Mesa icl_gt2: 64 EUs, has_64bit_float = false); Apollo Lake 6 threads per EU.
  const fs::path root = fs::temp_directory_path() / "oaprof_kernel_runner_sysfs_icl";
  fake_intel_gpu(root, "0x8a52");
  const Result text = run(fmt::format("--peaks --sysfs-root {}", root.string()));
  const Result json = run(fmt::format("--peaks --json --sysfs-root {}", root.string()));
  fake_intel_gpu(root, "0x5a84");
  const Result apl = run(fmt::format("--peaks --sysfs-root {}", root.string()));
  fs::remove_all(root);
  ASSERT_EQ(text.status, 0) << text.out;
  EXPECT_THAT(text.out, HasSubstr("no FP64"));
  EXPECT_THAT(text.out, Not(HasSubstr("add dp ")));
  ASSERT_EQ(json.status, 0) << json.out;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["fp64"], false);
  EXPECT_TRUE(j["add_dp_gflops"].is_null());
  EXPECT_EQ(j["hw_threads"], 64 * 7);
  ASSERT_EQ(apl.status, 0) << apl.out;
  EXPECT_THAT(apl.out, HasSubstr("108 threads  (EUs x 6 per EU)"));  // 18 EUs x 6
}

// --devices gives each device's PCI address, or says it cannot (PoCL has no cl_khr_pci_bus_info).
TEST(KernelRunnerTest, DevicesSayEachDevicesPciAddress) {
  const Result r = run("--devices");
  ASSERT_EQ(r.status, 0);
  ASSERT_FALSE(lines(r.out).empty());
  for (const std::string& line : lines(r.out)) {
    EXPECT_THAT(line,
                ::testing::ContainsRegex(
                    ", PCI ([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]|no cl_khr_pci_bus_info)$"));
  }
}

// --cl-device pci:BDF with no OpenCL device at that address (PoCL's CPU device has none) is
// OpenCL's set-up failing: status 3, and one line naming every device seen and its address.
TEST(KernelRunnerTest, NoDeviceAtThePciAddressExitsThreeNamingTheDevicesSeen) {
  const std::string devices = run("--devices").out;
  if (devices.find("PCI 0000:00:02.0") != std::string::npos) {
    GTEST_SKIP() << "an OpenCL device here is at 0000:00:02.0";
  }
  const std::string args = "--cl-device pci:0000:00:02.0 mad_vect4 " + std::string(kSmall);
  EXPECT_EQ(run(args).status, 3);
  const std::string said = stderr_of(args);
  EXPECT_THAT(said, HasSubstr("kernel_runner: no OpenCL device is at PCI address 0000:00:02.0; "
                              "seen: platform 0 device 0 ("));
  for (const std::string& line : lines(devices)) {
    // "platform P (NAME) device D: DEVICE, …": DEVICE is named in the message.
    const std::size_t colon = line.find(": ");
    const std::string name = line.substr(colon + 2, line.find(", ", colon) - colon - 2);
    EXPECT_THAT(said, HasSubstr("(" + name + "): ")) << line;
  }
  EXPECT_EQ(lines(said).size(), 1u) << said;
}

TEST(KernelRunnerTest, ABadPciAddressOrAPlatformBesideItIsAUsageError) {
  EXPECT_EQ(run("--cl-device pci:00:20.0 mad_vect4").status, 2);
  EXPECT_THAT(stderr_of("--cl-device pci:00:20.0 mad_vect4"),
              HasSubstr("--cl-device 'pci:00:20.0' names no PCI address"));
  EXPECT_EQ(run("--cl-platform 0 --cl-device pci:03:00.0 mad_vect4").status, 2);
  EXPECT_THAT(stderr_of("--cl-platform 0 --cl-device pci:03:00.0 mad_vect4"),
              HasSubstr("looks on every platform; drop --cl-platform 0"));
  EXPECT_THAT(run("--help").out, HasSubstr("or pci:BDF on any platform"));
}

// --busy: a load for other tools. It runs one kernel back to back until its time is up, says on
// stderr when the first launch finished, and prints its row as usual.
TEST(KernelRunnerTest, BusyRunsOneKernelForItsTimeAndSaysWhenItStarted) {
  const std::string args = "mad_vect8 --wi 8 --iterations 8 --busy 200ms";
  const Result r = run(args);
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("\nmad_vect8 "));
  EXPECT_THAT(stderr_of(args), HasSubstr("kernel_runner: busy: mad_vect8 launching on "));
  EXPECT_EQ(run("mad_vect8 add_vect4 --busy 1s").status, 2);  // one kernel only
  EXPECT_THAT(stderr_of("mad_vect8 --busy 1s --sweep wg=1:2"), HasSubstr("without --sweep"));
}

// --rest R spaces a load's launches: after each, R times its length idle. Every launch but the
// last finished (with its rest) within the load's time, so R + 1 times their summed length fits
// in it; back to back on PoCL they fill most of it.
TEST(KernelRunnerTest, BusyWithRestIdlesItsMultipleOfEachLaunchAfterIt) {
  const Result r =
      run("mad_vect8 --wi 64 --wg 64 --busy 400ms --rest 3 --max-repeats 100000 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto samples = nlohmann::json::parse(r.out)["results"][0]["samples_ns"];
  ASSERT_GE(samples.size(), 2u) << r.out;
  double sum = 0, longest = 0;
  for (const auto& ns : samples) {
    sum += ns.get<double>();
    longest = std::max(longest, ns.get<double>());
  }
  EXPECT_LE(4 * (sum - longest), 400e6) << samples.size() << " launches, " << sum << " ns";
  EXPECT_THAT(stderr_of("mad_vect8 --wi 8 --iterations 8 --busy 100ms --rest 3"),
              HasSubstr("for 0.1 s, resting 3 times each launch's length after it"));
  EXPECT_EQ(run("mad_vect8 --rest 3").status, 2);  // a rest without a load
  EXPECT_THAT(stderr_of("mad_vect8 --rest 3"), HasSubstr("give --busy DURATION too"));
  EXPECT_EQ(run("mad_vect8 --busy 1s --rest -1").status, 2);
  // A rest of R times a launch must fit a sleep's nanoseconds: no R past 1000.
  EXPECT_EQ(run("mad_vect8 --busy 1s --rest 1e300").status, 2);
}

// SIGTERM ends a load after the launch in flight (so no launch of it is left on the GPU), at
// once, without the result check: status 0, not killed by the signal, and it says so.
TEST(KernelRunnerTest, BusyStopsCleanlyOnSigterm) {
  int err[2], out[2];
  ASSERT_EQ(::pipe(err), 0);
  ASSERT_EQ(::pipe(out), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    ::execl(KERNEL_RUNNER_BIN, KERNEL_RUNNER_BIN, "mad_vect8", "--wi", "8", "--iterations", "8",
            "--busy", "600s", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(err[1]);
  ::close(out[1]);
  FILE* err_in = ::fdopen(err[0], "r");
  char line[512] = {};
  const bool started = std::fgets(line, sizeof line, err_in) != nullptr;
  EXPECT_THAT(std::string(line), HasSubstr("busy: mad_vect8 launching"));
  ::kill(pid, SIGTERM);
  std::string text;
  while (std::fgets(line, sizeof line, err_in) != nullptr) text += line;
  std::fclose(err_in);
  ::close(out[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(started);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_THAT(text, HasSubstr("kernel_runner: busy: stopped after "));
}

}  // namespace
