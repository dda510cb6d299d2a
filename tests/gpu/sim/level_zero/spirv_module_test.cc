// The simulated driver's SPIR-V reader: a module clang-15 and llvm-spirv-15 built, and small
// hand-made modules (opcodes as SPIRV-Headers' spirv.h numbers them) that are malformed in one way.
#include "gpu/sim/level_zero/spirv_module.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace oaprof::gpu::level_zero_sim {
namespace {

std::vector<std::uint8_t> bytes_of(const std::vector<std::uint32_t>& words, bool swap = false) {
  std::vector<std::uint8_t> out;
  for (std::uint32_t w : words) {
    for (int b = 0; b < 4; ++b)
      out.push_back(static_cast<std::uint8_t>(w >> (8 * (swap ? 3 - b : b))));
  }
  return out;
}

std::uint32_t op(std::uint32_t words, std::uint32_t opcode) { return words << 16 | opcode; }

// A module with one kernel "k(int)": header, OpMemoryModel Physical64 OpenCL, OpEntryPoint,
// OpTypeInt, OpTypeVoid, OpTypeFunction, OpFunction, OpFunctionParameter, OpFunctionEnd.
std::vector<std::uint32_t> one_kernel(std::uint32_t memory_model = 2) {
  return {0x07230203,   0x00010000, 0,  10, 0,          op(3, 14), 2,
          memory_model, op(4, 15),  6,  5,  0x0000006B,  // Kernel, function 5, "k"
          op(4, 21),    1,          32, 0,               // %1 = int
          op(2, 19),    2,                               // %2 = void
          op(4, 33),    3,          2,  1,               // %3 = fn(int)
          op(5, 54),    2,          5,  0,  3,           // %5 = OpFunction
          op(3, 55),    1,          6,                   // %6 = parameter int
          op(1, 56)};
}

TEST(SpirvModuleTest, ReadsAHandMadeKernelInEitherByteOrder) {
  for (const bool swap : {false, true}) {
    SpirvError error;
    const auto m = read_spirv_module(bytes_of(one_kernel(), swap), error);
    ASSERT_TRUE(m.has_value()) << error.message;
    ASSERT_EQ(m->kernels.size(), 1u);
    EXPECT_EQ(m->kernels[0].name, "k");
    ASSERT_EQ(m->kernels[0].parameters.size(), 1u);
    EXPECT_EQ(m->kernels[0].parameters[0].bytes, 4u);
  }
}

TEST(SpirvModuleTest, RefusesMalformedModules) {
  auto words = one_kernel();
  std::vector<std::vector<std::uint8_t>> bad;
  bad.push_back(bytes_of({0x07230203, 0x00010000, 0}));         // short header
  bad.push_back(bytes_of({0x12345678, 0x00010000, 0, 10, 0}));  // no magic
  bad.push_back(bytes_of({0x07230203, 0x00020000, 0, 10, 0}));  // SPIR-V 2.0
  auto zero_count = words;
  zero_count[5] = op(0, 14);
  bad.push_back(bytes_of(zero_count));
  auto past_end = words;
  past_end[8] = op(400, 15);
  bad.push_back(bytes_of(past_end));
  auto no_nul = words;
  no_nul[11] = 0x6B6B6B6B;  // the name's word has no terminating NUL
  bad.push_back(bytes_of(no_nul));
  auto unclosed = words;
  unclosed.pop_back();  // no OpFunctionEnd
  bad.push_back(bytes_of(unclosed));
  auto odd = bytes_of(words);
  odd.pop_back();
  bad.push_back(odd);
  for (std::size_t i = 0; i < bad.size(); ++i) {
    SpirvError error;
    EXPECT_FALSE(read_spirv_module(bad[i], error).has_value()) << "case " << i;
    EXPECT_EQ(error.kind, SpirvError::Kind::kMalformed) << "case " << i;
    EXPECT_FALSE(error.message.empty()) << "case " << i;
  }
}

TEST(SpirvModuleTest, AModuleForAnotherMemoryModelIsNotForOpenCl) {
  SpirvError error;
  EXPECT_FALSE(read_spirv_module(bytes_of(one_kernel(/*GLSL450*/ 1)), error).has_value());
  EXPECT_EQ(error.kind, SpirvError::Kind::kNotOpenCl);
}

TEST(SpirvModuleTest, ReadsTheKernelsClangBuilt) {
  std::ifstream in(ZE_SIM_SPIRV, std::ios::binary);
  const std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
  if (bytes.empty()) GTEST_SKIP() << "no SPIR-V was built: " << ZE_SIM_MISSING;
  SpirvError error;
  const auto m = read_spirv_module(bytes, error);
  ASSERT_TRUE(m.has_value()) << error.message;
  ASSERT_EQ(m->kernels.size(), 5u);
  EXPECT_EQ(m->kernels[0].name, "scale");
  ASSERT_EQ(m->kernels[0].parameters.size(), 2u);
  EXPECT_EQ(m->kernels[0].parameters[0].bytes, 8u);  // a global pointer
  EXPECT_EQ(m->kernels[0].parameters[1].bytes, 4u);  // a float
  EXPECT_EQ(m->kernels[1].name, "add_one");
  EXPECT_EQ(m->kernels[2].name, "fixed_group");
  EXPECT_TRUE(m->kernels[2].parameters[1].local_memory);
  EXPECT_EQ(m->kernels[3].name, "mad_vect4");  // a catalogue kernel, for the work hint's test
  EXPECT_EQ(m->kernels[4].name, "sim_hang");   // the simulated driver's GPU hang
  EXPECT_EQ(m->kernels[2].required_group_size, (std::array<std::uint32_t, 3>{16, 1, 1}));
}

}  // namespace
}  // namespace oaprof::gpu::level_zero_sim
