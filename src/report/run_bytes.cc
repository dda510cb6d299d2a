#include "report/run_bytes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "report/run_input.h"

namespace oaprof::report {

namespace {
constexpr std::size_t kChunkBytes = std::size_t{1} << 16;
}  // namespace

RunBytes RunBytes::open_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) throw RunInputError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw RunInputError(fmt::format("{}: not a regular file; give oaprof's output file", path));
  }
  return RunBytes(fd, path);
}

RunBytes::RunBytes(std::string_view text, std::string source)
    : source_(std::move(source)), text_(text) {}

RunBytes::RunBytes(int fd, std::string source) : fd_(fd), source_(std::move(source)) {}

RunBytes::RunBytes(RunBytes&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      source_(std::move(other.source_)),
      text_(other.text_),
      buffer_(std::move(other.buffer_)),
      peeked_(other.peeked_),
      has_peeked_(other.has_peeked_),
      total_(other.total_) {}

RunBytes::~RunBytes() {
  if (fd_ >= 0) ::close(fd_);
}

std::string_view RunBytes::peek() {
  if (!has_peeked_) peeked_ = next_chunk();
  has_peeked_ = true;
  return peeked_;
}

std::string_view RunBytes::next_chunk() {
  if (has_peeked_) {
    has_peeked_ = false;
    return peeked_;
  }
  std::string_view chunk;
  if (fd_ < 0) {
    chunk = text_;
    text_ = {};
  } else {
    buffer_.resize(kChunkBytes);
    ssize_t n = 0;
    do {
      n = ::read(fd_, buffer_.data(), buffer_.size());
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      throw RunInputError(fmt::format("{}: cannot read: {}", source_, std::strerror(errno)));
    }
    chunk = std::string_view(buffer_.data(), static_cast<std::size_t>(n));
  }
  total_ += chunk.size();
  if (total_ > kMaxRunInputBytes) {
    throw RunInputError(fmt::format("{}: larger than {} MiB; give it fewer rows", source_,
                                    kMaxRunInputBytes >> 20));
  }
  return chunk;
}

}  // namespace oaprof::report
