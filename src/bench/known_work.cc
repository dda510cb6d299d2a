#include "bench/known_work.h"

#include <algorithm>
#include <cmath>

namespace oaprof::bench {
namespace {

constexpr double kLineBytes = 64;

oa::KernelWork compute_work(const KernelSpec& spec, double items, const WorkParams& p, int outer) {
  const int iterations = p.iterations > 0 ? p.iterations : std::max(1, 2048 / spec.width);
  // One operation per element per iteration (a mad is one operation, two FLOPs).
  const double ops = items * iterations * outer * spec.width;
  oa::KernelWork w;
  w.work_items = items;
  (spec.type == DataType::kSp   ? w.fp32_ops
   : spec.type == DataType::kDp ? w.fp64_ops
                                : w.int_ops) = ops;
  if (spec.type != DataType::kInt) w.flops = ops * (spec.op == Op::kMad ? 2 : 1);
  // The start value read from __global and the result written back, once per element.
  const double vector_bytes = static_cast<double>(spec.element_bytes()) * spec.width;
  w.global_bytes = 2 * items * vector_bytes;
  w.footprint_bytes = w.global_bytes;
  w.global_accesses = 2 * items;
  return w;
}

oa::KernelWork load_store_work(const KernelSpec& spec, double items, const WorkParams& p) {
  const double vector_bytes = static_cast<double>(spec.element_bytes()) * spec.width;
  const double bytes = std::floor(static_cast<double>(p.size_bytes) / vector_bytes) * vector_bytes;
  oa::KernelWork w;
  w.work_items = items;
  w.global_bytes = 2 * bytes;  // every byte read once and written once
  w.footprint_bytes = 2 * bytes;
  w.global_accesses = 2 * bytes / vector_bytes;  // one load and one store per vector
  return w;
}

oa::KernelWork pchase_work(double items, const WorkParams& p) {
  const double elements = std::floor(static_cast<double>(p.size_bytes) / 4);
  const double stride = static_cast<double>(std::max<std::size_t>(1, p.stride));
  const double lines = std::max(1.0, std::floor(elements / stride));
  const double hops = p.iterations > 0 ? p.iterations : std::max(1.0, std::floor(lines / items));
  const double accesses = items * hops;
  oa::KernelWork w;
  w.work_items = items;
  // Each access brings in one line, or the part of one its stride spans; each work-item then
  // stores where it ended.
  w.global_bytes = accesses * std::min(kLineBytes, stride * 4) + items * 4;
  w.footprint_bytes =
      std::min(elements * 4, accesses * std::max(kLineBytes, stride * 4)) + items * 4;
  return w;
}

}  // namespace

std::optional<oa::KernelWork> known_work(const KernelSpec& spec, std::size_t global_size,
                                         const WorkParams& params) {
  const auto items = static_cast<double>(global_size);
  switch (spec.kind) {
    case Kind::kCompute:
      if (spec.power && !params.outer) return std::nullopt;
      return compute_work(spec, items, params, spec.power ? *params.outer : 1);
    case Kind::kLoadStore:
      return load_store_work(spec, items, params);
    case Kind::kPchaseBw:
    case Kind::kPchaseLat:
      return pchase_work(items, params);
    case Kind::kEmpty: {
      oa::KernelWork w;
      w.work_items = items;
      return w;
    }
  }
  return std::nullopt;
}

std::optional<oa::KernelWork> known_work(std::string_view kernel_name, std::size_t global_size,
                                         const WorkParams& params) {
  const std::optional<KernelSpec> spec = parse_kernel_name(kernel_name);
  if (!spec) return std::nullopt;
  return known_work(*spec, global_size, params);
}

}  // namespace oaprof::bench
