#include "session/register_journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "gpu/device.h"
#include "mmio/registers.h"

namespace oaprof::session {
namespace {

constexpr std::string_view kMagicLine = "oaprofd-state 1";

// "0x<offset> 0x<prior> <kind>". A forcewake request journaled before the "owned" kind existed
// says masked; what was restored for it then, and is now, is clearing oaprof's own bit. A masked
// register journaled plain (Gen12's OAG_OA_DEBUG, before issue 30) is restored as masked: a plain
// write of its prior would change nothing.
template <typename Bad>
mmio::RestoreStep parse_write_line(const std::string& text, Bad bad) {
  unsigned offset = 0, prior = 0;
  char kind_text[8] = {};
  if (std::sscanf(text.c_str(), "0x%x 0x%x %7s", &offset, &prior, kind_text) != 3) throw bad();
  const std::optional<mmio::RestoreKind> kind = mmio::parse_restore_kind(kind_text);
  if (!kind) throw bad();
  if (*kind == mmio::RestoreKind::kOwnedBits || !mmio::reg::is_masked_register(offset)) {
    return {offset, prior, *kind};
  }
  return mmio::step_for_first_write(offset, prior);
}

}  // namespace

JournalingMmio::JournalingMmio(std::unique_ptr<mmio::Mmio> inner, Record record)
    : inner_(std::move(inner)), record_(std::move(record)) {}

void JournalingMmio::write32(std::uint32_t offset, std::uint32_t value) {
  if (!plan_.has(offset)) {
    const mmio::RestoreStep step = mmio::step_for_first_write(offset, inner_->read32(offset));
    record_(step);
    plan_.add(step);
  }
  inner_->write32(offset, value);
}

StateFile::StateFile(std::filesystem::path path, const StateContents& header)
    : path_(std::move(path)) {
  const std::filesystem::path parent =
      path_.has_parent_path() ? path_.parent_path() : std::filesystem::path(".");
  // The file is created in the directory whose descriptor is then synced, and O_NOFOLLOW: a link
  // planted where the state file goes must not redirect root's write.
  const int dir = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) {
    throw std::runtime_error(
        fmt::format("cannot open the state directory {}: {}; check that it "
                    "exists and is oaprofd's",
                    parent.string(), std::strerror(errno)));
  }
  fd_ = ::openat(dir, path_.filename().c_str(),
                 O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
  if (fd_ < 0) {
    const int err = errno;
    ::close(dir);
    throw std::runtime_error(
        fmt::format("cannot create the state file {}: {}; check that the "
                    "state directory exists and is oaprofd's",
                    path_.string(), std::strerror(err)));
  }
  try {
    write_line(fmt::format("{}\ndevice {}\nidentity {}\nholder {}\n", kMagicLine,
                           header.device_spec, header.identity, header.holder));
    // The directory entry must be durable too, or a crash could lose the whole file: without it
    // no register may be written (the caller's write is stopped by this throw).
    if (::fsync(dir) != 0) {
      throw std::runtime_error(fmt::format(
          "cannot make the state file {} durable: fsync of {} failed: {}; no register is written "
          "without a journal that survives a crash",
          path_.string(), parent.string(), std::strerror(errno)));
    }
  } catch (...) {
    ::close(dir);
    ::close(fd_);
    throw;
  }
  ::close(dir);
}

StateFile::~StateFile() {
  if (fd_ >= 0) ::close(fd_);
}

void StateFile::write_line(const std::string& line) {
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw std::runtime_error(
          fmt::format("cannot write the state file {}: {}", path_.string(), std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fdatasync(fd_) != 0) {
    throw std::runtime_error(
        fmt::format("cannot sync the state file {}: {}", path_.string(), std::strerror(errno)));
  }
}

void StateFile::append(const mmio::RestoreStep& step) {
  write_line(fmt::format("write 0x{:08x} 0x{:08x} {}\n", step.offset, step.prior,
                         mmio::restore_kind_name(step.kind)));
}

void StateFile::remove() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

SessionJournal::SessionJournal(std::filesystem::path state_file, StateContents header)
    : path_(std::move(state_file)), header_(std::move(header)) {}

SessionJournal::~SessionJournal() {
  if (state_ && restored_) state_->remove();
}

std::unique_ptr<mmio::Mmio> SessionJournal::wrap(std::unique_ptr<mmio::Mmio> inner) {
  header_.identity = inner->describe();
  auto window =
      std::make_unique<JournalingMmio>(std::move(inner), [this](const mmio::RestoreStep& step) {
        if (!state_) state_ = std::make_unique<StateFile>(path_, header_);
        state_->append(step);
        ++registers_;
      });
  window_ = window.get();
  return window;
}

void SessionJournal::write_back() {
  if (window_ != nullptr) window_->plan().apply(*window_);
}

std::optional<StateContents> read_state_file(const std::filesystem::path& path) {
  // open(2) and read(2), not an ifstream: their errno is the one of the failed call, so "there is
  // no state" (ENOENT) is told apart from "there is one we cannot read", which must not be taken
  // for a clean GPU. O_NOFOLLOW: the state file is never a link, whoever made one.
  const auto unreadable = [&](const std::string& why) {
    return std::runtime_error(fmt::format(
        "cannot read the state file {}: {}; its registers may still be programmed: fix or move "
        "it, or reboot to reset the GPU and then remove it",
        path.string(), why));
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return std::nullopt;
    throw unreadable(err == ELOOP ? "it is a symbolic link" : std::strerror(err));
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw unreadable(std::strerror(err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  const auto bad = [&](const std::string& why) {
    return std::runtime_error(
        fmt::format("{} is not an oaprofd state file ({}); move it away after checking the GPU",
                    path.string(), why));
  };
  StateContents c;
  std::istringstream lines(text);
  std::string line;
  bool magic = false;
  while (std::getline(lines, line)) {
    // Only complete lines count: the last one may have been cut by a crash.
    if (lines.eof() && !text.ends_with('\n')) break;
    if (!magic) {
      if (line != kMagicLine) throw bad("first line is not '" + std::string(kMagicLine) + "'");
      magic = true;
      continue;
    }
    const auto space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
    if (key == "device") {
      c.device_spec = rest;
    } else if (key == "identity") {
      c.identity = rest;
    } else if (key == "holder") {
      c.holder = rest;
    } else if (key == "write") {
      c.entries.push_back(parse_write_line(rest, [&] { return bad("bad line '" + line + "'"); }));
    } else {
      throw bad("unknown line '" + line + "'");
    }
  }
  // A file cut before its header ends was created before any register was written.
  if (c.device_spec.empty() && !c.entries.empty()) throw bad("no device line");
  return c;
}

std::optional<std::string> restore_state_file(const std::filesystem::path& path,
                                              gpu::DeviceOptions device) {
  const std::optional<StateContents> state = read_state_file(path);
  if (!state) return std::nullopt;
  if (state->entries.empty()) {
    std::filesystem::remove(path);
    return fmt::format("removed {}: its session had written no register", path.string());
  }
  // Forcewake requests are restored last and without taking forcewake ourselves: a forcewake
  // of our own would put back the crashed session's request bits when it lets go.
  std::vector<mmio::RestoreStep> registers, forcewake;
  for (const mmio::RestoreStep& e : state->entries) {
    const bool fw = mmio::reg::is_forcewake_request(e.offset);
    (fw ? forcewake : registers).push_back(e);
  }
  device.spec = gpu::DeviceSpec::parse(state->device_spec);
  device.wrap_mmio = nullptr;
  device.map_registers = true;  // whatever the caller reads with, restoring writes registers
  {
    gpu::Device d = gpu::open_device(device);
    if (d.mmio->describe() != state->identity) {
      throw std::runtime_error(fmt::format(
          "{} is about {}, but {} is now {}; not restoring registers on another device. Reboot to "
          "reset the GPU, then remove the file",
          path.string(), state->identity, state->device_spec, d.mmio->describe()));
    }
    mmio::apply_restore_steps(*d.mmio, registers);
  }
  if (!forcewake.empty()) {
    device.forcewake.mode = mmio::ForcewakeMode::kNone;
    gpu::Device d = gpu::open_device(device);
    mmio::apply_restore_steps(*d.mmio, forcewake);
  }
  std::filesystem::remove(path);
  return fmt::format("restored {} registers on {} that a crashed session of {} left programmed",
                     state->entries.size(), state->identity, state->holder);
}

}  // namespace oaprof::session
