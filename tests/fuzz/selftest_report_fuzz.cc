// Fuzzes the reader of the selftest report oaprofd sends back in chunks (`oaprof selftest
// --daemon`, run/selftest_daemon.h): any bytes are refused with std::runtime_error or give a
// report that renders as a table and that writes back to JSON it reads again unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

#include "run/selftest.h"
#include "run/selftest_daemon.h"

namespace st = oaprof::run::selftest;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json json =
      nlohmann::json::parse(std::string_view(reinterpret_cast<const char*>(data), size), nullptr,
                            /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  st::SelftestReport report;
  try {
    report = st::report_from_json(json);
  } catch (const std::runtime_error&) {
    return 0;
  }
  (void)st::report_table(report);
  const nlohmann::json written = st::report_json(report, "fuzz");
  if (st::report_json(st::report_from_json(written), "fuzz") != written) std::abort();
  return 0;
}
