// oaprof's built-in metric sets for Gen8–Gen11, Gen12 and Xe-LPG: counters computed from A
// counters, GPU_TICKS and the timestamp only, with no NOA (mux) or FLEX programming, so that oaprof
// is useful with no IGT files installed. Which A counters keep their meaning without programming
// was decided from IGT's metric files (tests/oa/builtin_metric_set_test.cc re-checks it against
// every file), and each generation's counters are the ones its ComputeBasic set computes so.
#pragma once

#include <string_view>

#include "oa/metric_set.h"
#include "oa/platform.h"

namespace oaprof::oa {

inline constexpr std::string_view kBuiltinMetricSetSymbol = "Builtin";

// Attribute of every built-in counter: "true" when the XML shows its A counter has one meaning in
// every set of the platform (it does not depend on programming); "false" for the EU counters
// (A8–A12 on some platforms) that the FLEX registers reassign in a few sets: those read what the
// default EU programming counts, which is what most sets, ComputeBasic among them, program.
inline constexpr std::string_view kFixedAttribute = "oaprof_fixed";

// Whether oaprof has a built-in set for the platform's generation.
bool has_builtin_metric_set(const Platform& platform);

// Whether A counter `index` has one meaning in every IGT set of `platform` (Gen8–Xe-LPG).
bool a_counter_is_fixed(const Platform& platform, int index);

// The built-in set for a Gen8–Xe-LPG platform. Throws std::invalid_argument on Gen7.5, whose A
// counters are laid out differently, saying to use an IGT file with --metrics-xml.
MetricSet builtin_metric_set(const Platform& platform);

}  // namespace oaprof::oa
