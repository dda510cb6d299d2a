// Lays out a RooflineModel (roofline_model.h) as what users open: the roofline alone as an SVG
// document (`oaprof report -o report.svg`) and the whole report as one self-contained HTML page
// (inline SVG, CSS and script; nothing fetched from the network). The log scales are exposed so
// that tests can check where a point lands.
#pragma once

#include <string>

#include "report/roofline_model.h"
#include "report/text_escape.h"  // xml_escape: every text placed in the SVG and HTML

namespace oaprof::report {

// Maps a value on a decade-aligned log axis [d0, d1] to the pixel range [r0, r1].
struct LogScale {
  double d0 = 1, d1 = 10, r0 = 0, r1 = 1;
  double map(double v) const;
};

struct RooflineLayout {
  LogScale x;  // FLOP/byte
  LogScale y;  // GFLOP/s
};

RooflineLayout roofline_layout(const RooflineModel& m);
std::string roofline_svg(const RooflineModel& m, const std::string& title);
std::string html_report(const RooflineModel& m, const std::string& title);

}  // namespace oaprof::report
