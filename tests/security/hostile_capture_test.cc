// A capture an attacker writes for `oaprof decode`: millions of "report lost" records, 8 bytes
// each, which once cost 200 bytes of memory per byte of input (3.2 GB for 16 MiB). Decoding reads
// the file a piece at a time and writes each row as it goes, so it runs in an address space that
// does not grow with the number of records.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "oa/perf_record.h"
#include "tests/common/sanitizer.h"

namespace oaprof::security {
namespace {

namespace fs = std::filesystem;

using oaprof::testing::kAddressSanitizer;

// Runs `argv` with its address space limited to `bytes`; its exit status (128 + N on signal N).
int run_in_address_space(const std::vector<std::string>& argv, rlim_t bytes) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const rlimit limit{bytes, bytes};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(90);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(91);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(HostileCaptureTest, DecodingLostRecordsTakesMemoryIndependentOfTheirNumber) {
  if (kAddressSanitizer) {
    GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: no RLIMIT_AS fits";
  }
  const fs::path dir = fs::temp_directory_path() / fmt::format("oaprof-lost-{}", ::getpid());
  fs::create_directories(dir);
  constexpr std::size_t kRecords = (16u << 20) / oa::kPerfRecordHeaderBytes;  // 16 MiB
  {
    std::vector<std::uint8_t> record;
    oa::append_perf_record(record, oa::PerfRecord::Type::kReportLost);
    std::ofstream out(dir / "lost.bin", std::ios::binary);
    for (std::size_t i = 0; i < kRecords; ++i) {
      out.write(reinterpret_cast<const char*>(record.data()),
                static_cast<std::streamsize>(record.size()));
    }
  }
  // 256 MiB: eight times what the decoder needs, a tenth of what holding every record took.
  const int status = run_in_address_space(
      {OAPROF_BIN, "decode", "--platform", "kblgt2", "--format", "101", "--input", "perf", "-o",
       (dir / "lost.csv").string(), (dir / "lost.bin").string()},
      rlim_t{256} << 20);
  EXPECT_EQ(status, 0);
  // Nothing was dropped to fit: a header and one row per record.
  std::ifstream csv(dir / "lost.csv", std::ios::binary);
  const auto lines =
      std::count(std::istreambuf_iterator<char>(csv), std::istreambuf_iterator<char>(), '\n');
  EXPECT_EQ(static_cast<std::size_t>(lines), kRecords + 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace oaprof::security
