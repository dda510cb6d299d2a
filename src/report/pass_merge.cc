#include "report/pass_merge.h"

#include <map>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/field_json.h"
#include "report/json_text.h"

namespace oaprof::report {
namespace {

const Field* find(const std::vector<Field>& row, std::string_view name) {
  for (const Field& f : row) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string text(const FieldValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* u = std::get_if<std::uint64_t>(&v)) return std::to_string(*u);
  return {};
}

// A launch as the passes know it: the kernel, its ordinal among that kernel's launches, and its
// sizes.
struct LaunchKey {
  std::string kernel;
  std::uint64_t ordinal = 0;
  std::string global, local;
  auto operator<=>(const LaunchKey&) const = default;
  std::string describe() const {
    return fmt::format("launch {} of '{}' (global size {}, local size {})", ordinal + 1, kernel,
                       global, local.empty() ? "auto" : local);
  }
};

// Every row's key, in order; throws std::invalid_argument for a row without the columns.
std::vector<LaunchKey> keys_of(const Pass& pass) {
  std::vector<LaunchKey> keys;
  std::map<std::string, std::uint64_t> seen;
  for (const auto& row : pass.rows) {
    const Field* kernel = find(row, "kernel");
    const Field* global = find(row, "global_size");
    const Field* local = find(row, "local_size");
    if (kernel == nullptr || global == nullptr || local == nullptr) {
      throw std::invalid_argument(fmt::format("a row of pass {} has no kernel or sizes", pass.set));
    }
    const std::string name = text(kernel->value);
    keys.push_back({name, seen[name]++, text(global->value), text(local->value)});
  }
  return keys;
}

using KeyIndex = std::map<LaunchKey, std::size_t>;

KeyIndex index_of(const std::vector<LaunchKey>& keys) {
  KeyIndex at;
  for (std::size_t i = 0; i < keys.size(); ++i) at.emplace(keys[i], i);
  return at;
}

// Where each key of pass `number` is; PassMismatch when it and the first pass differ in a launch.
KeyIndex index_against(const Pass& pass, std::size_t number, const Pass& first,
                       const std::vector<LaunchKey>& first_keys, const KeyIndex& first_at) {
  const std::vector<LaunchKey> keys = keys_of(pass);
  KeyIndex at = index_of(keys);
  const auto mismatch = [&](const LaunchKey& k, const Pass& has, std::size_t has_number,
                            const Pass& lacks, std::size_t lacks_number) {
    return PassMismatch(fmt::format(
        "the runs launched different sequences: pass {} ({}) has {}, pass {} ({}) has not; "
        "application replay needs a program that launches the same kernels the same way each "
        "run (each pass's rows are kept in its own file)",
        has_number, has.set, k.describe(), lacks_number, lacks.set));
  };
  for (const LaunchKey& k : first_keys) {
    if (!at.contains(k)) throw mismatch(k, first, 1, pass, number);
  }
  for (const LaunchKey& k : keys) {
    if (!first_at.contains(k)) throw mismatch(k, pass, number, first, 1);
  }
  return at;
}

FieldValue value_or_empty(const std::vector<Field>& row, std::string_view name) {
  const Field* f = find(row, name);
  return f == nullptr ? FieldValue{} : f->value;
}

}  // namespace

MergedPasses merge_passes(std::span<const Pass> passes) {
  if (passes.size() < 2) throw std::invalid_argument("merging passes needs two or more");
  const Pass& first = passes.front();
  const std::vector<LaunchKey> first_keys = keys_of(first);
  std::vector<KeyIndex> at{index_of(first_keys)};
  for (std::size_t p = 1; p < passes.size(); ++p) {
    at.push_back(index_against(passes[p], p + 1, first, first_keys, at.front()));
  }
  MergedPasses m;
  m.columns = {"launch", "kernel", "global_size", "local_size", "replay_passes"};
  for (const Pass& pass : passes) {
    m.columns.push_back(pass.set + ".gpu_time_ns");
    m.columns.push_back(pass.set + ".flags");
  }
  for (const Pass& pass : passes) {
    for (const std::string& c : pass.metric_columns) m.columns.push_back(pass.set + "." + c);
  }
  for (std::size_t i = 0; i < first_keys.size(); ++i) {
    // This launch's row in each pass.
    std::vector<const std::vector<Field>*> rows;
    for (std::size_t p = 0; p < passes.size(); ++p) {
      rows.push_back(&passes[p].rows[at[p].at(first_keys[i])]);
    }
    std::vector<Field> row;
    for (const char* name : {"launch", "kernel", "global_size", "local_size", "replay_passes"}) {
      row.push_back({name, value_or_empty(first.rows[i], name)});
    }
    for (std::size_t p = 0; p < passes.size(); ++p) {
      row.push_back({passes[p].set + ".gpu_time_ns", value_or_empty(*rows[p], "gpu_time_ns")});
      row.push_back({passes[p].set + ".flags", value_or_empty(*rows[p], "flags")});
    }
    for (std::size_t p = 0; p < passes.size(); ++p) {
      for (const std::string& c : passes[p].metric_columns) {
        const Field* f = find(*rows[p], c);
        row.push_back({passes[p].set + "." + c, f ? f->value : FieldValue{}, f ? f->decimals : 0});
      }
    }
    m.rows.push_back(std::move(row));
  }
  return m;
}

void write_joined_json(std::ostream& out, const MergedPasses& joined,
                       std::span<const std::string> sets, const std::string& replay) {
  nlohmann::ordered_json doc;
  doc["joined_from"] = {{"replay", replay},
                        {"sets", std::vector<std::string>(sets.begin(), sets.end())}};
  doc["launches"] = nlohmann::ordered_json::array();
  for (const auto& row : joined.rows) {
    nlohmann::ordered_json launch = nlohmann::ordered_json::object();
    for (const Field& f : row) launch[f.name] = field_json<nlohmann::ordered_json>(f);
    doc["launches"].push_back(std::move(launch));
  }
  out << json_text(doc, 1) << "\n";
}

}  // namespace oaprof::report
