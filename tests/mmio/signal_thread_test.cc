// The signal thread: a handler takes every signal and the process goes on (oaprof finishing its
// outputs); the restore-plan default is in oa_programmer_test and forcewake_test.
#include "mmio/signal_restore.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "tests/mmio/signalled_child.h"

namespace oaprof::mmio {
namespace {

// Waits up to 10 s for `word` to reach `value`.
bool wait_for(const volatile std::uint32_t& word, std::uint32_t value) {
  for (int i = 0; i < 1000; ++i) {
    if (word >= value) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(SignalThreadTest, AHandlerTakesEverySignalInOrderAndTheProcessGoesOn) {
  testing::SharedWords shared(16);
  volatile std::uint32_t* words = shared.data();
  words[0] = 0;  // signals seen
  words[1] = 0;  // the last one's number
  words[2] = 0;  // the handler is set
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    SignalThread::start();
    ScopedSignalHandler handler([words](const siginfo_t& info, int count) {
      words[1] = static_cast<std::uint32_t>(info.si_signo);
      words[0] = static_cast<std::uint32_t>(count);
    });
    words[2] = 1;
    while (words[0] < 3) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ::_exit(0);  // went on after three signals, each of which would have ended it
  }
  ASSERT_TRUE(wait_for(words[2], 1)) << "the child never set its handler";
  for (std::uint32_t n = 1; n <= 3; ++n) {
    const int sig = n == 2 ? SIGTERM : SIGINT;
    ::kill(child, sig);
    EXPECT_TRUE(wait_for(words[0], n)) << "signal " << n << " was not handled";
    EXPECT_EQ(words[1], static_cast<std::uint32_t>(sig));
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(SignalThreadTest, ProgramsGetTheMaskFromBeforeTheThread) {
  testing::SharedWords shared(16);
  volatile std::uint32_t* words = shared.data();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    SignalThread::start();
    const sigset_t mask = SignalThread::mask_for_programs();
    sigset_t now;
    ::pthread_sigmask(SIG_BLOCK, nullptr, &now);
    words[0] = sigismember(&mask, SIGINT) == 0 && sigismember(&mask, SIGTERM) == 0 ? 1 : 2;
    words[1] = sigismember(&now, SIGINT) == 1 && sigismember(&now, SIGTERM) == 1 ? 1 : 2;
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(words[0], 1u) << "a program would start with SIGINT/SIGTERM blocked";
  EXPECT_EQ(words[1], 1u) << "the process's own threads must leave the signals to the thread";
}

}  // namespace
}  // namespace oaprof::mmio
