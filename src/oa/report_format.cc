#include "oa/report_format.h"

#include <array>
#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::oa {
namespace {

// clang-format off
constexpr std::array kGen8Formats{
    //          format                          name                   sel uapi size ticks  a0 an  aoff ahi  a32 a32off bn boff cn coff
    FormatLayout{ReportFormat::kA12,               "A12",                 0, 8,   64,  -1,   7, 12, 12,  -1,  0, -1,    0, -1,  0, -1},
    FormatLayout{ReportFormat::kA12_B8_C8,         "A12_B8_C8",           2, 9,  128,  -1,   7, 12, 12,  -1,  0, -1,    8, 64,  8, 96},
    FormatLayout{ReportFormat::kA32u40_A4u32_B8_C8,"A32u40_A4u32_B8_C8",  5, 10, 256,  12,   0, 32, 16, 160,  4, 144,   8, 192, 8, 224},
    FormatLayout{ReportFormat::kC4_B8,             "C4_B8",               7, 7,   64,  -1,   0,  0, -1,  -1,  0, -1,    8, 32,  4, 16},
};
// clang-format on

bool parse_int(std::string_view text, int base, int& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out, base);
  return ec == std::errc() && ptr == end && !text.empty();
}

}  // namespace

std::span<const FormatLayout> formats_for(Generation gen) {
  switch (gen) {
    case Generation::kGen8:
    case Generation::kGen9:
    case Generation::kGen11:
    case Generation::kGen12:
      return kGen8Formats;
    case Generation::kGen7_5:
      return {};
  }
  return {};
}

const FormatLayout& layout_of(ReportFormat format) {
  for (const FormatLayout& l : kGen8Formats) {
    if (l.format == format) return l;
  }
  throw std::logic_error("layout_of: format missing from the table");
}

ReportFormat parse_format(std::string_view text, Generation gen) {
  const auto formats = formats_for(gen);
  std::string valid;
  for (const FormatLayout& l : formats) {
    valid += fmt::format("{}{} ({:b} = {})", valid.empty() ? "" : ", ", l.name, l.select_code,
                         l.select_code);
  }
  if (formats.empty()) {
    throw std::invalid_argument(fmt::format("{} report formats are not supported yet",
                                            generation_name(gen)));
  }
  for (const FormatLayout& l : formats) {
    if (text == l.name) return l.format;
  }
  int code = -1;
  // Binary wins where the text is made of 0s and 1s only ("101" is select code 5, as in the
  // original tool's --format); "5" is read as decimal.
  const bool binary = text.find_first_not_of("01") == std::string_view::npos;
  if (parse_int(text, binary ? 2 : 10, code)) {
    for (const FormatLayout& l : formats) {
      if (l.select_code == code) return l.format;
    }
  }
  throw std::invalid_argument(fmt::format("report format '{}' does not exist on {}; valid: {}",
                                          text, generation_name(gen), valid));
}

int to_uapi(ReportFormat format) { return layout_of(format).uapi_value; }

std::optional<ReportFormat> from_uapi(int uapi_value) {
  for (const FormatLayout& l : kGen8Formats) {
    if (l.uapi_value == uapi_value) return l.format;
  }
  return std::nullopt;
}

}  // namespace oaprof::oa
