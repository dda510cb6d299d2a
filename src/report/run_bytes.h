// The bytes of one input of `oaprof report` or `oaprof merge`, read a chunk at a time: the readers
// parse rows as the bytes arrive and keep only what they turn into output, so the memory a file
// costs follows its useful rows, not its size. Private to src/report.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace oaprof::report {

class RunBytes {
 public:
  // A regular file (opened without following a FIFO or device into a block); throws
  // RunInputError saying why not.
  static RunBytes open_file(const std::string& path);
  // Text already in memory (tests, fuzzers): one chunk.
  RunBytes(std::string_view text, std::string source);
  RunBytes(RunBytes&& other) noexcept;
  RunBytes& operator=(RunBytes&&) = delete;
  ~RunBytes();

  // The next chunk, empty at the end; throws RunInputError past kMaxRunInputBytes or on a read
  // error. The view holds until the next call.
  std::string_view next_chunk();
  // The first chunk, still to be handed out by next_chunk: what the input starts with.
  std::string_view peek();
  const std::string& source() const { return source_; }

 private:
  RunBytes(int fd, std::string source);

  int fd_ = -1;
  std::string source_;
  std::string_view text_;  // the text not yet handed out, without a file
  std::string buffer_;
  std::string_view peeked_;
  bool has_peeked_ = false;
  std::size_t total_ = 0;
};

}  // namespace oaprof::report
