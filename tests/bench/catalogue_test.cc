#include "bench/catalogue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

namespace oaprof::bench {
namespace {

TEST(CatalogueTest, ParsesTheGrammar) {
  const auto mad = parse_kernel_name("mad_vect4");
  ASSERT_TRUE(mad);
  EXPECT_EQ(mad->op, Op::kMad);
  EXPECT_EQ(mad->type, DataType::kSp);
  EXPECT_EQ(mad->width, 4);
  EXPECT_EQ(mad->ops_per_iteration(), 8);
  const auto add = parse_kernel_name("add_dp_scalar");
  ASSERT_TRUE(add);
  EXPECT_EQ(add->type, DataType::kDp);
  EXPECT_EQ(add->width, 1);
  EXPECT_EQ(parse_kernel_name("mul_int_vect8")->type, DataType::kInt);
  EXPECT_EQ(parse_kernel_name("mad_sp_vect16")->name,
            "mad_vect16");  // explicit sp is canonicalised
}

TEST(CatalogueTest, ParsesMemoryPowerAndLaunchKernels) {
  const auto ls = parse_kernel_name("load_store_dp_vect8");
  ASSERT_TRUE(ls);
  EXPECT_EQ(ls->kind, Kind::kLoadStore);
  EXPECT_EQ(ls->type, DataType::kDp);
  EXPECT_EQ(ls->width, 8);
  EXPECT_EQ(ls->element_bytes(), 8u);
  EXPECT_EQ(ls->function_name(), "load_store_dp_vect8");
  EXPECT_EQ(parse_kernel_name("load_store_sp_vect4")->name, "load_store_vect4");
  EXPECT_EQ(parse_kernel_name("pchase_bw")->kind, Kind::kPchaseBw);
  EXPECT_EQ(parse_kernel_name("pchase_lat")->function_name(), "pchase");
  EXPECT_EQ(parse_kernel_name("empty")->kind, Kind::kEmpty);
  const auto power = parse_kernel_name("power_mul_int_vect16");
  ASSERT_TRUE(power);
  EXPECT_TRUE(power->power);
  EXPECT_EQ(power->kind, Kind::kCompute);
  EXPECT_EQ(power->op, Op::kMul);
  EXPECT_EQ(power->type, DataType::kInt);
  EXPECT_EQ(power->width, 16);
  EXPECT_EQ(power->function_name(), "mul_int_vect16");  // the compute kernel, looped outside
  EXPECT_EQ(parse_kernel_name("power_mad_sp_vect2")->name, "power_mad_vect2");
  EXPECT_FALSE(parse_kernel_name("mad_vect4")->power);
}

TEST(CatalogueTest, RejectsWhatDoesNotExist) {
  for (const char* bad : {"", "mad", "mad_vect3", "mad_int_vect4", "fma_vect4", "mad_vect4_",
                          "MAD_vect4", "load_store_int_vect4", "power_load_store_vect4",
                          "power_empty", "power_mad_int_scalar", "pchase", "load_store"}) {
    EXPECT_FALSE(parse_kernel_name(bad)) << bad;
  }
}

TEST(CatalogueTest, EveryCatalogueNameParsesBackToItselfAndIsUnique) {
  std::set<std::string> seen;
  for (const auto& e : catalogue()) {
    EXPECT_TRUE(seen.insert(e.name).second) << e.name;
    const auto spec = parse_kernel_name(e.name);
    ASSERT_TRUE(spec) << e.name;
    EXPECT_EQ(spec->name, e.name);
    EXPECT_FALSE(e.description.empty());
  }
  // Compute: 5 ops × 3 types × 5 widths, less integer mad; as many power variants; load_store
  // in sp and dp at 5 widths; pchase_bw, pchase_lat, empty.
  constexpr std::size_t kCompute = 5 * 3 * 5 - 5;
  EXPECT_EQ(seen.size(), 2 * kCompute + 2 * 5 + 3);
  for (const char* name :
       {"mad_vect4", "add_dp_scalar", "mul_int_vect8", "load_store_vect16", "load_store_dp_scalar",
        "pchase_bw", "pchase_lat", "empty", "power_div_dp_vect4"}) {
    EXPECT_TRUE(seen.count(name)) << name;
  }
}

TEST(CatalogueTest, NearestNamesSuggestTheTypoFix) {
  EXPECT_THAT(nearest_names("mad_vec4", 1), ::testing::ElementsAre("mad_vect4"));
  EXPECT_THAT(nearest_names("add_dp_scalr", 1), ::testing::ElementsAre("add_dp_scalar"));
  EXPECT_THAT(nearest_names("load_stor_vect4", 1), ::testing::ElementsAre("load_store_vect4"));
  EXPECT_THAT(nearest_names("pchase_latency", 1), ::testing::ElementsAre("pchase_lat"));
}

TEST(CatalogueTest, OpenClTypes) {
  EXPECT_EQ(opencl_type(DataType::kSp, 1), "float");
  EXPECT_EQ(opencl_type(DataType::kDp, 16), "double16");
  EXPECT_EQ(opencl_type(DataType::kInt, 4), "uint4");
}

}  // namespace
}  // namespace oaprof::bench
