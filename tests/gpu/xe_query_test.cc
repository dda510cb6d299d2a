// xe's OA unit list: parsed from the bytes the kernel lays out (xe_uapi.h), refused when they are
// not a well-formed reply, queried in the uapi's two steps, and the render OAG chosen.
#include "gpu/xe_query.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace oaprof::gpu {
namespace {

using ::testing::HasSubstr;

struct UnitSpec {
  std::uint32_t id;
  std::uint32_t type;
  std::vector<std::uint16_t> engine_classes;
};

template <typename T>
void append(std::vector<std::uint8_t>& out, const T& value) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

// A reply as xe_query.c writes it: the header, then each unit and its engines.
std::vector<std::uint8_t> reply(const std::vector<UnitSpec>& units) {
  std::vector<std::uint8_t> out;
  append(out, xe::QueryOaUnitsHeader{0, static_cast<std::uint32_t>(units.size()), 0});
  for (const auto& u : units) {
    xe::OaUnitHeader h{};
    h.oa_unit_id = u.id;
    h.oa_unit_type = u.type;
    h.capabilities = xe::kOaCapsBase | xe::kOaCapsSyncs;
    h.oa_timestamp_freq = 19'200'000;
    h.num_engines = u.engine_classes.size();
    append(out, h);
    std::uint16_t instance = 0;
    for (auto c : u.engine_classes) append(out, xe::EngineClassInstance{c, instance++, 0, 0});
  }
  return out;
}

const std::vector<UnitSpec> kLunarLakeLike = {
    {0, xe::kOaUnitTypeOag, {xe::kEngineClassRender, xe::kEngineClassCompute, xe::kEngineClassCopy}},
    {1, xe::kOaUnitTypeOam, {xe::kEngineClassVideoDecode, xe::kEngineClassVideoEnhance}}};

TEST(XeQueryTest, ParsesEveryUnitAndChoosesTheRenderOag) {
  const auto units = parse_xe_oa_units(reply(kLunarLakeLike));
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(units[0].timestamp_hz, 19'200'000u);
  EXPECT_EQ(units[0].engines.size(), 3u);
  EXPECT_EQ(units[1].type, xe::kOaUnitTypeOam);
  EXPECT_EQ(units[1].engines[1].engine_class, xe::kEngineClassVideoEnhance);
  ASSERT_NE(render_oag(units), nullptr);
  EXPECT_EQ(render_oag(units)->id, 0u);
  // A media unit alone is no unit for OpenCL kernels.
  EXPECT_EQ(render_oag(parse_xe_oa_units(reply({kLunarLakeLike[1]}))), nullptr);
  EXPECT_TRUE(parse_xe_oa_units(reply({})).empty());
}

TEST(XeQueryTest, MalformedRepliesAreRefusedNotReadPast) {
  const auto good = reply(kLunarLakeLike);
  for (std::size_t cut : {std::size_t{0}, std::size_t{8}, std::size_t{40}, good.size() - 1}) {
    EXPECT_THROW((void)parse_xe_oa_units(std::span(good).first(cut)), std::runtime_error) << cut;
  }
  auto trailing = good;
  trailing.push_back(0);
  EXPECT_THROW((void)parse_xe_oa_units(trailing), std::runtime_error);
  auto many_units = good;
  const std::uint32_t huge = 1'000'000;
  std::memcpy(many_units.data() + 8, &huge, sizeof huge);
  EXPECT_THROW((void)parse_xe_oa_units(many_units), std::runtime_error);
  auto many_engines = good;
  const std::uint64_t engines = std::uint64_t{1} << 61;  // would overflow a byte count
  std::memcpy(many_engines.data() + 16 + 64, &engines, sizeof engines);
  try {
    (void)parse_xe_oa_units(many_engines);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("more than 256"));
  }
}

// Answers as xe's query ioctl does: the size when asked with 0, then the data.
class FakeXe final : public XeQuery {
 public:
  explicit FakeXe(std::vector<std::uint8_t> answer, int fail_at = -1)
      : answer_(std::move(answer)), fail_at_(fail_at) {}
  std::string describe() const override { return "fake xe"; }
  int device_query(xe::DeviceQuery& q) override {
    if (calls_++ == fail_at_) return -EINVAL;
    if (q.query != xe::kQueryOaUnits) return -EINVAL;
    if (q.size == 0) {
      q.size = static_cast<std::uint32_t>(answer_.size());
      return 0;
    }
    if (q.size != answer_.size()) return -EINVAL;
    std::memcpy(reinterpret_cast<void*>(static_cast<std::uintptr_t>(q.data)), answer_.data(),
                answer_.size());
    return 0;
  }
  int calls_ = 0;

 private:
  std::vector<std::uint8_t> answer_;
  int fail_at_;
};

TEST(XeQueryTest, QueriesInTheUapisTwoStepsAndNamesAFailedStep) {
  FakeXe xe(reply(kLunarLakeLike));
  EXPECT_EQ(query_xe_oa_units(xe).size(), 2u);
  EXPECT_EQ(xe.calls_, 2);
  FakeXe failing(reply(kLunarLakeLike), 1);
  try {
    (void)query_xe_oa_units(failing);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("fake xe: DRM_XE_DEVICE_QUERY_OA_UNITS (data) failed"));
  }
  FakeXe empty({});
  EXPECT_THROW((void)query_xe_oa_units(empty), std::runtime_error);
}

TEST(XeQueryTest, TheIoctlNumberIsDrmIowrOfTheQueryStruct) {
  // DRM_IOWR(DRM_COMMAND_BASE + 0x00, struct drm_xe_device_query): dir read|write, size 40,
  // type 'd', nr 0x40.
  EXPECT_EQ(xe::kIoctlDeviceQuery, 0xC0286440ul);
}

}  // namespace
}  // namespace oaprof::gpu
