#include <gtest/gtest.h>

#include <string>

#include "report/proto_writer.h"

namespace oaprof::report {
namespace {

std::string hex(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += "0123456789abcdef"[c >> 4], out += "0123456789abcdef"[c & 15];
  return out;
}

// The examples of the protobuf encoding guide (protobuf.dev/programming-guides/encoding).
TEST(ProtoWriterTest, VarintAsTheEncodingGuideShows) {
  ProtoWriter w;
  w.add_uint(1, 150);
  EXPECT_EQ(hex(w.bytes()), "089601");
}

TEST(ProtoWriterTest, StringIsLengthDelimited) {
  ProtoWriter w;
  w.add_string(2, "testing");
  EXPECT_EQ(hex(w.bytes()), "120774657374696e67");
}

TEST(ProtoWriterTest, NegativeIntTakesTenBytes) {
  ProtoWriter w;
  w.add_int(1, -2);
  EXPECT_EQ(hex(w.bytes()), "08feffffffffffffffff01");
}

TEST(ProtoWriterTest, DoubleIsFixed64LittleEndian) {
  ProtoWriter w;
  w.add_double(44, 1.0);  // field 44: key 44 << 3 | 1 = 353 = e1 02
  EXPECT_EQ(hex(w.bytes()), "e102000000000000f03f");
}

TEST(ProtoWriterTest, NestedMessageIsItsBytesLengthDelimited) {
  ProtoWriter inner;
  inner.add_uint(1, 150);
  ProtoWriter outer;
  outer.add_message(3, inner);
  EXPECT_EQ(hex(outer.bytes()), "1a03089601");
}

TEST(ProtoWriterTest, LargeFieldNumberTakesATwoByteKey) {
  ProtoWriter w;
  w.add_uint(60, 1);  // 60 << 3 = 480 = e0 03
  EXPECT_EQ(hex(w.bytes()), "e00301");
}

}  // namespace
}  // namespace oaprof::report
