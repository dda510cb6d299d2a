// The registers a metric configuration may write: the list the i915 driver accepts in a user
// OA configuration (reference/hardware.md §2). A privileged oaprof refuses every other write a
// client asks for, so a client can never reach arbitrary registers through oaprof.
#pragma once

#include <cstdint>
#include <string_view>

#include "oa/platform.h"
#include "oa/register_write.h"

namespace oaprof::mmio {

enum class ConfigRegisterKind { kMux, kBoolean, kFlex };

std::string_view config_register_kind_name(ConfigRegisterKind kind);

// True when `address` is a register of `kind` that i915 accepts on `gen`.
bool is_whitelisted(oa::Generation gen, ConfigRegisterKind kind, std::uint32_t address);
// The same for one platform: Cherryview (codename "CHV") also accepts mux 0x182300–0x1823A4
// (i915's chv_is_valid_mux_addr; not in hardware.md).
bool is_whitelisted(const oa::Platform& platform, ConfigRegisterKind kind, std::uint32_t address);

// Throws std::invalid_argument naming the register, the list it came in, and the ranges that
// list may hold, unless the write is whitelisted.
void check_whitelisted(oa::Generation gen, ConfigRegisterKind kind, const oa::RegisterWrite& w);
void check_whitelisted(const oa::Platform& platform, ConfigRegisterKind kind,
                       const oa::RegisterWrite& w);

}  // namespace oaprof::mmio
