// A result ignored on purpose, said at the call.
#pragma once

namespace oaprof::base {

// For a call whose failure has no better answer than going on: a log line written to a stderr
// that is gone, a wake-up written to a loop that is awake already, a report from a child about to
// _exit. With _FORTIFY_SOURCE (cmake/hardening.cmake) glibc declares write(), read(), ftruncate(),
// chown() and others warn_unused_result, which a (void) cast does not quiet in GCC; a result
// passed here is used. A no-op, so it is async-signal-safe (between fork and exec).
template <typename T>
constexpr void ignore_result(const T& /*result*/) noexcept {}

}  // namespace oaprof::base
