#include "report/proto_writer.h"

#include <bit>

namespace oaprof::report {

void ProtoWriter::varint(std::uint64_t value) {
  while (value >= 0x80) {
    bytes_ += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  bytes_ += static_cast<char>(value);
}

void ProtoWriter::tag(std::uint32_t field, std::uint32_t wire_type) {
  varint((static_cast<std::uint64_t>(field) << 3) | wire_type);
}

void ProtoWriter::add_uint(std::uint32_t field, std::uint64_t value) {
  tag(field, kVarint);
  varint(value);
}

void ProtoWriter::add_int(std::uint32_t field, std::int64_t value) {
  tag(field, kVarint);
  varint(static_cast<std::uint64_t>(value));
}

void ProtoWriter::add_double(std::uint32_t field, double value) {
  tag(field, kFixed64);
  const auto bits = std::bit_cast<std::uint64_t>(value);
  for (int i = 0; i < 8; ++i)
    bytes_ += static_cast<char>((bits >> (8 * i)) & 0xff);  // little endian
}

void ProtoWriter::add_string(std::uint32_t field, std::string_view value) {
  tag(field, kLengthDelimited);
  varint(value.size());
  bytes_.append(value);
}

}  // namespace oaprof::report
