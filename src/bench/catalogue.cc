#include "bench/catalogue.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace oaprof::bench {
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
    case Op::kAdd:
      return "add";
    case Op::kSub:
      return "sub";
    case Op::kMul:
      return "mul";
    case Op::kDiv:
      return "div";
    case Op::kMad:
      return "mad";
  }
  return "?";
}

std::string_view type_name(DataType type) {
  switch (type) {
    case DataType::kSp:
      return "sp";
    case DataType::kDp:
      return "dp";
    case DataType::kInt:
      return "int";
  }
  return "?";
}

std::string_view width_name(int width) {
  switch (width) {
    case 1:
      return "scalar";
    case 2:
      return "vect2";
    case 4:
      return "vect4";
    case 8:
      return "vect8";
    case 16:
      return "vect16";
    default:
      return "?";
  }
}

std::string opencl_type(DataType type, int width) {
  // Integer kernels compute in uint: wrap-around is defined there, signed overflow is not.
  const char* base = type == DataType::kSp ? "float" : type == DataType::kDp ? "double" : "uint";
  return width == 1 ? std::string(base) : fmt::format("{}{}", base, width);
}

namespace {

struct Entry {
  KernelSpec spec;
  std::string description;
};

std::string compute_description(const KernelSpec& s) {
  return fmt::format("{} loop on private {}, start value from __global, operand in __constant{}",
                     op_name(s.op), opencl_type(s.type, s.width),
                     s.op == Op::kMad ? ", -cl-mad-enable" : "");
}

// The whole catalogue, built once, in the order --list prints it.
const std::vector<Entry>& entries() {
  static const std::vector<Entry> kEntries = [] {
    std::vector<Entry> out;
    std::vector<KernelSpec> compute;
    for (Op op : kOps) {
      for (DataType type : kTypes) {
        if (type == DataType::kInt && op == Op::kMad) continue;
        for (int width : kWidths) {
          compute.push_back({canonical_name(op, type, width), op, type, width});
        }
      }
    }
    for (const auto& s : compute) out.push_back({s, compute_description(s)});
    for (DataType type : {DataType::kSp, DataType::kDp}) {
      for (int width : kWidths) {
        KernelSpec s;
        s.name = type == DataType::kSp ? fmt::format("load_store_{}", width_name(width))
                                       : fmt::format("load_store_dp_{}", width_name(width));
        s.type = type;
        s.width = width;
        s.kind = Kind::kLoadStore;
        out.push_back({s, fmt::format("out[i] = in[i] over --size bytes of {} (bytes read + "
                                      "written per second)",
                                      opencl_type(type, width))});
      }
    }
    KernelSpec bw;
    bw.name = "pchase_bw";
    bw.type = DataType::kInt;
    bw.kind = Kind::kPchaseBw;
    out.push_back({bw,
                   "strided pointer chase over --size bytes by every work-item (--stride "
                   "elements, default 16 = one 64-byte line): bandwidth"});
    KernelSpec lat = bw;
    lat.name = "pchase_lat";
    lat.kind = Kind::kPchaseLat;
    out.push_back({lat,
                   "strided pointer chase by one work-item over --size bytes: latency per "
                   "access"});
    KernelSpec empty;
    empty.name = "empty";
    empty.kind = Kind::kEmpty;
    out.push_back({empty, "get_global_id(0) only: the base cost of a launch"});
    for (const auto& c : compute) {
      KernelSpec s = c;
      s.name = "power_" + c.name;
      s.power = true;
      out.push_back({s, fmt::format("{} with an outer loop sized for --power-ms per launch "
                                    "(equal run time across widths, for energy)",
                                    c.name)});
    }
    return out;
  }();
  return kEntries;
}

}  // namespace

std::optional<KernelSpec> parse_kernel_name(std::string_view name) {
  // "sp" is the default type and may be spelled out; both spellings name the same kernel.
  std::string wanted(name);
  if (const auto pos = wanted.find("_sp_"); pos != std::string::npos) wanted.erase(pos, 3);
  for (const auto& e : entries()) {
    if (e.spec.name == wanted) return e.spec;
  }
  return std::nullopt;
}

std::vector<CatalogueEntry> catalogue() {
  std::vector<CatalogueEntry> out;
  for (const auto& e : entries()) out.push_back({e.spec.name, e.description});
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

}  // namespace oaprof::bench
