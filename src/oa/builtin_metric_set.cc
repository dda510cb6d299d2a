#include "oa/builtin_metric_set.h"

#include <array>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace oaprof::oa {
namespace {

struct CounterSpec {
  std::string_view symbol;
  std::string_view name;
  std::string_view units;
  MetricCounter::DataType type;
  std::string_view semantic;
  int a_first;  // the A counters it reads: a_first .. a_first + a_count - 1; none when a_count 0
  int a_count;
  std::string_view equation;  // empty: A<a_first> as a share of EU clocks (Gen8-11)
  std::string_view max_equation;
  std::string_view description;
};

using T = MetricCounter::DataType;
constexpr std::string_view kPerEuPercent = "$EuCoresTotalCount UDIV 100 UMUL $GpuCoreClocks FDIV";

// Equations as IGT writes them in ComputeBasic (builtin_metric_set_test.cc compares the text).
// The first five and the last three are the same on every generation.
constexpr CounterSpec kGpuTime{
    "GpuTime",  "GPU Time Elapsed",
    "ns",       T::kUint64,
    "duration", 0,
    0,          "GPU_TIME 0 READ 1000000000 UMUL $GpuTimestampFrequency UDIV",
    "",         "Time elapsed on the GPU during the measurement."};
constexpr CounterSpec kGpuCoreClocks{"GpuCoreClocks",
                                     "GPU Core Clocks",
                                     "cycles",
                                     T::kUint64,
                                     "event",
                                     0,
                                     0,
                                     "GPU_CLOCK 0 READ",
                                     "",
                                     "GPU core clocks elapsed during the measurement."};
constexpr CounterSpec kAvgGpuCoreFrequency{"AvgGpuCoreFrequency",
                                           "AVG GPU Core Frequency",
                                           "hz",
                                           T::kUint64,
                                           "event",
                                           0,
                                           0,
                                           "$GpuCoreClocks 1000000000 UMUL $GpuTime UDIV",
                                           "$GpuMaxFrequency",
                                           "Average GPU core frequency during the measurement."};
constexpr CounterSpec kGpuBusy{"GpuBusy",  "GPU Busy",
                               "percent",  T::kFloat,
                               "duration", 0,
                               1,          "A 0 READ 100 UMUL $GpuCoreClocks FDIV",
                               "100",      "Share of GPU core clocks in which the GPU was busy."};
constexpr CounterSpec kCsThreads{"CsThreads", "CS Threads Dispatched",
                                 "threads",   T::kUint64,
                                 "event",     4,
                                 1,           "A 4 READ",
                                 "",          "Compute shader hardware threads dispatched."};
constexpr CounterSpec kSlmBytesRead{"SlmBytesRead",
                                    "SLM Bytes Read",
                                    "bytes",
                                    T::kUint64,
                                    "throughput",
                                    30,
                                    1,
                                    "A 30 READ 64 UMUL",
                                    "",
                                    "Bytes read from shared local memory."};
constexpr CounterSpec kSlmBytesWritten{"SlmBytesWritten",
                                       "SLM Bytes Written",
                                       "bytes",
                                       T::kUint64,
                                       "throughput",
                                       31,
                                       1,
                                       "A 31 READ 64 UMUL",
                                       "",
                                       "Bytes written to shared local memory."};
constexpr CounterSpec kShaderMemoryAccesses{"ShaderMemoryAccesses",
                                            "Shader Memory Accesses",
                                            "messages",
                                            T::kUint64,
                                            "event",
                                            32,
                                            1,
                                            "A 32 READ",
                                            "",
                                            "Shader memory access messages."};
constexpr CounterSpec kShaderAtomics{"ShaderAtomics",
                                     "Shader Atomic Memory Accesses",
                                     "messages",
                                     T::kUint64,
                                     "event",
                                     34,
                                     1,
                                     "A 34 READ",
                                     "",
                                     "Shader atomic memory access messages."};
constexpr CounterSpec kShaderBarriers{"ShaderBarriers",
                                      "Shader Barrier Messages",
                                      "messages",
                                      T::kUint64,
                                      "event",
                                      35,
                                      1,
                                      "A 35 READ",
                                      "",
                                      "Shader barrier messages."};

// Gen8-Gen11: one A counter per EU figure (A7-A12).
constexpr std::array kGen8Counters{
    kGpuTime,
    kGpuCoreClocks,
    kAvgGpuCoreFrequency,
    kGpuBusy,
    CounterSpec{"EuActive", "EU Active", "percent", T::kFloat, "duration", 7, 1, "", "100",
                "Share of clocks the EUs were actively executing, averaged over all EUs."},
    CounterSpec{"EuStall", "EU Stall", "percent", T::kFloat, "duration", 8, 1, "", "100",
                "Share of clocks the EUs were stalled, averaged over all EUs."},
    CounterSpec{"EuFpuBothActive", "EU Both FPU Pipes Active", "percent", T::kFloat, "duration", 9,
                1, "", "100", "Share of clocks both FPU pipes were active, averaged over all EUs."},
    CounterSpec{"Fpu0Active", "EU FPU0 Pipe Active", "percent", T::kFloat, "duration", 10, 1, "",
                "100", "Share of clocks the FPU0 pipe was active, averaged over all EUs."},
    CounterSpec{"Fpu1Active", "EU FPU1 Pipe Active", "percent", T::kFloat, "duration", 11, 1, "",
                "100", "Share of clocks the FPU1 pipe was active, averaged over all EUs."},
    CounterSpec{"EuSendActive", "EU Send Pipe Active", "percent", T::kFloat, "duration", 12, 1, "",
                "100", "Share of clocks the send pipe was active, averaged over all EUs."},
    kCsThreads,
    kSlmBytesRead,
    kSlmBytesWritten,
    kShaderMemoryAccesses,
    kShaderAtomics,
    kShaderBarriers,
};

// Gen12 (TGL, RKL, ADL, RPL, DG1): each EU figure sums four A counters (IGT's ComputeBasic);
// the FPU and send figures exist only in the EuActivity sets, which reprogram A7-A18.
constexpr std::array kGen12Counters{
    kGpuTime,
    kGpuCoreClocks,
    kAvgGpuCoreFrequency,
    kGpuBusy,
    CounterSpec{"EuActive", "EU Active", "percent", T::kFloat, "duration", 7, 4,
                "A 7 READ A 8 READ FADD A 9 READ FADD A 10 READ FADD $EuCoresTotalCount UDIV 100 "
                "UMUL $GpuCoreClocks FDIV",
                "100", "Share of clocks the EUs were actively executing, averaged over all EUs."},
    CounterSpec{"EuStall", "EU Stall", "percent", T::kFloat, "duration", 11, 4,
                "A 11 READ A 12 READ FADD A 13 READ FADD A 14 READ FADD $EuCoresTotalCount UDIV "
                "100 UMUL $GpuCoreClocks FDIV",
                "100", "Share of clocks the EUs were stalled, averaged over all EUs."},
    CounterSpec{"EuThreadOccupancy", "EU Thread Occupancy", "percent", T::kFloat, "duration", 15, 4,
                "8 A 15 READ A 16 READ FADD A 17 READ FADD A 18 READ FADD FMUL $EuThreadsCount "
                "FDIV $EuCoresTotalCount UDIV 100 UMUL $GpuCoreClocks FDIV",
                "100", "Share of the EUs' hardware threads occupied, averaged over all EUs."},
    kCsThreads,
    kSlmBytesRead,
    kSlmBytesWritten,
    kShaderMemoryAccesses,
    kShaderAtomics,
    kShaderBarriers,
};

// Xe-LPG (MTL, ARL): one A counter per XVE (EU) figure again, SLM counted in messages, and
// GTI traffic in A36/A37 of the A24u40_A14u32_B8_C8 format.
constexpr std::array kXeLpgCounters{
    kGpuTime,
    kGpuCoreClocks,
    kAvgGpuCoreFrequency,
    kGpuBusy,
    CounterSpec{"XveActive", "XVE Active", "percent", T::kFloat, "duration", 7, 1,
                "A 7 READ $EuCoresTotalCount UDIV 100 UMUL $GpuCoreClocks FDIV", "100",
                "Share of clocks the XVEs (EUs) were actively executing, averaged over all."},
    CounterSpec{"XveStall", "XVE Stall", "percent", T::kFloat, "duration", 8, 1,
                "A 8 READ $EuCoresTotalCount UDIV 100 UMUL $GpuCoreClocks FDIV", "100",
                "Share of clocks the XVEs (EUs) were stalled, averaged over all."},
    CounterSpec{"XveThreadOccupancy", "XVE Thread Occupancy", "percent", T::kFloat, "duration", 15,
                1,
                "8 A 15 READ FMUL $VectorEngineThreadsCount FDIV $EuCoresTotalCount UDIV 100 UMUL "
                "$GpuCoreClocks FDIV",
                "100", "Share of the XVEs' hardware threads occupied, averaged over all."},
    kCsThreads,
    CounterSpec{"SlmReads", "SLM Bytes Read", "messages", T::kUint64, "event", 30, 1, "A 30 READ",
                "", "Shared local memory read messages."},
    CounterSpec{"SlmWrites", "SLM Writes", "messages", T::kUint64, "event", 31, 1, "A 31 READ", "",
                "Shared local memory write messages."},
    kShaderMemoryAccesses,
    kShaderAtomics,
    kShaderBarriers,
    CounterSpec{"GtiReadThroughput", "GTI Read Throughput", "bytes", T::kUint64, "throughput", 36,
                1, "32 A 36 READ UMUL", "", "Bytes read through the GTI (memory interface)."},
    CounterSpec{"GtiWriteThroughput", "GTI Write Throughput", "bytes", T::kUint64, "throughput", 37,
                1, "32 A 37 READ UMUL", "", "Bytes written through the GTI (memory interface)."},
};

std::span<const CounterSpec> counters_for(Generation gen) {
  switch (gen) {
    case Generation::kGen7_5:
      return {};
    case Generation::kGen8:
    case Generation::kGen9:
    case Generation::kGen11:
      return kGen8Counters;
    case Generation::kGen12:
      return kGen12Counters;
    case Generation::kXeHpg:  // the same OAG layout; acmgt's RenderBasic reads A0-A35 as mtlgt's
    case Generation::kXeLpg:
      return kXeLpgCounters;
    case Generation::kXe2:
      return {};  // PEC counters count what a metric set selects: no default
  }
  return {};
}

// A counters whose meaning no IGT set of the generation changes (the evidence test re-derives
// these from every Gen12 and Xe-LPG file; Gen8-11 are per platform below).
bool fixed_on_gen12(int index) {
  return (index >= 0 && index <= 6) || (index >= 21 && index <= 32) || index == 34 || index == 35;
}
bool fixed_on_xe_lpg(int index) {
  return (index >= 0 && index <= 6) || index == 19 || (index >= 22 && index <= 24) ||
         (index >= 29 && index <= 32) || (index >= 34 && index <= 37);
}

}  // namespace

bool a_counter_is_fixed(const Platform& platform, int index) {
  if (platform.gen == Generation::kGen12) return fixed_on_gen12(index);
  if (is_xehp_oa(platform.gen)) return fixed_on_xe_lpg(index);
  if (platform.gen == Generation::kXe2) return false;  // every PEC counter is programmed
  switch (index) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
    case 7:
    case 30:
    case 31:
    case 32:
    case 33:
    case 34:
    case 35:
      return true;
    // Found in the IGT files: ComputeExtra reuses A8 on BDW and all Gen9 parts; AsyncCompute
    // reuses A9 on SKL/BXT/KBL/CFL and ICL; A10–A12 change meaning between sets everywhere.
    case 8: {
      const std::string_view f = platform.metrics_file;
      return f == "chv" || f == "icl" || f == "ehl";
    }
    case 9: {
      const std::string_view f = platform.metrics_file;
      return f == "bdw" || f == "chv" || f == "glk" || f == "ehl";
    }
    default:
      return false;
  }
}

bool has_builtin_metric_set(const Platform& platform) {
  return !counters_for(platform.gen).empty();
}

namespace {

MetricCounter builtin_counter(const Platform& platform, const CounterSpec& spec,
                              const Equation::CounterResolver& resolve) {
  MetricCounter c;
  c.symbol = spec.symbol;
  c.name = spec.name;
  c.units = spec.units;
  c.data_type = spec.type;
  c.semantic_type = spec.semantic;
  const std::string equation = spec.equation.empty()
                                   ? fmt::format("A {} READ {}", spec.a_first, kPerEuPercent)
                                   : std::string(spec.equation);
  c.equation = Equation::compile(equation, resolve);
  if (!spec.max_equation.empty()) c.max_equation = Equation::compile(spec.max_equation, resolve);
  bool fixed = true;
  for (int a = spec.a_first; a < spec.a_first + spec.a_count; ++a) {
    fixed = fixed && a_counter_is_fixed(platform, a);
  }
  c.description = std::string(spec.description);
  if (!fixed) {
    const std::string counters =
        spec.a_count == 1 ? fmt::format("A{}", spec.a_first)
                          : fmt::format("A{}-A{}", spec.a_first, spec.a_first + spec.a_count - 1);
    c.description += fmt::format(
        " {} are EU counters that FLEX programming reassigns in some IGT sets of {}; this value "
        "holds when the EU counters keep their default (ComputeBasic) meaning.",
        counters, platform.metrics_file.empty() ? platform.codename : platform.metrics_file);
  }
  c.attributes = {{"symbol_name", c.symbol},
                  {"name", c.name},
                  {"units", c.units},
                  {"data_type", std::string(data_type_name(c.data_type))},
                  {"semantic_type", c.semantic_type},
                  {"equation", equation},
                  {std::string(kFixedAttribute), fixed ? "true" : "false"}};
  if (!spec.max_equation.empty()) c.attributes.emplace_back("max_equation", spec.max_equation);
  return c;
}

}  // namespace

MetricSet builtin_metric_set(const Platform& platform) {
  if (!has_builtin_metric_set(platform)) {
    throw std::invalid_argument(fmt::format(
        "oaprof has no built-in metric set for {} ({}): its A counters are laid out differently; "
        "give an IGT metric file with --metrics-xml oa-{}.xml",
        platform.codename, generation_name(platform.gen),
        platform.metrics_file.empty() ? "<platform>" : platform.metrics_file));
  }
  const std::span<const CounterSpec> specs = counters_for(platform.gen);
  std::vector<std::string> symbols;
  for (const CounterSpec& spec : specs) symbols.emplace_back(spec.symbol);
  const auto resolve = MetricSet::resolver_for(symbols);
  std::vector<MetricCounter> counters;
  for (const CounterSpec& spec : specs)
    counters.push_back(builtin_counter(platform, spec, resolve));
  return MetricSet("oaprof built-in (no register programming)",
                   std::string(kBuiltinMetricSetSymbol), "", std::move(counters), {},
                   {{"chipset", std::string(platform.codename)}});
}

}  // namespace oaprof::oa
