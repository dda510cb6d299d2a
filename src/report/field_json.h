// A row's field as a JSON value: numbers stay numbers, an empty field is null.
#pragma once

#include <variant>

#include <nlohmann/json.hpp>

#include "report/row.h"

namespace oaprof::report {

template <class Json = nlohmann::json>
Json field_json(const Field& f) {
  struct Visitor {
    Json operator()(std::monostate) const { return nullptr; }
    Json operator()(std::uint64_t v) const { return v; }
    Json operator()(double v) const { return v; }
    Json operator()(const std::string& v) const { return v; }
  };
  return std::visit(Visitor{}, f.value);
}

}  // namespace oaprof::report
