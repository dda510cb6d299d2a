#include "report/text_escape.h"

#include <fmt/format.h>

namespace oaprof::report {
namespace {

void append_byte_escape(std::string& out, unsigned char byte) {
  out += fmt::format("\\x{:02x}", byte);
}

// The length of the UTF-8 sequence at text[at] (whose first byte is 0x80 or above) when it
// encodes a character XML 1.0 allows; 0 when it is no such sequence (a stray continuation byte,
// an overlong form, a surrogate, U+FFFE, U+FFFF, past U+10FFFF, or cut short).
std::size_t xml_char_length(std::string_view text, std::size_t at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  std::size_t length = 0;
  char32_t code = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, code = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, code = lead & 0x0Fu;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, code = lead & 0x07u;
  } else {
    return 0;
  }
  if (text.size() - at < length) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(text[at + k]);
    if ((next & 0xC0u) != 0x80u) return 0;
    code = (code << 6) | (next & 0x3Fu);
  }
  constexpr char32_t kShortest[] = {0, 0, 0x80, 0x800, 0x10000};
  const bool surrogate = code >= 0xD800 && code <= 0xDFFF;
  if (code < kShortest[length] || code > 0x10FFFF || surrogate || code == 0xFFFE ||
      code == 0xFFFF) {
    return 0;
  }
  return length;
}

}  // namespace

std::string visible_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      append_byte_escape(out, byte);
    } else {
      out += c;
    }
  }
  return out;
}

std::string xml_escape(std::string_view text) {
  const std::string visible = visible_text(text);
  std::string out;
  out.reserve(visible.size());
  for (std::size_t i = 0; i < visible.size();) {
    const char c = visible[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      const std::size_t length = xml_char_length(visible, i);
      if (length == 0) {
        append_byte_escape(out, static_cast<unsigned char>(c));
        ++i;
      } else {
        out.append(visible, i, length);
        i += length;
      }
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
    ++i;
  }
  return out;
}

}  // namespace oaprof::report
