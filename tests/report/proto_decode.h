// A protobuf wire-format reader for tests only: splits a message into its fields, so tests can
// check what ProtoWriter and the trace reporter wrote without a protobuf library.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oaprof::testing {

struct ProtoField {
  std::uint32_t number = 0;
  std::uint32_t wire_type = 0;
  std::uint64_t value = 0;  // varint and fixed64
  std::string bytes;        // length-delimited
};

// nullopt when `data` is not a whole sequence of fields (a truncated one, say).
inline std::optional<std::vector<ProtoField>> decode_proto(std::string_view data) {
  std::vector<ProtoField> out;
  std::size_t i = 0;
  auto varint = [&](std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (i >= data.size()) return false;
      const auto b = static_cast<unsigned char>(data[i++]);
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  };
  while (i < data.size()) {
    std::uint64_t key = 0;
    if (!varint(key)) return std::nullopt;
    ProtoField f;
    f.number = static_cast<std::uint32_t>(key >> 3);
    f.wire_type = static_cast<std::uint32_t>(key & 7);
    if (f.wire_type == 0) {
      if (!varint(f.value)) return std::nullopt;
    } else if (f.wire_type == 1) {
      if (i + 8 > data.size()) return std::nullopt;
      for (int b = 0; b < 8; ++b)
        f.value |= static_cast<std::uint64_t>(static_cast<unsigned char>(data[i + b])) << (8 * b);
      i += 8;
    } else if (f.wire_type == 2) {
      std::uint64_t n = 0;
      if (!varint(n) || n > data.size() - i) return std::nullopt;
      f.bytes = std::string(data.substr(i, n));
      i += n;
    } else {
      return std::nullopt;
    }
    out.push_back(std::move(f));
  }
  return out;
}

inline const ProtoField* find_field(const std::vector<ProtoField>& fields, std::uint32_t number) {
  for (const auto& f : fields) {
    if (f.number == number) return &f;
  }
  return nullptr;
}

}  // namespace oaprof::testing
