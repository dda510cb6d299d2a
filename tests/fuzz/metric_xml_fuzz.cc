// Fuzzes the importer of IGT metric files, which users feed with files of any origin: any input
// must import or be refused with std::invalid_argument, never crash; whatever imports must
// evaluate every counter and register list without failing.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "oa/metric_xml.h"
#include "oa/platform.h"
#include "oa/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace oaprof::oa;
  MetricFile file;
  try {
    file =
        import_metrics_xml(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.xml");
  } catch (const std::invalid_argument&) {
    return 0;
  }
  static const DeviceVariables vars = device_variables(simulated_platform());
  CounterDeltas d;
  d.timestamp = 12000;
  d.gpu_ticks = 1000;
  for (const MetricSet& set : file.sets) {
    set.evaluate(d, vars);
    set.evaluate(CounterDeltas{}, vars);
    set.available_counters(vars);
    set.unknown_inputs(vars);
    for (const auto kind : {RegisterConfig::Kind::kNoa, RegisterConfig::Kind::kBoolean,
                            RegisterConfig::Kind::kFlex}) {
      set.writes(kind, vars);
    }
  }
  return 0;
}
