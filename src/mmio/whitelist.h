// The registers a metric configuration may write: per platform, exactly the lists the i915
// driver accepts in a user OA configuration (its is_valid_*_addr functions in i915_perf.c; the
// tables and the commit read are in whitelist.cc). A privileged oaprof refuses every other write
// a client asks for, so a client can never reach arbitrary registers through oaprof. Which
// generations oaprof itself programs over MMIO is the programmer's business (oa_programmer.h).
#pragma once

#include <cstdint>
#include <string_view>

#include "oa/platform.h"
#include "oa/register_write.h"

namespace oaprof::mmio {

enum class ConfigRegisterKind { kMux, kBoolean, kFlex };

std::string_view config_register_kind_name(ConfigRegisterKind kind);

// True when `address` is a register of `kind` that i915 accepts on `gen` (Gen8 meaning
// Broadwell, whose lists Gen9 shares; Haswell, Gen11 and Gen12 have their own).
bool is_whitelisted(oa::Generation gen, ConfigRegisterKind kind, std::uint32_t address);
// The same for one platform: Cherryview (codename "CHV") has its own mux list, i915's
// chv_is_valid_mux_addr (0x182300–0x1823A4 and the Gen7 ranges, without Broadwell's 0x0D00–0x0D2C
// and 0x20CC).
bool is_whitelisted(const oa::Platform& platform, ConfigRegisterKind kind, std::uint32_t address);

// Throws std::invalid_argument naming the register, the list it came in, and the ranges that
// list may hold, unless the write is whitelisted.
void check_whitelisted(oa::Generation gen, ConfigRegisterKind kind, const oa::RegisterWrite& w);
void check_whitelisted(const oa::Platform& platform, ConfigRegisterKind kind,
                       const oa::RegisterWrite& w);

}  // namespace oaprof::mmio
