#include "launch/catalogue.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace oaprof::launch {
namespace {

constexpr std::array kOps{Op::kAdd, Op::kSub, Op::kMul, Op::kDiv, Op::kMad};
constexpr std::array kTypes{DataType::kSp, DataType::kDp, DataType::kInt};
constexpr std::array kWidths{1, 2, 4, 8, 16};

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string canonical_name(Op op, DataType type, int width) {
  // "sp" is the default type and is left out of the canonical name.
  return type == DataType::kSp
             ? fmt::format("{}_{}", op_name(op), width_name(width))
             : fmt::format("{}_{}_{}", op_name(op), type_name(type), width_name(width));
}

}  // namespace

std::string_view op_name(Op op) {
  switch (op) {
    case Op::kAdd: return "add";
    case Op::kSub: return "sub";
    case Op::kMul: return "mul";
    case Op::kDiv: return "div";
    case Op::kMad: return "mad";
  }
  return "?";
}

std::string_view type_name(DataType type) {
  switch (type) {
    case DataType::kSp: return "sp";
    case DataType::kDp: return "dp";
    case DataType::kInt: return "int";
  }
  return "?";
}

std::string_view width_name(int width) {
  switch (width) {
    case 1: return "scalar";
    case 2: return "vect2";
    case 4: return "vect4";
    case 8: return "vect8";
    case 16: return "vect16";
    default: return "?";
  }
}

std::string opencl_type(DataType type, int width) {
  // Integer kernels compute in uint: wrap-around is defined there, signed overflow is not.
  const char* base = type == DataType::kSp ? "float" : type == DataType::kDp ? "double" : "uint";
  return width == 1 ? std::string(base) : fmt::format("{}{}", base, width);
}

std::optional<KernelSpec> parse_kernel_name(std::string_view name) {
  for (Op op : kOps) {
    for (DataType type : kTypes) {
      if (type == DataType::kInt && op == Op::kMad) continue;
      for (int width : kWidths) {
        // "sp" may be spelled out; both spellings name the same kernel.
        const std::string canonical = canonical_name(op, type, width);
        const std::string explicit_sp =
            fmt::format("{}_sp_{}", op_name(op), width_name(width));
        if (name == canonical || (type == DataType::kSp && name == explicit_sp)) {
          return KernelSpec{canonical, op, type, width};
        }
      }
    }
  }
  return std::nullopt;
}

std::vector<CatalogueEntry> catalogue() {
  std::vector<CatalogueEntry> out;
  for (Op op : kOps) {
    for (DataType type : kTypes) {
      if (type == DataType::kInt && op == Op::kMad) continue;
      for (int width : kWidths) {
        out.push_back({canonical_name(op, type, width), fmt::format("{} loop on {} from __global, operand in __constant{}",
                                         op_name(op), opencl_type(type, width),
                                         op == Op::kMad ? ", -cl-mad-enable" : "")});
      }
    }
  }
  return out;
}

std::vector<std::string> nearest_names(std::string_view name, std::size_t count) {
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& e : catalogue()) scored.emplace_back(edit_distance(name, e.name), e.name);
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && i < count; ++i) out.push_back(scored[i].second);
  return out;
}

}  // namespace oaprof::launch
