#include "oa/metric_xml.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include <fmt/format.h>
#include <pugixml.hpp>

namespace oaprof::oa {
namespace {

class Importer {
 public:
  Importer(std::string_view xml, std::string_view source) : xml_(xml), source_(source) {}

  MetricFile run() {
    pugi::xml_document doc;
    // parse_default without entity/DOCTYPE processing beyond what pugixml ignores: it never
    // fetches external entities, so a hostile file cannot reach the file system or network.
    const pugi::xml_parse_result result =
        doc.load_buffer(xml_.data(), xml_.size(), pugi::parse_default, pugi::encoding_utf8);
    if (!result) {
      fail(static_cast<std::size_t>(result.offset),
           fmt::format("not well-formed XML: {}", result.description()));
    }
    const pugi::xml_node root = doc.document_element();
    if (std::string_view(root.name()) != "metrics") {
      fail(root, fmt::format("the root element is <{}>, not <metrics>; is this an IGT oa-*.xml "
                             "file?",
                             root.name()));
    }
    MetricFile file;
    file.source = std::string(source_);
    for (const pugi::xml_node set : root.children()) {
      if (set.type() != pugi::node_element) continue;
      if (std::string_view(set.name()) != "set") continue;  // room for future IGT elements
      file.sets.push_back(import_set(set));
      if (file.chipset.empty()) file.chipset = set.attribute("chipset").value();
    }
    std::vector<std::string_view> symbols;
    for (const MetricSet& s : file.sets) symbols.push_back(s.symbol());
    std::sort(symbols.begin(), symbols.end());
    const auto dup = std::adjacent_find(symbols.begin(), symbols.end());
    if (dup != symbols.end()) {
      throw std::invalid_argument(fmt::format("{}: metric set {} appears twice", source_, *dup));
    }
    return file;
  }

 private:
  [[noreturn]] void fail(std::size_t offset, std::string_view why) const {
    const std::size_t end = std::min(offset, xml_.size());
    const auto line =
        1 + std::count(xml_.begin(), xml_.begin() + static_cast<std::ptrdiff_t>(end), '\n');
    throw std::invalid_argument(fmt::format("{}:{}: {}", source_, line, why));
  }
  [[noreturn]] void fail(const pugi::xml_node& node, std::string_view why) const {
    const std::ptrdiff_t offset = node.offset_debug();
    fail(offset < 0 ? 0 : static_cast<std::size_t>(offset), why);
  }

  std::string required(const pugi::xml_node& node, const char* attribute,
                       std::string_view context) const {
    const pugi::xml_attribute a = node.attribute(attribute);
    if (!a)
      fail(node, fmt::format("{}: <{}> has no {} attribute", context, node.name(), attribute));
    return a.value();
  }

  static Attributes all_attributes(const pugi::xml_node& node) {
    Attributes out;
    for (const pugi::xml_attribute a : node.attributes()) out.emplace_back(a.name(), a.value());
    return out;
  }

  std::uint32_t parse_u32(const pugi::xml_node& node, const char* attribute,
                          std::string_view context) const {
    const std::string text = required(node, attribute, context);
    std::string_view digits = text;
    int base = 10;
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
      digits.remove_prefix(2);
      base = 16;
    }
    std::uint32_t value = 0;
    const char* end = digits.data() + digits.size();
    auto [ptr, ec] = std::from_chars(digits.data(), end, value, base);
    if (digits.empty() || ec != std::errc() || ptr != end) {
      fail(node, fmt::format("{}: {}=\"{}\" is not a 32-bit number", context, attribute, text));
    }
    return value;
  }

  Equation compile(const pugi::xml_node& node, const std::string& text,
                   const Equation::CounterResolver& resolve, std::string_view context) const {
    try {
      return Equation::compile(text, resolve);
    } catch (const std::invalid_argument& e) {
      fail(node, fmt::format("{}: {}", context, e.what()));
    }
  }

  MetricSet import_set(const pugi::xml_node& set) {
    const std::string symbol = required(set, "symbol_name", "metric set");
    const std::string context = fmt::format("metric set {}", symbol);
    const std::string name = required(set, "name", context);
    const std::string guid = set.attribute("hw_config_guid").value();

    std::vector<std::string> symbols;
    for (const pugi::xml_node c : set.children("counter")) {
      symbols.emplace_back(required(c, "symbol_name", context));
    }
    const auto resolve = MetricSet::resolver_for(symbols);

    std::vector<MetricCounter> counters;
    std::vector<RegisterConfig> configs;
    for (const pugi::xml_node child : set.children()) {
      if (child.type() != pugi::node_element) continue;
      const std::string_view tag = child.name();
      if (tag == "counter") {
        counters.push_back(import_counter(child, symbol, resolve));
      } else if (tag == "register_config") {
        configs.push_back(import_config(child, context));
      }
    }
    try {
      return MetricSet(name, symbol, guid, std::move(counters), std::move(configs),
                       all_attributes(set));
    } catch (const std::invalid_argument& e) {
      fail(set, e.what());
    }
  }

  MetricCounter import_counter(const pugi::xml_node& node, std::string_view set_symbol,
                               const Equation::CounterResolver& resolve) {
    MetricCounter c;
    c.symbol = required(node, "symbol_name", fmt::format("metric set {}", set_symbol));
    const std::string context = fmt::format("metric set {} counter {}", set_symbol, c.symbol);
    c.name = required(node, "name", context);
    c.description = node.attribute("description").value();
    c.units = node.attribute("units").value();
    c.semantic_type = node.attribute("semantic_type").value();
    const std::string type = required(node, "data_type", context);
    if (type == "uint64") {
      c.data_type = MetricCounter::DataType::kUint64;
    } else if (type == "uint32") {
      c.data_type = MetricCounter::DataType::kUint32;
    } else if (type == "float") {
      c.data_type = MetricCounter::DataType::kFloat;
    } else if (type == "double") {
      c.data_type = MetricCounter::DataType::kDouble;
    } else if (type == "bool32") {
      c.data_type = MetricCounter::DataType::kBool;
    } else {
      fail(node, fmt::format("{}: data_type '{}' is none of uint64, uint32, float, double, bool32",
                             context, type));
    }
    c.equation = compile(node, required(node, "equation", context), resolve,
                         fmt::format("{} equation", context));
    if (const auto max = node.attribute("max_equation")) {
      c.max_equation = compile(node, max.value(), resolve, fmt::format("{} max_equation", context));
    }
    if (const auto avail = node.attribute("availability")) {
      // Availability is decided from the device alone: a counter reference there is an error.
      c.availability = compile(node, avail.value(), {}, fmt::format("{} availability", context));
    }
    c.attributes = all_attributes(node);
    return c;
  }

  RegisterConfig import_config(const pugi::xml_node& node, std::string_view set_context) {
    RegisterConfig config;
    const std::string type = required(node, "type", set_context);
    if (type == "NOA") {
      config.kind = RegisterConfig::Kind::kNoa;
    } else if (type == "OA") {
      config.kind = RegisterConfig::Kind::kBoolean;
    } else if (type == "FLEX") {
      config.kind = RegisterConfig::Kind::kFlex;
    } else {
      fail(node, fmt::format("{}: register_config type '{}' is none of NOA, OA, FLEX", set_context,
                             type));
    }
    const std::string context = fmt::format("{} {} config", set_context, type);
    if (const auto avail = node.attribute("availability")) {
      config.availability =
          compile(node, avail.value(), {}, fmt::format("{} availability", context));
    }
    if (const auto priority = node.attribute("priority")) {
      config.priority = static_cast<int>(parse_u32(node, "priority", context));
    }
    for (const pugi::xml_node reg : node.children()) {
      if (reg.type() != pugi::node_element) continue;
      if (std::string_view(reg.name()) != "register") {
        fail(reg, fmt::format("{}: <{}> where <register> was expected", context, reg.name()));
      }
      if (const auto reg_type = reg.attribute("type"); reg_type && type != reg_type.value()) {
        fail(reg, fmt::format("{}: a register of type {} in a {} config", context, reg_type.value(),
                              type));
      }
      config.writes.push_back(
          {parse_u32(reg, "address", context), parse_u32(reg, "value", context)});
    }
    return config;
  }

  std::string_view xml_;
  std::string_view source_;
};

}  // namespace

const MetricSet* MetricFile::find(std::string_view symbol) const {
  for (const MetricSet& s : sets) {
    if (s.symbol() == symbol) return &s;
  }
  return nullptr;
}

MetricFile import_metrics_xml(std::string_view xml, std::string_view source) {
  return Importer(xml, source).run();
}

}  // namespace oaprof::oa
