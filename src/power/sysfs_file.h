// Small readers for the one-value text files of sysfs, shared by the powercap, perf and MSR
// backends so that every one reports an unreadable file the same way (with the reason and fix).
// Private to src/power (powercap.h includes it only for the type of a member).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace oaprof::power::detail {

// The file's first line, or nullopt when it is absent or unreadable.
std::optional<std::string> read_line(const std::filesystem::path& file);

// An unsigned decimal (or 0x hexadecimal) number from the file's first line. Throws
// std::runtime_error naming the file, the errno reason and `permission_fix` on EACCES/EPERM.
std::uint64_t read_u64(const std::filesystem::path& file, const std::string& permission_fix);

// How a sysfs file writes its number: unsigned (powercap's energy_uj), or as the hwmon core
// prints every attribute, a signed `long` ("%ld", "%lld" in newer kernels: drivers/hwmon/hwmon.c
// hwmon_attr_show @ torvalds/linux 524703ac1af4), which is read as its 64-bit two's-complement
// pattern so that a sum that passed LONG_MAX and printed negative still counts forward.
enum class NumberText { kUnsigned, kSignedLong };

// One sysfs number read again and again: the file stays open and each read is one pread() from
// offset 0, which makes sysfs produce the value anew (powercap's energy_uj, read at every kernel
// boundary, would otherwise cost an open and a close per read). Errors are read_u64's.
class OpenNumberFile {
 public:
  // Opens `file` and reads it once, throwing what read_u64 would.
  OpenNumberFile(std::filesystem::path file, std::string permission_fix);
  // Takes `fd`, already open on `file` (found by openat beneath a directory the caller trusts),
  // and reads it once as `text` says; closes it and throws what read_u64 would on failure.
  OpenNumberFile(int fd, std::filesystem::path file, std::string permission_fix, NumberText text);
  ~OpenNumberFile();
  OpenNumberFile(OpenNumberFile&& other) noexcept;
  OpenNumberFile& operator=(OpenNumberFile&& other) noexcept;
  OpenNumberFile(const OpenNumberFile&) = delete;
  OpenNumberFile& operator=(const OpenNumberFile&) = delete;

  std::uint64_t read() const;
  const std::filesystem::path& path() const { return file_; }

 private:
  std::filesystem::path file_;
  std::string permission_fix_;
  int fd_ = -1;
  NumberText text_ = NumberText::kUnsigned;
};

// The message read_u64 throws when opening `file` failed with `err`.
std::string open_error_message(const std::filesystem::path& file, int err,
                               const std::string& permission_fix);

// Parses an unsigned number (decimal or 0x…); nullopt on anything else.
std::optional<std::uint64_t> parse_u64(const std::string& text);

// Parses a number written as `text` says: parse_u64's, or a decimal in the range of a signed
// 64-bit integer, returned as its two's-complement pattern ("-1" is 2^64 - 1); nullopt otherwise.
std::optional<std::uint64_t> parse_number(const std::string& text, NumberText kind);

// Replaces the file's content in one step (write a sibling, rename), so a reader never sees a
// half-written number.
void write_atomically(const std::filesystem::path& file, const std::string& text);

}  // namespace oaprof::power::detail
