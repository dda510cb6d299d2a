#include "report/run_json_stream.h"

#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/reporter.h"
#include "report/run_input.h"

namespace oaprof::report {
namespace {

using ordered_json = nlohmann::ordered_json;
using Event = ordered_json::parse_event_t;

// A string's bytes as written may be six times its text (\u00e9 for one byte).
constexpr std::size_t kMaxRunTextWritten = 6 * kMaxRunText + 2;
// A number as oaprof writes one takes at most 24 characters (-1.23456789012345678e-308).
constexpr std::size_t kMaxRunLiteral = 64;

// Nesting and the lengths of strings and numbers, checked on each chunk before the parser reads
// it, so that no document can exhaust the stack or the heap through depth or one long token.
class BoundsScanner {
 public:
  explicit BoundsScanner(const std::string& source) : source_(source) {}

  void scan(std::string_view chunk) {
    for (const char c : chunk) {
      ++offset_;
      if (in_string_) {
        if (++string_bytes_ > kMaxRunTextWritten) {
          fail_input(source_, fmt::format("byte {}: a string longer than {} characters", offset_,
                                          kMaxRunText));
        }
        if (escaped_) {
          escaped_ = false;
        } else if (c == '\\') {
          escaped_ = true;
        } else if (c == '"') {
          in_string_ = false;
        }
      } else if (c == '"') {
        in_string_ = true;
        string_bytes_ = literal_bytes_ = 0;
      } else if (!literal_byte(c)) {
        literal_bytes_ = 0;
        structure(c);
      } else if (++literal_bytes_ > kMaxRunLiteral) {
        fail_input(source_, fmt::format("byte {}: a number or literal longer than {} characters",
                                        offset_, kMaxRunLiteral));
      }
    }
  }

 private:
  // A byte of a number, true, false or null: what is neither structure, white space nor a quote.
  static bool literal_byte(char c) {
    return c != '[' && c != ']' && c != '{' && c != '}' && c != ',' && c != ':' && c != ' ' &&
           c != '\n' && c != '\r' && c != '\t';
  }
  void structure(char c) {
    if (c == '[' || c == '{') {
      if (++depth_ > kMaxRunNesting) {
        fail_input(source_,
                   fmt::format("nested deeper than {} levels; not an oaprof or kernel_runner "
                               "JSON document",
                               kMaxRunNesting));
      }
    } else if (c == ']' || c == '}') {
      --depth_;
    }
  }

  const std::string& source_;
  std::size_t offset_ = 0, string_bytes_ = 0, literal_bytes_ = 0;
  int depth_ = 0;
  bool in_string_ = false, escaped_ = false;
};

// The parser's input: the bytes of a RunBytes, chunk by chunk, each scanned for the bounds
// first. Every copy shares the source; the one that has reached the end equals the end.
class ChunkIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  ChunkIterator() = default;  // the end
  ChunkIterator(RunBytes& bytes, BoundsScanner& scanner) : bytes_(&bytes), scanner_(&scanner) {
    refill();
  }
  const char& operator*() const { return chunk_[pos_]; }
  ChunkIterator& operator++() {
    if (++pos_ == chunk_.size()) refill();
    return *this;
  }
  bool operator==(const ChunkIterator& other) const { return at_end() == other.at_end(); }

 private:
  bool at_end() const { return pos_ >= chunk_.size(); }
  void refill() {
    chunk_ = bytes_->next_chunk();
    scanner_->scan(chunk_);
    pos_ = 0;
  }

  RunBytes* bytes_ = nullptr;
  BoundsScanner* scanner_ = nullptr;
  std::string_view chunk_;
  std::size_t pos_ = 0;
};

// Follows the parser's events: which top-level field it is in, each row's values, the counts
// against the bounds; hands each finished row over and has the parser forget it.
class RowStream {
 public:
  RowStream(const std::string& source, const RunRowVisitor& on_row)
      : source_(source), on_row_(on_row) {}

  bool event(int depth, Event e, ordered_json& parsed) {
    if (depth == 0) return top(e);
    if (depth == 1) return field(e, parsed);
    if (!rows_.empty()) return in_row(depth, e, parsed);
    count_meta(e);
    return true;
  }

 private:
  bool top(Event e) {
    if (e != Event::object_start && e != Event::object_end)
      fail_input(source_, "is not a JSON object");
    return true;
  }

  bool field(Event e, ordered_json& parsed) {
    if (e == Event::key) {
      key_ = parsed.get<std::string>();
    } else if (e == Event::array_start && (key_ == "launches" || key_ == "results")) {
      if (!array_.empty()) {
        fail_input(source_,
                   fmt::format("has a second array of rows (\"{}\" after \"{}\")", key_, array_));
      }
      array_ = rows_ = key_;
    } else if (e == Event::array_end && !rows_.empty()) {
      rows_.clear();
    } else {
      count_meta(e);
      if (e == Event::array_end && key_ == "columns") take_columns(parsed);
    }
    return true;
  }

  void count_meta(Event e) {
    if (e == Event::key || e == Event::object_end || e == Event::array_end) return;
    if (++meta_values_ > kMaxRunMetaValues) {
      fail_input(source_, fmt::format("more than {} values outside \"{}\"", kMaxRunMetaValues,
                                      array_.empty() ? "launches" : array_));
    }
  }

  std::string row_name() const {
    return fmt::format("{} {}", rows_ == "results" ? "result" : "launch", index_);
  }

  bool in_row(int depth, Event e, ordered_json& parsed) {
    if (depth == 2) return row_edge(e, parsed);
    if (e == Event::key || e == Event::object_end || e == Event::array_end) return true;
    if (depth == 3 && ++row_fields_ > kMaxRunFields) {
      fail_input(source_, fmt::format("{} has more than {} fields", row_name(), kMaxRunFields));
    }
    if (++row_values_ > kMaxRunRowValues) {
      fail_input(source_,
                 fmt::format("{} holds more than {} values", row_name(), kMaxRunRowValues));
    }
    return true;
  }

  bool row_edge(Event e, ordered_json& parsed) {
    if (e == Event::value) fail_input(source_, row_name() + " is not an object");
    if (e == Event::object_start || e == Event::array_start) {
      if (index_ >= kMaxRunRows) {
        fail_input(source_, fmt::format("more than {} entries in \"{}\"", kMaxRunRows, rows_));
      }
      row_fields_ = row_values_ = 0;
      return true;
    }
    if (parsed.empty()) {
      fail_input(source_,
                 fmt::format("{} is empty ({}): a row names at least its kernel (a file cut "
                             "short or not written by oaprof?)",
                             row_name(), parsed.is_object() ? "{}" : "[]"));
    }
    on_row_(rows_, parsed.is_array() ? zipped(parsed) : parsed, index_);
    ++index_;
    return false;  // forget the row: the caller kept what it needs
  }

  // A row of values (schema 2) as an object, with the names of "columns".
  ordered_json zipped(const ordered_json& values) const {
    if (columns_.empty()) {
      fail_input(source_,
                 row_name() + " is a list of values, but no \"columns\" before the rows name them");
    }
    if (values.size() != columns_.size()) {
      fail_input(source_, fmt::format("{} has {} values, \"columns\" names {} (a row cut short?)",
                                      row_name(), values.size(), columns_.size()));
    }
    ordered_json row = ordered_json::object();
    for (std::size_t i = 0; i < columns_.size(); ++i) row[columns_[i]] = values[i];
    return row;
  }

  void take_columns(const ordered_json& columns) {
    std::set<std::string> seen;
    for (const auto& c : columns) {
      if (!c.is_string()) fail_input(source_, "\"columns\" must be a list of names");
      if (!seen.insert(c.get<std::string>()).second) {
        fail_input(source_,
                   fmt::format("column '{}' appears twice in \"columns\"", c.get<std::string>()));
      }
      columns_.push_back(c.get<std::string>());
    }
    if (columns_.size() > kMaxRunFields) {
      fail_input(source_, fmt::format("more than {} \"columns\"", kMaxRunFields));
    }
  }

  const std::string& source_;
  const RunRowVisitor& on_row_;
  std::string key_, array_, rows_;  // rows_: the array being read, empty outside it
  std::vector<std::string> columns_;
  std::size_t index_ = 0, row_fields_ = 0, row_values_ = 0, meta_values_ = 0;
};

}  // namespace

ordered_json stream_run_json(RunBytes& bytes, const RunRowVisitor& on_row) {
  BoundsScanner scanner(bytes.source());
  RowStream rows(bytes.source(), on_row);
  try {
    return ordered_json::parse(
        ChunkIterator(bytes, scanner), ChunkIterator(),
        [&](int depth, Event e, ordered_json& parsed) { return rows.event(depth, e, parsed); });
  } catch (const ordered_json::parse_error& e) {
    fail_input(bytes.source(),
               fmt::format("is not valid JSON at byte {} (a run still being written, or not a JSON "
                           "file?); give the file oaprof --json or kernel_runner --json wrote",
                           e.byte));
  } catch (const ordered_json::out_of_range&) {
    fail_input(bytes.source(), "holds a number out of range (1e400?): not written by oaprof");
  }
}

void require_schema_version(const ordered_json& meta, const std::string& source) {
  const auto it = meta.find("schema_version");
  if (it == meta.end() || !it->is_number()) fail_input(source, "the run has no \"schema_version\"");
  const double version = it->get<double>();
  // 2 and 3 share a shape (3 split the launch call out of `api` into `call`).
  if (version != 1 && version != 2 && version != kJsonSchemaVersion) {
    fail_input(source,
               fmt::format("schema_version {} is not one this oaprof reads (1 to {}); write it "
                           "again with this oaprof's --json",
                           version, kJsonSchemaVersion));
  }
}

}  // namespace oaprof::report
