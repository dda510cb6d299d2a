#include "report/csv.h"

#include <cctype>

namespace oaprof::report {
namespace {

// The first characters a spreadsheet evaluates a cell from (OWASP's CSV injection list).
bool formula_start(char c) {
  return c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r';
}

// Whether `text`, after `quotes` leading single quotes (at least that many), starts like a
// formula: the texts the writer adds a single quote to, once `quotes` is 0.
bool neutralised_form(std::string_view text, std::size_t quotes) {
  const std::size_t first = text.find_first_not_of('\'');
  return first != std::string_view::npos && first >= quotes && formula_start(text[first]);
}

std::size_t digits(std::string_view text, std::size_t i) {
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  return i;
}

}  // namespace

bool csv_text_as_is(std::string_view text) {
  if (neutralised_form(text, 0)) return false;
  // A loop rather than find_first_of, which calls memchr over the four for every character.
  for (const char c : text) {
    if (c == ',' || c == '"' || c == '\n' || c == '\r') return false;
  }
  return true;
}

std::string csv_text(std::string_view text) {
  if (csv_text_as_is(text)) return std::string(text);
  std::string cell = neutralised_form(text, 0) ? "\"'" : "\"";
  for (char c : text) {
    if (c == '"') cell += '"';
    cell += c;
  }
  return cell + '"';
}

std::string csv_text_line(const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) line += ',';
    line += csv_text(cells[i]);
  }
  return line;
}

std::string csv_text_read(std::string_view cell, bool quoted) {
  if (quoted && neutralised_form(cell, 1)) cell.remove_prefix(1);
  return std::string(cell);
}

bool csv_number_text(std::string_view text) {
  std::size_t i = !text.empty() && text[0] == '-' ? 1 : 0;
  const std::size_t integer_end = digits(text, i);
  if (integer_end == i) return false;
  i = integer_end;
  if (i < text.size() && text[i] == '.') i = digits(text, i + 1);
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t exponent = i + 1;
    if (exponent < text.size() && (text[exponent] == '+' || text[exponent] == '-')) ++exponent;
    i = digits(text, exponent);
    if (i == exponent) return false;
  }
  return i == text.size();
}

}  // namespace oaprof::report
