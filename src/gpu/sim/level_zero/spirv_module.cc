#include "gpu/sim/level_zero/spirv_module.h"

#include <map>
#include <set>
#include <string_view>

#include <fmt/format.h>

namespace oaprof::gpu::level_zero_sim {
namespace {

// The numbers of SPIRV-Headers' spirv.h (sdk-1.3.261.0) that this reader needs.
constexpr std::uint32_t kMagic = 0x07230203;
constexpr std::uint32_t kOpMemoryModel = 14;
constexpr std::uint32_t kOpEntryPoint = 15;
constexpr std::uint32_t kOpExecutionMode = 16;
constexpr std::uint32_t kOpTypeInt = 21;
constexpr std::uint32_t kOpTypeFloat = 22;
constexpr std::uint32_t kOpTypeVector = 23;
constexpr std::uint32_t kOpTypePointer = 32;
constexpr std::uint32_t kOpFunction = 54;
constexpr std::uint32_t kOpFunctionParameter = 55;
constexpr std::uint32_t kOpFunctionEnd = 56;
constexpr std::uint32_t kExecutionModelKernel = 6;
constexpr std::uint32_t kExecutionModeLocalSize = 17;
constexpr std::uint32_t kAddressingPhysical32 = 1;
constexpr std::uint32_t kMemoryModelOpenCl = 2;
constexpr std::uint32_t kStorageClassWorkgroup = 4;
constexpr std::size_t kHeaderWords = 5;

struct EntryPoint {
  std::uint32_t model;
  std::uint32_t function;
  std::string name;
};

struct Type {
  std::optional<std::size_t> bytes;
  bool local_pointer = false;
};

// What one pass over the instructions collects; the kernels are put together afterwards.
struct Collected {
  std::optional<std::uint32_t> addressing, memory_model;
  std::vector<EntryPoint> entry_points;
  std::map<std::uint32_t, std::array<std::uint32_t, 3>> local_sizes;
  std::map<std::uint32_t, Type> types;
  std::map<std::uint32_t, std::vector<std::uint32_t>> function_parameters;  // type ids
  std::optional<std::uint32_t> open_function;
};

std::uint32_t byte_swapped(std::uint32_t w) {
  return (w >> 24) | ((w >> 8) & 0xFF00u) | ((w << 8) & 0xFF0000u) | (w << 24);
}

std::optional<std::vector<std::uint32_t>> words_of(std::span<const std::uint8_t> bytes,
                                                   std::string& why) {
  if (bytes.size() % 4 != 0 || bytes.size() < kHeaderWords * 4) {
    why = fmt::format("{} bytes is not a SPIR-V module (a header of 5 words and whole words)",
                      bytes.size());
    return std::nullopt;
  }
  std::vector<std::uint32_t> words(bytes.size() / 4);
  for (std::size_t i = 0; i < words.size(); ++i) {
    words[i] = std::uint32_t{bytes[4 * i]} | std::uint32_t{bytes[4 * i + 1]} << 8 |
               std::uint32_t{bytes[4 * i + 2]} << 16 | std::uint32_t{bytes[4 * i + 3]} << 24;
  }
  if (words[0] == byte_swapped(kMagic)) {
    for (auto& w : words) w = byte_swapped(w);
  }
  if (words[0] != kMagic) {
    why = fmt::format("no SPIR-V magic number (0x{:08x})", words[0]);
    return std::nullopt;
  }
  return words;
}

bool check_header(std::span<const std::uint32_t> w, std::string& why) {
  const std::uint32_t version = w[1];
  if ((version & 0xFF0000FFu) != 0 || (version >> 16) != 1 || ((version >> 8) & 0xFF) > 6) {
    why = fmt::format("SPIR-V version word 0x{:08x} is not 1.0 to 1.6", version);
    return false;
  }
  if (w[3] == 0 || w[4] != 0) {
    why = fmt::format("bad SPIR-V header: id bound {}, schema {}", w[3], w[4]);
    return false;
  }
  return true;
}

// A literal string at the start of `operands`: its text and how many words it took.
std::optional<std::pair<std::string, std::size_t>> literal_string(
    std::span<const std::uint32_t> operands) {
  std::string text;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    for (int b = 0; b < 4; ++b) {
      const char c = static_cast<char>((operands[i] >> (8 * b)) & 0xFF);
      if (c == '\0') return std::pair{text, i + 1};
      text.push_back(c);
    }
  }
  return std::nullopt;  // no terminating NUL inside the instruction
}

std::optional<std::size_t> vector_bytes(const Collected& c, std::uint32_t component,
                                        std::uint32_t count) {
  const auto it = c.types.find(component);
  if (it == c.types.end() || !it->second.bytes || count == 0 || count > 16) return std::nullopt;
  // OpenCL C stores a 3-component vector as 4 (cl_float3 is 16 bytes).
  return *it->second.bytes * (count == 3 ? 4 : count);
}

bool record_type(std::uint32_t op, std::span<const std::uint32_t> o, Collected& c) {
  if (o.empty()) return false;
  if (op == kOpTypeInt || op == kOpTypeFloat) {
    if (o.size() < 2 || o[1] == 0 || o[1] % 8 != 0 || o[1] > 64) return false;
    c.types[o[0]] = Type{o[1] / 8};
  } else if (op == kOpTypeVector) {
    if (o.size() < 3) return false;
    c.types[o[0]] = Type{vector_bytes(c, o[1], o[2])};
  } else if (op == kOpTypePointer) {
    if (o.size() < 3) return false;
    const bool local = o[1] == kStorageClassWorkgroup;
    const std::size_t pointer_bytes = c.addressing == kAddressingPhysical32 ? 4 : 8;
    c.types[o[0]] = Type{local ? std::nullopt : std::optional{pointer_bytes}, local};
  }
  return true;
}

bool record_function(std::uint32_t op, std::span<const std::uint32_t> o, Collected& c) {
  if (op == kOpFunction) {
    if (o.size() < 4 || c.open_function) return false;
    c.open_function = o[1];
    c.function_parameters[o[1]];
  } else if (op == kOpFunctionParameter) {
    if (o.size() < 2 || !c.open_function) return false;
    c.function_parameters[*c.open_function].push_back(o[0]);
  } else if (op == kOpFunctionEnd) {
    if (!c.open_function) return false;
    c.open_function.reset();
  }
  return true;
}

bool record_instruction(std::uint32_t op, std::span<const std::uint32_t> o, Collected& c) {
  switch (op) {
    case kOpMemoryModel:
      if (o.size() < 2) return false;
      c.addressing = o[0];
      c.memory_model = o[1];
      return true;
    case kOpEntryPoint: {
      if (o.size() < 3) return false;
      auto name = literal_string(o.subspan(2));
      if (!name) return false;
      c.entry_points.push_back({o[0], o[1], std::move(name->first)});
      return true;
    }
    case kOpExecutionMode:
      if (o.size() >= 2 && o[1] == kExecutionModeLocalSize) {
        if (o.size() < 5) return false;
        c.local_sizes[o[0]] = {o[2], o[3], o[4]};
      }
      return o.size() >= 2;
    case kOpTypeInt:
    case kOpTypeFloat:
    case kOpTypeVector:
    case kOpTypePointer:
      return record_type(op, o, c);
    case kOpFunction:
    case kOpFunctionParameter:
    case kOpFunctionEnd:
      return record_function(op, o, c);
    default:
      return true;
  }
}

bool collect(std::span<const std::uint32_t> w, Collected& c, std::string& why) {
  for (std::size_t at = kHeaderWords; at < w.size();) {
    const std::uint32_t count = w[at] >> 16, op = w[at] & 0xFFFFu;
    if (count == 0 || count > w.size() - at) {
      why = fmt::format("instruction at word {} has a word count of {} ({} words left)", at, count,
                        w.size() - at);
      return false;
    }
    if (!record_instruction(op, w.subspan(at + 1, count - 1), c)) {
      why = fmt::format("malformed instruction (opcode {}) at word {}", op, at);
      return false;
    }
    at += count;
  }
  if (c.open_function) {
    why = "a function has no OpFunctionEnd";
    return false;
  }
  return true;
}

std::optional<SpirvKernel> kernel_of(const EntryPoint& entry, const Collected& c,
                                     std::string& why) {
  const auto fn = c.function_parameters.find(entry.function);
  if (fn == c.function_parameters.end()) {
    why = fmt::format("entry point '{}' names no function of the module", entry.name);
    return std::nullopt;
  }
  SpirvKernel kernel{entry.name, {}, std::nullopt};
  for (const std::uint32_t type_id : fn->second) {
    const auto type = c.types.find(type_id);
    SpirvKernelParameter p;
    if (type != c.types.end()) p = {type->second.bytes, type->second.local_pointer};
    kernel.parameters.push_back(p);
  }
  if (const auto ls = c.local_sizes.find(entry.function); ls != c.local_sizes.end()) {
    kernel.required_group_size = ls->second;
  }
  return kernel;
}

std::optional<SpirvModule> kernels_of(const Collected& c, std::uint32_t version,
                                      SpirvError& error) {
  if (!c.memory_model) {
    error = {SpirvError::Kind::kMalformed, "the module has no OpMemoryModel"};
    return std::nullopt;
  }
  if (*c.memory_model != kMemoryModelOpenCl) {
    error = {SpirvError::Kind::kNotOpenCl,
             fmt::format("memory model {} is not OpenCL's (2): the module is not for OpenCL "
                         "devices; compile it from OpenCL C or SYCL",
                         *c.memory_model)};
    return std::nullopt;
  }
  SpirvModule module{version, {}};
  std::set<std::string_view> names;
  for (const EntryPoint& entry : c.entry_points) {
    if (entry.model != kExecutionModelKernel) continue;  // not a kernel: nothing to launch
    if (!names.insert(entry.name).second) {
      error = {SpirvError::Kind::kMalformed, fmt::format("two kernels are named '{}'", entry.name)};
      return std::nullopt;
    }
    auto kernel = kernel_of(entry, c, error.message);
    if (!kernel) return std::nullopt;
    module.kernels.push_back(std::move(*kernel));
  }
  return module;
}

}  // namespace

std::optional<SpirvModule> read_spirv_module(std::span<const std::uint8_t> bytes,
                                             SpirvError& error) {
  error = {SpirvError::Kind::kMalformed, {}};
  const auto words = words_of(bytes, error.message);
  if (!words || !check_header(*words, error.message)) return std::nullopt;
  Collected collected;
  if (!collect(*words, collected, error.message)) return std::nullopt;
  return kernels_of(collected, (*words)[1], error);
}

}  // namespace oaprof::gpu::level_zero_sim
