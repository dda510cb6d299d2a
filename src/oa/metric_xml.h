// Importer of IGT's metric-set descriptions (`oa-<platform>.xml`, reference/hardware.md §7): every
// set with every counter, attribute and register config. The input is untrusted (users import
// files), so anything malformed is a std::invalid_argument naming the file, line, set and counter,
// never a crash, and every equation is compiled here rather than failing later at run time.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "oa/metric_set.h"

namespace oaprof::oa {

struct MetricFile {
  std::string source;   // where the text came from, for messages
  std::string chipset;  // the sets' chipset attribute ("KBLGT2"), empty when absent
  std::vector<MetricSet> sets;

  // The set whose symbol_name is `symbol`; nullptr when absent.
  const MetricSet* find(std::string_view symbol) const;
};

// Parses the text of one file. `source` names it in error messages ("oa-kblgt2.xml").
MetricFile import_metrics_xml(std::string_view xml, std::string_view source);

}  // namespace oaprof::oa
