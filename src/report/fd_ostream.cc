#include "report/fd_ostream.h"

#include <unistd.h>

#include <cerrno>

namespace oaprof::report {

FdStreambuf::FdStreambuf(int fd) : fd_(fd), buf_(64 * 1024) {
  setp(buf_.data(), buf_.data() + buf_.size());
}

FdStreambuf::~FdStreambuf() {
  (void)write_out();
  if (fd_ >= 0) ::close(fd_);
}

bool FdStreambuf::write_out() {
  const char* p = pbase();
  while (p < pptr()) {
    const ssize_t n = ::write(fd_, p, static_cast<std::size_t>(pptr() - p));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    p += n;
  }
  setp(buf_.data(), buf_.data() + buf_.size());
  return true;
}

FdStreambuf::int_type FdStreambuf::overflow(int_type c) {
  if (!write_out()) return traits_type::eof();
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  *pptr() = traits_type::to_char_type(c);
  pbump(1);
  return c;
}

int FdStreambuf::sync() { return write_out() ? 0 : -1; }

FdStreambuf::pos_type FdStreambuf::seekoff(off_type off, std::ios_base::seekdir dir,
                                           std::ios_base::openmode which) {
  if ((which & std::ios_base::out) == 0 || !write_out()) return pos_type(off_type(-1));
  const int whence = dir == std::ios_base::beg   ? SEEK_SET
                     : dir == std::ios_base::cur ? SEEK_CUR
                                                 : SEEK_END;
  const off_t at = ::lseek(fd_, static_cast<off_t>(off), whence);
  return pos_type(off_type(at));  // -1 on a pipe: unseekable, as for any stream
}

FdStreambuf::pos_type FdStreambuf::seekpos(pos_type pos, std::ios_base::openmode which) {
  return seekoff(off_type(pos), std::ios_base::beg, which);
}

FdOstream::FdOstream(int fd) : std::ostream(nullptr), buf_(fd) { rdbuf(&buf_); }

}  // namespace oaprof::report
