// For the tests of what a SIGINT/SIGTERM restores: a forked child sets something up on shared
// memory and waits to be signalled, so the parent can look at the registers before and after.
#pragma once

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>

namespace oaprof::mmio::testing {

// Anonymous shared memory a forked child writes and the parent reads.
class SharedWords {
 public:
  explicit SharedWords(std::size_t bytes) : bytes_(bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap of shared test memory failed");
    words_ = static_cast<std::uint32_t*>(p);
  }
  ~SharedWords() { munmap(words_, bytes_); }
  SharedWords(const SharedWords&) = delete;
  SharedWords& operator=(const SharedWords&) = delete;
  std::uint32_t* data() const { return words_; }

 private:
  std::size_t bytes_;
  std::uint32_t* words_ = nullptr;
};

// Forks; the child runs `set_up` and then sleeps until a signal ends it. Once `set_up` returned,
// the parent runs `while_set_up`, sends `sig` and returns the child's wait status.
inline int run_child_until_signalled(const std::function<void()>& set_up,
                                     const std::function<void()>& while_set_up, int sig) {
  int ready[2];
  if (pipe(ready) != 0) throw std::runtime_error("pipe failed");
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    set_up();
    const char c = 'r';
    (void)!write(ready[1], &c, 1);
    for (;;) pause();
  }
  char c = 0;
  const bool set = read(ready[0], &c, 1) == 1;
  close(ready[0]);
  close(ready[1]);
  if (set) while_set_up();
  kill(child, sig);
  int status = 0;
  waitpid(child, &status, 0);
  if (!set) throw std::runtime_error("the child died while setting up");
  return status;
}

}  // namespace oaprof::mmio::testing
