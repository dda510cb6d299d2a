#include "oa/builtin_metric_set.h"

#include <array>
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
  int a_index;  // the A counter it reads; -1 for none
  std::string_view equation;
  std::string_view max_equation;
  std::string_view description;
};

using T = MetricCounter::DataType;
constexpr std::string_view kPerEuPercent = "$EuCoresTotalCount UDIV 100 UMUL $GpuCoreClocks FDIV";

// Equations as IGT writes them for these counters on Gen8–Gen11.
constexpr std::array kCounters{
    CounterSpec{"GpuTime", "GPU Time Elapsed", "ns", T::kUint64, "duration", -1,
                "GPU_TIME 0 READ 1000000000 UMUL $GpuTimestampFrequency UDIV", "",
                "Time elapsed on the GPU during the measurement."},
    CounterSpec{"GpuCoreClocks", "GPU Core Clocks", "cycles", T::kUint64, "event", -1,
                "GPU_CLOCK 0 READ", "", "GPU core clocks elapsed during the measurement."},
    CounterSpec{"AvgGpuCoreFrequency", "AVG GPU Core Frequency", "hz", T::kUint64, "event", -1,
                "$GpuCoreClocks 1000000000 UMUL $GpuTime UDIV", "$GpuMaxFrequency",
                "Average GPU core frequency during the measurement."},
    CounterSpec{"GpuBusy", "GPU Busy", "percent", T::kFloat, "duration", 0,
                "A 0 READ 100 UMUL $GpuCoreClocks FDIV", "100",
                "Share of GPU core clocks in which the GPU was busy."},
    CounterSpec{"EuActive", "EU Active", "percent", T::kFloat, "duration", 7, "", "100",
                "Share of clocks the EUs were actively executing, averaged over all EUs."},
    CounterSpec{"EuStall", "EU Stall", "percent", T::kFloat, "duration", 8, "", "100",
                "Share of clocks the EUs were stalled, averaged over all EUs."},
    CounterSpec{"EuFpuBothActive", "EU Both FPU Pipes Active", "percent", T::kFloat, "duration", 9,
                "", "100", "Share of clocks both FPU pipes were active, averaged over all EUs."},
    CounterSpec{"Fpu0Active", "EU FPU0 Pipe Active", "percent", T::kFloat, "duration", 10, "",
                "100", "Share of clocks the FPU0 pipe was active, averaged over all EUs."},
    CounterSpec{"Fpu1Active", "EU FPU1 Pipe Active", "percent", T::kFloat, "duration", 11, "",
                "100", "Share of clocks the FPU1 pipe was active, averaged over all EUs."},
    CounterSpec{"EuSendActive", "EU Send Pipe Active", "percent", T::kFloat, "duration", 12, "",
                "100", "Share of clocks the send pipe was active, averaged over all EUs."},
    CounterSpec{"CsThreads", "CS Threads Dispatched", "threads", T::kUint64, "event", 4,
                "A 4 READ", "", "Compute shader hardware threads dispatched."},
    CounterSpec{"SlmBytesRead", "SLM Bytes Read", "bytes", T::kUint64, "throughput", 30,
                "A 30 READ 64 UMUL", "", "Bytes read from shared local memory."},
    CounterSpec{"SlmBytesWritten", "SLM Bytes Written", "bytes", T::kUint64, "throughput", 31,
                "A 31 READ 64 UMUL", "", "Bytes written to shared local memory."},
    CounterSpec{"ShaderMemoryAccesses", "Shader Memory Accesses", "messages", T::kUint64, "event",
                32, "A 32 READ", "", "Shader memory access messages."},
    CounterSpec{"ShaderAtomics", "Shader Atomic Memory Accesses", "messages", T::kUint64, "event",
                34, "A 34 READ", "", "Shader atomic memory access messages."},
    CounterSpec{"ShaderBarriers", "Shader Barrier Messages", "messages", T::kUint64, "event", 35,
                "A 35 READ", "", "Shader barrier messages."},
};

}  // namespace

bool a_counter_is_fixed(const Platform& platform, int index) {
  switch (index) {
    case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7:
    case 30: case 31: case 32: case 33: case 34: case 35:
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
  return platform.gen != Generation::kGen7_5 && !is_gen12_family(platform.gen);
}

MetricSet builtin_metric_set(const Platform& platform) {
  if (!has_builtin_metric_set(platform)) {
    throw std::invalid_argument(fmt::format(
        "oaprof has no built-in metric set for {} ({}): its A counters are laid out differently; "
        "give an IGT metric file with --metrics-xml oa-{}.xml",
        platform.codename, generation_name(platform.gen),
        platform.metrics_file.empty() ? "<platform>" : platform.metrics_file));
  }
  std::vector<std::string> symbols;
  for (const CounterSpec& spec : kCounters) symbols.emplace_back(spec.symbol);
  const auto resolve = MetricSet::resolver_for(symbols);
  std::vector<MetricCounter> counters;
  for (const CounterSpec& spec : kCounters) {
    MetricCounter c;
    c.symbol = spec.symbol;
    c.name = spec.name;
    c.units = spec.units;
    c.data_type = spec.type;
    c.semantic_type = spec.semantic;
    const std::string equation =
        spec.equation.empty() ? fmt::format("A {} READ {}", spec.a_index, kPerEuPercent)
                              : std::string(spec.equation);
    c.equation = Equation::compile(equation, resolve);
    if (!spec.max_equation.empty()) c.max_equation = Equation::compile(spec.max_equation, resolve);
    const bool fixed = spec.a_index < 0 || a_counter_is_fixed(platform, spec.a_index);
    c.description = std::string(spec.description);
    if (!fixed) {
      c.description += fmt::format(
          " A{} is an EU counter that FLEX programming reassigns in some IGT sets of {}; this "
          "value holds when the EU counters keep their default (ComputeBasic) meaning.",
          spec.a_index, platform.metrics_file.empty() ? platform.codename : platform.metrics_file);
    }
    c.attributes = {{"symbol_name", c.symbol},
                    {"name", c.name},
                    {"units", c.units},
                    {"data_type", std::string(data_type_name(c.data_type))},
                    {"semantic_type", c.semantic_type},
                    {"equation", equation},
                    {std::string(kFixedAttribute), fixed ? "true" : "false"}};
    if (!spec.max_equation.empty()) c.attributes.emplace_back("max_equation", spec.max_equation);
    counters.push_back(std::move(c));
  }
  return MetricSet("oaprof built-in (no register programming)",
                   std::string(kBuiltinMetricSetSymbol), "", std::move(counters), {},
                   {{"chipset", std::string(platform.codename)}});
}

}  // namespace oaprof::oa
