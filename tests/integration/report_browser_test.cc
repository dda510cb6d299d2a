// `oaprof report` in a real browser: Debian's chromium, headless, renders the page from inputs
// with known figures; the DOM after its script ran is checked (the number of points, where each
// sits against the page's log scales, the legend, no script error), and a screenshot is taken.
// Skipped, saying why, where chromium is not installed (scripts/setup installs it, so CI runs it).
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include <fmt/format.h>

#include "tests/common/run_util.h"

namespace {
namespace fs = std::filesystem;
using oaprof::testing::run;
using ::testing::HasSubstr;
using ::testing::Not;

std::string find_browser() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    if (run(fmt::format("command -v {} >/dev/null", name)).status == 0) return name;
  }
  return "";
}

// An oaprof run (built-in metric set figures chosen so the estimate lands at a known place) and a
// kernel_runner run with mad_vect4 (a point with known work and a compute ceiling) and
// load_store_vect4 (a memory ceiling).
constexpr const char* kOaprofRun = R"json({"schema_version":1,"oaprof_version":"0.1.0",
 "device":"simulated","device_detail":"simulated KBL GT2 (24 EUs, 1150 MHz)","platform":"kblgt2",
 "format":"A32u40_A4u32_B8_C8","access":"mmio","metric_set":"Builtin","energy_backend":"sim",
 "mode":"kernel","eus":24,"max_freq_mhz":1150,"min_freq_mhz":300,"start_freq_mhz":1150,
 "timestamp_hz":12000000,"command":["app"],
 "launches":[{"launch":0,"kernel":"saxpy","global_size":"4096","local_size":"64","kernel_ns":1000000,
   "gpu_time_ns":1000000,"igpu_power_w":4,"flags":"energy-window-short",
   "Fpu0Active_percent":50,"Fpu1Active_percent":50,"GpuCoreClocks_cycles":1000000,
   "ShaderMemoryAccesses_messages":375000}]})json";
// saxpy: (50 % + 50 %) × 1e6 clocks × 24 EUs × 8 = 1.92e8 FLOP in 1 ms = 192 GFLOP/s;
// 375000 × 64 B = 2.4e7 B, so 8 FLOP/byte.
constexpr double kSaxpyIntensity = 8, kSaxpyGflops = 192;
constexpr const char* kRunnerRun = R"json({"device":"cpu","results":[
 {"kernel":"mad_vect4","variant":"private","global":4096,"local":64,"iterations":512,"outer":1,
  "size_bytes":0,"repeats":3,"median_ns":3000000,"work":16777216,"rate":5,"unit":"GFLOP/s",
  "verified":16384,"fills_hw_threads":false,"samples_ns":[]},
 {"kernel":"load_store_vect4","variant":"private","global":4096,"local":64,"iterations":1,
  "outer":1,"size_bytes":1048576,"repeats":3,"median_ns":400000,"work":2097152,"rate":5.2,
  "unit":"GB/s","verified":65536,"fills_hw_threads":false,"samples_ns":[]}],"skipped":[]})json";
// mad_vect4: 16777216 FLOP over 2 × 4096 × 16 B = 128 FLOP/byte at 5 GFLOP/s.
constexpr double kMadIntensity = 128, kMadGflops = 5;

class ReportBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    browser_ = find_browser();
    if (browser_.empty()) {
      GTEST_SKIP() << "chromium is not installed (Debian package chromium; scripts/setup installs "
                      "it): the report is not checked in a browser here";
    }
    dir_ = fs::temp_directory_path() / fmt::format("oaprof-report-{}", ::getpid());
    fs::create_directories(dir_);
    std::ofstream(dir_ / "run.json") << kOaprofRun;
    std::ofstream(dir_ / "kr.json") << kRunnerRun;
    const auto r = run(fmt::format("{} report {} {} -o {} --title 'browser test'", OAPROF_BIN,
                                   (dir_ / "run.json").string(), (dir_ / "kr.json").string(),
                                   (dir_ / "report.html").string()));
    ASSERT_EQ(r.status, 0) << r.output;
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  // The browser with a profile of its own (never the user's, never shared with a parallel test).
  oaprof::testing::CommandResult browse(const std::string& action) {
    return run(fmt::format(
        "timeout 60 {} --headless --no-sandbox --disable-gpu --hide-scrollbars "
        "--user-data-dir={} --window-size=1000,900 {} file://{}",
        browser_, (dir_ / "profile").string(), action, (dir_ / "report.html").string()));
  }
  std::string browser_;
  fs::path dir_;
};

double attr(const std::string& element, const std::string& name) {
  std::smatch m;
  const std::regex re(name + "=\"([-0-9.e+]+)\"");
  EXPECT_TRUE(std::regex_search(element, m, re)) << name << " in " << element;
  return m.empty() ? NAN : std::stod(m[1]);
}

TEST_F(ReportBrowserTest, PointsSitWhereTheLogScalesPutThem) {
  const auto r = browse("--dump-dom");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string& dom = r.output;
  // The page's script ran to its end without an error (its onerror handler would have marked
  // the body).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("<body[^>]*>")));
  const std::string body = m[0];
  EXPECT_THAT(body, HasSubstr("data-ready=\"1\""));
  EXPECT_THAT(body, HasSubstr("data-points=\"2\""));
  EXPECT_THAT(body, Not(HasSubstr("data-script-error")));
  EXPECT_THAT(dom, Not(HasSubstr("Uncaught")));

  ASSERT_TRUE(std::regex_search(dom, m, std::regex("<g class=\"axes\"[^>]*>")));
  const std::string axes = m[0];
  // Decades around the data: intensities 8 and 128 and the ridge points; GFLOP/s 5 to 460.
  const double x0 = attr(axes, "data-x-min"), x1 = attr(axes, "data-x-max");
  const double y0 = attr(axes, "data-y-min"), y1 = attr(axes, "data-y-max");
  const double left = attr(axes, "data-left"), right = attr(axes, "data-right");
  const double top = attr(axes, "data-top"), bottom = attr(axes, "data-bottom");
  EXPECT_EQ(x1, 1000);
  EXPECT_LT(x0, 1);
  EXPECT_EQ(y1, 1000);
  auto px = [&](double v) {
    return left + std::log10(v / x0) / std::log10(x1 / x0) * (right - left);
  };
  auto py = [&](double v) {
    return bottom - std::log10(v / y0) / std::log10(y1 / y0) * (bottom - top);
  };

  std::map<std::string, std::string> circles;
  const std::regex circle("<circle class=\"point ([a-z]+)\" data-kernel=\"([^\"]+)\"[^>]*>");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), circle); it != std::sregex_iterator();
       ++it) {
    circles[(*it)[2]] = (*it)[0];
    EXPECT_EQ((*it)[1], (*it)[2] == "saxpy" ? "estimate" : "exact");
  }
  ASSERT_EQ(circles.size(), 2u);
  EXPECT_NEAR(attr(circles["saxpy"], "cx"), px(kSaxpyIntensity), 0.01);
  EXPECT_NEAR(attr(circles["saxpy"], "cy"), py(kSaxpyGflops), 0.01);
  EXPECT_NEAR(attr(circles["mad_vect4"], "cx"), px(kMadIntensity), 0.01);
  EXPECT_NEAR(attr(circles["mad_vect4"], "cy"), py(kMadGflops), 0.01);
  EXPECT_THAT(circles["saxpy"], HasSubstr("fill=\"none\""));  // hollow: an estimate
  EXPECT_THAT(dom, HasSubstr("saxpy (estimate)"));

  // The legend: 5 theoretical ceilings of the KBL GT2 (MAD/ADD SP and DP, L3), 2 measured, and
  // the two kinds of marker.
  const auto begin = dom.find("<svg id=\"roofline\"");
  ASSERT_NE(begin, std::string::npos);
  const std::string roofline = dom.substr(begin, dom.find("</svg>", begin) - begin);
  int legend = 0;
  for (auto pos = roofline.find("class=\"legend-entry\""); pos != std::string::npos;
       pos = roofline.find("class=\"legend-entry\"", pos + 1))
    ++legend;
  EXPECT_EQ(legend, 9);
  EXPECT_THAT(dom, HasSubstr("peak MAD SP 441.6 GFLOP/s"));  // 24 EUs × 16 × 1.15 GHz
  EXPECT_THAT(dom, HasSubstr("measured load_store_vect4 5.2 GB/s"));
  // The power roofline has saxpy (the only kernel with power) at 192 GFLOP/s / 4 W.
  EXPECT_THAT(dom, HasSubstr("<svg id=\"power-roofline\""));
  EXPECT_THAT(dom, HasSubstr("class=\"power-point estimate\" data-kernel=\"saxpy\" "
                             "data-intensity=\"8\" data-gflops=\"48\""));
  // The flagged row shows its flags, and the run says it was simulated.
  EXPECT_THAT(dom, HasSubstr("⚠ energy-window-short;simulated"));
  EXPECT_THAT(dom, HasSubstr("device: simulated"));
}

TEST_F(ReportBrowserTest, RendersAScreenshot) {
  const fs::path png = dir_ / "report.png";
  const auto r = browse("--screenshot=" + png.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("Uncaught")));
  ASSERT_TRUE(fs::exists(png)) << r.output;
  std::ifstream in(png, std::ios::binary);
  std::string head(8, '\0');
  in.read(head.data(), 8);
  EXPECT_EQ(head, "\x89PNG\r\n\x1a\n");
  // A blank page compresses to a few kilobytes; the roofline, tables and text take far more.
  EXPECT_GT(fs::file_size(png), 30'000u);
}

}  // namespace

namespace {

// Without a browser: bad inputs and outputs give their documented exit status and say why.
TEST(ReportCommandTest, RefusesBadInputsAndOutputs) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("oaprof-report-cmd-{}", ::getpid());
  fs::create_directories(dir);
  std::ofstream(dir / "bad.json")
      << R"({"schema_version":1,"device":"d","launches":[{"kernel":3}]})";
  std::ofstream(dir / "kr.json") << kRunnerRun;
  auto report = [&](const std::string& args) {
    return run(fmt::format("{} report {}", OAPROF_BIN, args));
  };
  auto r = report((dir / "bad.json").string() + " -o " + (dir / "o.html").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.output, HasSubstr("bad.json: launch 0: \"kernel\" must be a string"));
  EXPECT_FALSE(fs::exists(dir / "o.html")) << "nothing written from a refused input";
  r = report((dir / "kr.json").string() + " -o " + (dir / "o.pdf").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.output, HasSubstr("must end in .html"));
  r = report((dir / "kr.json").string() + " -o " + (dir / "missing/o.html").string());
  EXPECT_EQ(r.status, 4);
  r = report((dir / "kr.json").string() + " --kernels '(' -o " + (dir / "o.html").string());
  EXPECT_EQ(r.status, 2);
  // The SVG is the roofline alone: the kernel_runner point and its two measured ceilings.
  r = report((dir / "kr.json").string() + " -o " + (dir / "o.svg").string());
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(dir / "o.svg");
  const std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(svg.starts_with("<?xml"));
  EXPECT_THAT(svg, HasSubstr("data-kernel=\"mad_vect4\""));
  EXPECT_THAT(svg, Not(HasSubstr("<table")));
  fs::remove_all(dir);
}

}  // namespace
