// The one way oaprof puts a GPU back: the registers and bits it owns, in the order it first wrote
// them, each with how it is undone. SavedRegisters keeps one for the normal end, error paths and
// the signal thread; the register journal (session/register_journal.h) keeps the same steps in its
// state file, for the fallback write-back and for the next start after a crash. Both undo them
// with apply_restore_steps, newest first, so every path leaves the same registers.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "mmio/mmio.h"

namespace oaprof::mmio {

enum class RestoreKind {
  kPlain,      // the whole prior value is written back
  kMasked,     // a masked register: its prior low 16 bits, written with a full mask
  kOwnedBits,  // a masked register shared with the driver (forcewake): only oaprof's bits cleared
};

// "plain", "masked", "owned": as the state file writes them.
std::string_view restore_kind_name(RestoreKind kind);
std::optional<RestoreKind> parse_restore_kind(std::string_view name);

struct RestoreStep {
  std::uint32_t offset = 0;
  // kPlain: the prior value; kMasked: its low 16 bits; kOwnedBits: the bits oaprof set.
  std::uint32_t prior = 0;
  RestoreKind kind = RestoreKind::kPlain;
  bool operator==(const RestoreStep&) const = default;
};

// The step that undoes the first write to `offset`, knowing only the register and its value
// before (what the journal sees): a forcewake request owns oaprof's request bit, a masked register
// keeps its low half, anything else its whole value.
RestoreStep step_for_first_write(std::uint32_t offset, std::uint32_t value_before);

// Undoes `steps`, last first.
void apply_restore_steps(Mmio& mmio, std::span<const RestoreStep> steps);

// Steps in first-write order, one per register.
class RestorePlan {
 public:
  bool has(std::uint32_t offset) const;
  // Adds the step for a register not in the plan yet; for one that is, the first prior stays,
  // except that owned bits accumulate (set_owned_bits twice with different bits).
  void add(const RestoreStep& step);
  void apply(Mmio& mmio) const { apply_restore_steps(mmio, steps_); }
  std::span<const RestoreStep> steps() const { return steps_; }
  bool empty() const { return steps_.empty(); }
  void clear() { steps_.clear(); }

 private:
  std::vector<RestoreStep> steps_;
};

}  // namespace oaprof::mmio
