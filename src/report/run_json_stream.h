// One JSON run document (oaprof's --json, kernel_runner's --json) parsed as its bytes arrive:
// each row of its "launches" or "results" array is handed over as soon as it is complete and
// then forgotten, so the memory a document costs is one row at a time plus what the caller keeps.
// Every bound of run_input.h is checked on the way (nesting and string lengths before the parser
// sees the bytes, values per row and outside the rows as they are parsed), and an empty or
// degenerate row is refused where it stands. Private to src/report.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "report/run_bytes.h"

namespace oaprof::report {

// A row as an object: an object row as it was written (schema 1), a row of values (schema 2)
// with the names of the document's "columns". `array` is "launches" or "results".
using RunRowVisitor = std::function<void(std::string_view array, const nlohmann::ordered_json& row,
                                         std::size_t index)>;

// The document's other fields (its metadata), with the rows' array left empty. Throws
// RunInputError naming the source, and the row and field, or the byte, at fault.
nlohmann::ordered_json stream_run_json(RunBytes& bytes, const RunRowVisitor& on_row);

// An oaprof document's schema_version is one this oaprof reads (1, or the one it writes);
// throws RunInputError saying what to do otherwise.
void require_schema_version(const nlohmann::ordered_json& meta, const std::string& source);

}  // namespace oaprof::report
