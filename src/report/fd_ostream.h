// The reporters write to a std::ostream; the privileged side opens the user's files as the user
// (session/user_file.h) and holds a descriptor, never a path it would open again. FdOstream is an
// ostream over a descriptor it owns: buffered, written out with write(2) (an error fails the
// stream with errno set, as flush_or_throw expects), seekable where the descriptor is (a file),
// and answering tellp() with -1 where it is not (a pipe, a FIFO, a terminal).
#pragma once

#include <ostream>
#include <streambuf>
#include <vector>

namespace oaprof::report {

class FdStreambuf final : public std::streambuf {
 public:
  explicit FdStreambuf(int fd);
  ~FdStreambuf() override;  // writes out what it holds, then closes the descriptor
  FdStreambuf(const FdStreambuf&) = delete;
  FdStreambuf& operator=(const FdStreambuf&) = delete;

  int fd() const { return fd_; }

 protected:
  int_type overflow(int_type c) override;
  int sync() override;
  pos_type seekoff(off_type off, std::ios_base::seekdir dir,
                   std::ios_base::openmode which) override;
  pos_type seekpos(pos_type pos, std::ios_base::openmode which) override;

 private:
  bool write_out();  // the buffer to the descriptor; false (errno set) on failure
  int fd_;
  std::vector<char> buf_;
};

class FdOstream final : public std::ostream {
 public:
  // Takes ownership of `fd`.
  explicit FdOstream(int fd);
  int fd() const { return buf_.fd(); }

 private:
  FdStreambuf buf_;
};

}  // namespace oaprof::report
