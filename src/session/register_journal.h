// The crash safety of oaprofd: before a register is first written, the step that undoes the write
// (mmio/restore_plan.h, the same steps SavedRegisters keeps) goes to a small state file on disk
// (fsynced), so that if oaprofd dies mid-session the next oaprofd finds what to put back.
// JournalingMmio is the decorator that sees every write; StateFile is the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "mmio/mmio.h"
#include "mmio/restore_plan.h"

namespace oaprof::session {

// Forwards reads and writes to `inner`; the first write to each offset first reads the prior
// value and hands the step that undoes it (mmio::step_for_first_write) to `record`, which must
// make it durable before returning (a throw from it stops the write).
class JournalingMmio final : public mmio::Mmio {
 public:
  using Record = std::function<void(const mmio::RestoreStep&)>;
  JournalingMmio(std::unique_ptr<mmio::Mmio> inner, Record record);

  std::uint32_t read32(std::uint32_t offset) override { return inner_->read32(offset); }
  void write32(std::uint32_t offset, std::uint32_t value) override;
  std::string describe() const override { return inner_->describe(); }

  const mmio::RestorePlan& plan() const { return plan_; }

 private:
  std::unique_ptr<mmio::Mmio> inner_;
  Record record_;
  mmio::RestorePlan plan_;
};

// What a state file says: the device it is about and the registers to put back.
struct StateContents {
  std::string device_spec;                 // the --device spec that opens it again
  std::string identity;                    // its Mmio::describe() when the session began
  std::string holder;                      // "uid U, pid P since T", for the log
  std::vector<mmio::RestoreStep> entries;  // in first-write order
};

// Text, one line each, appended and fsynced as the session writes:
//   oaprofd-state 1
//   device <spec>
//   identity <describe()>
//   holder uid <U>, pid <P> since <ISO time>
//   write 0x<offset> 0x<prior> plain|masked|owned   (mmio::RestoreKind; files from before
//   "owned" say masked for a forcewake request, read as oaprof's own bit)
class StateFile {
 public:
  // Creates `path` (replacing an old one) with the header, durable on return. Throws
  // std::runtime_error saying what failed.
  StateFile(std::filesystem::path path, const StateContents& header);
  ~StateFile();  // closes; the file stays unless remove() was called
  StateFile(const StateFile&) = delete;
  StateFile& operator=(const StateFile&) = delete;

  void append(const mmio::RestoreStep& step);
  void remove();
  const std::filesystem::path& path() const { return path_; }

 private:
  void write_line(const std::string& line);
  std::filesystem::path path_;
  int fd_ = -1;
};

// One session's journal on one device: wrap() decorates the device's register window (hand it
// to DeviceOptions::wrap_mmio), and the state file is created at the first register write. Both
// oaprofd (a session per client) and a local `sudo oaprof` (one per run) keep one, each while it
// holds the session lock. The file is kept when the journal goes away, unless mark_restored()
// said every register is back: a run that dies or fails to restore leaves it for the next start.
class SessionJournal {
 public:
  // `header` without identity (taken from the window at wrap()).
  SessionJournal(std::filesystem::path state_file, StateContents header);
  ~SessionJournal();
  SessionJournal(const SessionJournal&) = delete;
  SessionJournal& operator=(const SessionJournal&) = delete;

  // Call at most once; this journal must outlive the returned window.
  std::unique_ptr<mmio::Mmio> wrap(std::unique_ptr<mmio::Mmio> inner);
  // Writes every journaled prior back, last first, through the window: only while the device
  // that owns the window is open. The fallback when the counter source's own restore failed.
  void write_back();
  // Registers journaled so far; the journal's own count, valid after the device closed.
  std::size_t registers() const { return registers_; }
  // Every register is back: the state file is removed when the journal goes.
  void mark_restored() { restored_ = true; }
  bool has_state_file() const { return state_ != nullptr; }
  const std::filesystem::path& state_file() const { return path_; }

 private:
  std::filesystem::path path_;
  StateContents header_;
  std::unique_ptr<StateFile> state_;
  JournalingMmio* window_ = nullptr;  // owned by the device
  std::size_t registers_ = 0;
  bool restored_ = false;
};

// nullopt when there is no file. A torn last line (a crash while appending) is ignored: its
// register was not written yet. Throws std::runtime_error for a file that is not a state file
// and for one that exists but cannot be read (a directory, a symbolic link, an I/O error).
std::optional<StateContents> read_state_file(const std::filesystem::path& path);

// Puts back what the state file at `path` journals, on the device it names (opened with `device`'s
// options and the file's spec), then removes the file. The caller must hold the session lock, so
// that the journal is a dead session's, not a live one's. Returns what was done, for the log;
// nullopt when there is no file. Throws std::runtime_error (file kept) when the device cannot be
// opened or is another one now.
std::optional<std::string> restore_state_file(const std::filesystem::path& path,
                                              gpu::DeviceOptions device);

}  // namespace oaprof::session
