// The simulated Level Zero driver's reader of SPIR-V modules: it checks that a binary is a
// well-formed OpenCL (Kernel) SPIR-V module and reads what the driver needs to answer for its
// kernels (names from OpEntryPoint, parameter sizes, a required work-group size). Pure, so that
// it is fuzzed alone (tests/fuzz/spirv_module_fuzz.cc): a program's module is untrusted input.
//
// Instruction layout and the numbers read (opcodes, execution model Kernel, memory model OpenCL,
// addressing models, storage class Workgroup, execution mode LocalSize): the SPIR-V
// specification as KhronosGroup/SPIRV-Headers gives it (include/spirv/unified1/spirv.h, tag
// sdk-1.3.261.0). Word 0 of an instruction holds the word count in its high 16 bits and
// the opcode in its low 16; the module header is magic, version, generator, id bound, schema.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace oaprof::gpu::level_zero_sim {

struct SpirvKernelParameter {
  // Bytes zeKernelSetArgumentValue must be given; nullopt where the type's size is not read here
  // (structs, images, samplers), so any size is taken.
  std::optional<std::size_t> bytes;
  bool local_memory = false;  // a __local pointer: the value is null, the size the bytes wanted
};

struct SpirvKernel {
  std::string name;  // as the module spells it: untrusted text, escape it wherever shown
  std::vector<SpirvKernelParameter> parameters;
  // reqd_work_group_size (OpExecutionMode LocalSize), when the kernel has one.
  std::optional<std::array<std::uint32_t, 3>> required_group_size;
};

struct SpirvModule {
  std::uint32_t version = 0;  // 0x00010000 for SPIR-V 1.0, ...
  std::vector<SpirvKernel> kernels;
};

// Why a binary is not a module the driver can use: malformed (the driver answers
// ZE_RESULT_ERROR_INVALID_NATIVE_BINARY) or well-formed but not for OpenCL devices
// (ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, with `message` in the build log).
struct SpirvError {
  enum class Kind { kMalformed, kNotOpenCl } kind = Kind::kMalformed;
  std::string message;
};

// Reads `bytes` as a SPIR-V module in either byte order. Never throws for bad input and never
// reads outside `bytes`: on failure returns nullopt and sets `error`.
std::optional<SpirvModule> read_spirv_module(std::span<const std::uint8_t> bytes,
                                             SpirvError& error);

}  // namespace oaprof::gpu::level_zero_sim
