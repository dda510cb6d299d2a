// Whether this test binary was built with AddressSanitizer (GCC's or clang's), for tests that
// cannot hold under it (ASan reserves terabytes of shadow address space: no address-space limit
// fits under it), and for random sweeps that take a tenth of their draws there (the sanitizer
// pass looks for memory errors, which the first draws reach as well as the last).
#pragma once

namespace oaprof::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace oaprof::testing
