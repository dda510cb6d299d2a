// Fuzzes the parser of `oaprof report`'s inputs (JSON documents the user hands it): any input must
// parse or be refused with RunInputError, never crash; and whatever parses must go through the
// report model and both renderers.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "report/roofline_svg.h"
#include "report/run_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace oaprof::report;
  try {
    const RunInput in =
        parse_run_json(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    const RooflineModel m = build_roofline_model({in}, {{"dev", 100, 200, 25, 50, 300}}, nullptr);
    (void)html_report(m, "fuzz");
    (void)roofline_svg(m, "fuzz");
  } catch (const RunInputError&) {
  }
  return 0;
}
