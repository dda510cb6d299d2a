// The Perfetto trace is a protobuf stream, and no protobuf library or Perfetto SDK is packaged
// for every system oaprof builds on; the few messages it needs are small. ProtoWriter encodes one
// message in the protobuf wire format (varints, 64-bit doubles, length-delimited bytes and nested
// messages), and nothing else: no schema, no reflection, no decoding.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace oaprof::report {

class ProtoWriter {
 public:
  // Wire types of the protobuf encoding.
  static constexpr std::uint32_t kVarint = 0;
  static constexpr std::uint32_t kFixed64 = 1;
  static constexpr std::uint32_t kLengthDelimited = 2;

  void add_uint(std::uint32_t field, std::uint64_t value);
  // int32/int64 fields (not sint): negative values take ten bytes, as the format says.
  void add_int(std::uint32_t field, std::int64_t value);
  void add_bool(std::uint32_t field, bool value) { add_uint(field, value ? 1 : 0); }
  void add_double(std::uint32_t field, double value);
  void add_string(std::uint32_t field, std::string_view value);
  void add_message(std::uint32_t field, const ProtoWriter& message) {
    add_string(field, message.bytes());
  }

  const std::string& bytes() const { return bytes_; }

 private:
  void tag(std::uint32_t field, std::uint32_t wire_type);
  void varint(std::uint64_t value);
  std::string bytes_;
};

}  // namespace oaprof::report
