// What the energy status unit (ESU, bits 12:8) of MSR_RAPL_POWER_UNIT means, which depends on the
// CPU: most Intel parts count 1/2^ESU J, but the Silvermont and Airmont Atoms count 2^ESU µJ
// (Airmont is Braswell/Cherry Trail, whose Cherryview GPU oaprof supports). The msr backend asks
// here; the powercap and perf backends read values the kernel has already scaled. Private to
// src/power.
//
// Source: linux drivers/powercap/intel_rapl_common.c @ torvalds/linux
// 010e85f9e47c6a92740b7d73e0fca8f792573582: rapl_check_unit_core() (energy_unit =
// ENERGY_UNIT_SCALE * 1000000 / (1 << ESU), i.e. 1/2^ESU J once rapl_unit_xlate() divides by
// ENERGY_UNIT_SCALE) and rapl_check_unit_atom() (ENERGY_UNIT_SCALE * 1 << ESU: 2^ESU µJ); rapl_ids
// gives the Atom rule to ATOM_SILVERMONT (rapl_defaults_byt), ATOM_AIRMONT (rapl_defaults_cht),
// ATOM_SILVERMONT_MID (rapl_defaults_tng) and ATOM_AIRMONT_MID (rapl_defaults_ann, named
// ATOM_SILVERMONT_MID2 in later kernels), and the core rule to every other model it lists. Model
// numbers: arch/x86/include/asm/intel-family.h @ the same commit.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace oaprof::power {

// The boot CPU as /proc/cpuinfo's first processor names it.
struct CpuModel {
  std::string vendor;  // vendor_id: "GenuineIntel", "AuthenticAMD"
  unsigned family = 0;
  unsigned model = 0;
};

// Parses the first processor of a /proc/cpuinfo text. Throws std::runtime_error saying which of
// vendor_id, cpu family and model is missing (a non-x86 cpuinfo has none of them).
CpuModel parse_cpu_model(std::string_view cpuinfo_text);

// Reads and parses `cpuinfo` (normally /proc/cpuinfo). Throws std::runtime_error naming the file,
// what is wrong with it and the fix.
CpuModel read_cpu_model(const std::filesystem::path& cpuinfo);

enum class RaplEnergyUnit {
  kCore,  // 1/2^ESU J (rapl_check_unit_core)
  kAtom,  // 2^ESU µJ (rapl_check_unit_atom)
};

// The rule the kernel applies to this CPU: kAtom for the four Intel family-6 Atom models above,
// kCore for everything else.
RaplEnergyUnit rapl_energy_unit_of(const CpuModel& cpu);

// "1/2^ESU J" or "2^ESU µJ", for messages and docs.
std::string_view rapl_energy_unit_name(RaplEnergyUnit unit);

// Microjoules per count of an energy status register, from MSR_RAPL_POWER_UNIT's ESU field.
double rapl_energy_unit_uj(std::uint64_t power_unit_msr, RaplEnergyUnit unit);

}  // namespace oaprof::power
