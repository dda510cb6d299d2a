// The micro-benchmark catalogue and its name grammar, `<op>[_<type>]_<width>`: the name decides
// the kernel source, the data type, the buffers and how results are checked.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oaprof::launch {

enum class Op { kAdd, kSub, kMul, kDiv, kMad };
enum class DataType { kSp, kDp, kInt };

struct KernelSpec {
  std::string name;  // canonical, e.g. "mad_vect4"
  Op op;
  DataType type;
  int width;  // 1, 2, 4, 8, 16

  // Arithmetic operations one iteration of one work-item performs (mad counts two).
  int ops_per_iteration() const { return width * (op == Op::kMad ? 2 : 1); }
};

std::string_view op_name(Op op);
std::string_view type_name(DataType type);       // "sp", "dp", "int"
std::string_view width_name(int width);          // "scalar", "vect2", …
std::string opencl_type(DataType type, int width);  // "float4", "double", "uint8"

// nullopt when the name does not follow the grammar or names a kernel that does not exist
// (integer mad).
std::optional<KernelSpec> parse_kernel_name(std::string_view name);

// Every name in the catalogue, in a stable order, with a one-line description.
struct CatalogueEntry {
  std::string name;
  std::string description;
};
std::vector<CatalogueEntry> catalogue();

// Up to `count` catalogue names closest to `name` (edit distance), for "did you mean".
std::vector<std::string> nearest_names(std::string_view name, std::size_t count = 3);

}  // namespace oaprof::launch
