// Fuzzes the reader of the driver's guc_info/huc_info text (run/selftest_firmware.h): any bytes
// give a record whose version is digits and dots and whose path and status are printable ASCII
// of bounded length, so nothing hostile reaches the selftest's report.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "run/selftest_firmware.h"

namespace {

void require_printable(const std::string& s) {
  if (s.size() > 256) std::abort();
  for (const char ch : s) {
    if (ch < 0x20 || ch > 0x7e) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto info = oaprof::run::selftest::parse_uc_info(
      std::string_view(reinterpret_cast<const char*>(data), size));
  require_printable(info.path);
  require_printable(info.status);
  if (info.version.size() > 4 * 9 + 3) std::abort();
  for (const char ch : info.version) {
    if (ch != '.' && (ch < '0' || ch > '9')) std::abort();
  }
  return 0;
}
