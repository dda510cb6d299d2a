// The micro-benchmark catalogue and its name grammar: compute kernels `<op>[_<type>]_<width>`,
// memory kernels `load_store[_dp]_<width>`, `pchase_bw`, `pchase_lat`, the launch-cost kernel
// `empty`, and power variants `power_<compute name>`. The name decides the kernel source, the data
// type, the buffers and how results are checked.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oaprof::bench {

enum class Op { kAdd, kSub, kMul, kDiv, kMad };
enum class DataType { kSp, kDp, kInt };

// What a kernel exercises; decides its arguments, its work figure and its unit.
enum class Kind {
  kCompute,    // <op>[_<type>]_<width>: arithmetic on private data, operand in __constant
  kLoadStore,  // load_store[_dp]_<width>: out[i] = in[i] over a buffer
  kPchaseBw,   // pchase_bw: strided pointer chase by every work-item, bytes per second
  kPchaseLat,  // pchase_lat: strided pointer chase by one work-item, time per access
  kEmpty,      // empty: the base cost of a launch
};

struct KernelSpec {
  std::string name;  // canonical, e.g. "mad_vect4", "power_add_dp_scalar", "load_store_vect4"
  Op op = Op::kAdd;
  DataType type = DataType::kSp;
  int width = 1;  // 1, 2, 4, 8, 16
  Kind kind = Kind::kCompute;
  // A power variant: the compute kernel with an outer loop sized so that one launch lasts about
  // the same time for every width (long enough to span many RAPL updates).
  bool power = false;

  // Arithmetic operations one iteration of one work-item performs (mad counts two).
  int ops_per_iteration() const { return width * (op == Op::kMad ? 2 : 1); }
  // The OpenCL function that implements it: power variants run their compute kernel, both
  // pointer chases run `pchase`.
  std::string function_name() const {
    if (kind == Kind::kPchaseBw || kind == Kind::kPchaseLat) return "pchase";
    return power ? name.substr(6) : name;
  }
  std::size_t element_bytes() const {
    return type == DataType::kDp ? 8 : 4;  // float and uint are 4 bytes
  }
};

std::string_view op_name(Op op);
std::string_view type_name(DataType type);          // "sp", "dp", "int"
std::string_view width_name(int width);             // "scalar", "vect2", …
std::string opencl_type(DataType type, int width);  // "float4", "double", "uint8"

// nullopt when the name does not follow the grammar or names a kernel that does not exist
// (integer mad, integer load_store).
std::optional<KernelSpec> parse_kernel_name(std::string_view name);

// Every name in the catalogue, in a stable order, with a one-line description.
struct CatalogueEntry {
  std::string name;
  std::string description;
};
std::vector<CatalogueEntry> catalogue();

// Up to `count` catalogue names closest to `name` (edit distance), for "did you mean".
std::vector<std::string> nearest_names(std::string_view name, std::size_t count = 3);

}  // namespace oaprof::bench
