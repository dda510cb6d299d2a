#include "mmio/restore_plan.h"

#include <algorithm>

#include "mmio/registers.h"

namespace oaprof::mmio {

std::string_view restore_kind_name(RestoreKind kind) {
  switch (kind) {
    case RestoreKind::kPlain:
      return "plain";
    case RestoreKind::kMasked:
      return "masked";
    case RestoreKind::kOwnedBits:
      return "owned";
  }
  return "plain";
}

std::optional<RestoreKind> parse_restore_kind(std::string_view name) {
  for (RestoreKind k : {RestoreKind::kPlain, RestoreKind::kMasked, RestoreKind::kOwnedBits}) {
    if (restore_kind_name(k) == name) return k;
  }
  return std::nullopt;
}

RestoreStep step_for_first_write(std::uint32_t offset, std::uint32_t value_before) {
  if (reg::is_forcewake_request(offset)) {
    return {offset, reg::kForcewakeOaprofBit, RestoreKind::kOwnedBits};
  }
  if (reg::is_masked_register(offset))
    return {offset, value_before & 0xFFFFu, RestoreKind::kMasked};
  return {offset, value_before, RestoreKind::kPlain};
}

void apply_restore_steps(Mmio& mmio, std::span<const RestoreStep> steps) {
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    switch (it->kind) {
      case RestoreKind::kPlain:
        mmio.write32(it->offset, it->prior);
        break;
      case RestoreKind::kMasked:
        mmio.write32(it->offset, 0xFFFF0000u | (it->prior & 0xFFFFu));
        break;
      case RestoreKind::kOwnedBits:
        mmio.write32(it->offset, reg::masked_disable(it->prior));
        break;
    }
  }
}

bool RestorePlan::has(std::uint32_t offset) const {
  return std::any_of(steps_.begin(), steps_.end(),
                     [offset](const RestoreStep& s) { return s.offset == offset; });
}

void RestorePlan::add(const RestoreStep& step) {
  auto it = std::find_if(steps_.begin(), steps_.end(),
                         [&](const RestoreStep& s) { return s.offset == step.offset; });
  if (it == steps_.end()) {
    steps_.push_back(step);
  } else if (it->kind == RestoreKind::kOwnedBits && step.kind == RestoreKind::kOwnedBits) {
    it->prior |= step.prior;
  }
}

}  // namespace oaprof::mmio
