#include "oa/wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace oaprof::oa::wire {
namespace {

using ::testing::HasSubstr;

Message roundtrip(const Message& m) {
  auto decoded = decode(encode(m));
  EXPECT_TRUE(std::holds_alternative<Message>(decoded))
      << std::get<DecodeError>(decoded).reason;
  return std::get<Message>(decoded);
}

TEST(WireTest, LaunchRoundTrips) {
  Launch l;
  l.launch_id = 77;
  l.work_dim = 2;
  l.global = {1024, 16, 0};
  l.local = {64, 1, 0};
  l.offset = {0, 3, 0};
  l.queued_ns = 1;
  l.submit_ns = 2;
  l.start_ns = 3;
  l.end_ns = 400;
  l.profiled = true;
  l.queue = 0x55aa00001000;
  l.context = 0x55aa00002000;
  l.device = 0x55aa00003000;
  l.tid = 4321;
  l.api_ns = 123456789;
  l.api = LaunchApi::kTask;
  l.passes = 7;
  l.restore_bytes = 1 << 20;
  l.restore_ns = 98765;
  l.kernel_name = "mad_vect4";
  const Message m = roundtrip({9, l});
  EXPECT_EQ(m.request_id, 9u);
  const auto& out = std::get<Launch>(m.body);
  EXPECT_EQ(out.launch_id, 77u);
  EXPECT_EQ(out.work_dim, 2u);
  EXPECT_EQ(out.global, l.global);
  EXPECT_EQ(out.local, l.local);
  EXPECT_EQ(out.offset, l.offset);
  EXPECT_EQ(out.end_ns, 400u);
  EXPECT_TRUE(out.profiled);
  EXPECT_EQ(out.queue, l.queue);
  EXPECT_EQ(out.context, l.context);
  EXPECT_EQ(out.device, l.device);
  EXPECT_EQ(out.tid, 4321u);
  EXPECT_EQ(out.api_ns, 123456789u);
  EXPECT_EQ(out.api, LaunchApi::kTask);
  EXPECT_EQ(out.passes, 7u);
  EXPECT_EQ(out.restore_bytes, 1u << 20);
  EXPECT_EQ(out.restore_ns, 98765u);
  EXPECT_EQ(out.kernel_name, "mad_vect4");
}

TEST(WireTest, ALaunchThatRanZeroTimesIsMalformed) {
  Launch l;
  l.work_dim = 1;
  l.passes = 0;
  l.kernel_name = "k";
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(encode({1, l}))));
}

TEST(WireTest, OtherMessagesRoundTrip) {
  EXPECT_EQ(std::get<Snapshot>(roundtrip({1, Snapshot{5, Phase::kAfter}}).body).phase, Phase::kAfter);
  EXPECT_EQ(std::get<Hello>(roundtrip({2, Hello{1234, 0}}).body).pid, 1234u);
  EXPECT_TRUE(std::holds_alternative<Ok>(roundtrip({3, Ok{}}).body));
  const auto e = std::get<Error>(roundtrip({4, Error{ErrorCode::kDeviceError, "boom"}}).body);
  EXPECT_EQ(e.code, ErrorCode::kDeviceError);
  EXPECT_EQ(e.message, "boom");
}

TEST(WireTest, EveryTruncationIsRejectedNotCrashed) {
  Launch l;
  l.work_dim = 1;
  l.kernel_name = "k";
  const auto bytes = encode({1, l});
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    auto d = decode(std::span(bytes.data(), n));
    ASSERT_TRUE(std::holds_alternative<DecodeError>(d)) << "length " << n;
  }
}

TEST(WireTest, BadHeadersGiveSpecificErrors) {
  auto bytes = encode({7, Snapshot{1, Phase::kBefore}});
  auto bad_magic = bytes;
  bad_magic[0] ^= 0xFF;
  EXPECT_THAT(std::get<DecodeError>(decode(bad_magic)).reason, HasSubstr("magic"));

  auto bad_version = bytes;
  bad_version[4] = 99;
  const auto v = std::get<DecodeError>(decode(bad_version));
  EXPECT_EQ(v.code, ErrorCode::kUnsupportedVersion);
  EXPECT_EQ(v.request_id, 7u);

  auto bad_type = bytes;
  bad_type[6] = 0x55;
  EXPECT_EQ(std::get<DecodeError>(decode(bad_type)).code, ErrorCode::kUnknownType);

  auto extra = bytes;
  extra.push_back(0);
  EXPECT_THAT(std::get<DecodeError>(decode(extra)).reason, HasSubstr("payload length"));

  std::vector<std::uint8_t> huge(kMaxMessageBytes + 1, 0);
  EXPECT_THAT(std::get<DecodeError>(decode(huge)).reason, HasSubstr("exceeds"));
}

TEST(WireTest, InvalidFieldValuesAreRejected) {
  auto bytes = encode({1, Snapshot{1, Phase::kBefore}});
  bytes.back() = 2;  // phase must be 0 or 1
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(bytes)));
  Launch l;
  l.work_dim = 4;  // OpenCL allows 1..3
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(encode({1, l}))));
}

TEST(WireTest, OverlongKernelNamesAreCutToTheLimit) {
  Launch l;
  l.work_dim = 1;
  l.kernel_name = std::string(kMaxNameBytes + 100, 'k');
  const auto out = std::get<Launch>(roundtrip({1, l}).body);
  EXPECT_EQ(out.kernel_name.size(), kMaxNameBytes);
}

}  // namespace
}  // namespace oaprof::oa::wire
