#include "launch/catalogue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

namespace oaprof::launch {
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
  EXPECT_EQ(parse_kernel_name("mad_sp_vect16")->name, "mad_vect16");  // explicit sp is canonicalised
}

TEST(CatalogueTest, RejectsWhatDoesNotExist) {
  for (const char* bad : {"", "mad", "mad_vect3", "mad_int_vect4", "fma_vect4", "mad_vect4_", "MAD_vect4"}) {
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
  // 5 ops × 3 types × 5 widths, less integer mad.
  EXPECT_EQ(seen.size(), 5u * 3 * 5 - 5);
}

TEST(CatalogueTest, NearestNamesSuggestTheTypoFix) {
  EXPECT_THAT(nearest_names("mad_vec4", 1), ::testing::ElementsAre("mad_vect4"));
  EXPECT_THAT(nearest_names("add_dp_scalr", 1), ::testing::ElementsAre("add_dp_scalar"));
}

TEST(CatalogueTest, OpenClTypes) {
  EXPECT_EQ(opencl_type(DataType::kSp, 1), "float");
  EXPECT_EQ(opencl_type(DataType::kDp, 16), "double16");
  EXPECT_EQ(opencl_type(DataType::kInt, 4), "uint4");
}

}  // namespace
}  // namespace oaprof::launch
