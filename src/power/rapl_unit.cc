#include "power/rapl_unit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>

namespace oaprof::power {
namespace {

// Intel family-6 models whose RAPL energy unit is 2^ESU µJ (intel-family.h names and numbers).
constexpr unsigned kAtomUnitModels[] = {
    0x37,  // INTEL_FAM6_ATOM_SILVERMONT: Bay Trail, Valleyview (rapl_defaults_byt)
    0x4A,  // INTEL_FAM6_ATOM_SILVERMONT_MID: Merrifield (rapl_defaults_tng)
    0x4C,  // INTEL_FAM6_ATOM_AIRMONT: Cherry Trail, Braswell (rapl_defaults_cht)
    0x5A,  // INTEL_FAM6_ATOM_AIRMONT_MID: Moorefield (rapl_defaults_ann)
};

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

std::optional<unsigned> parse_decimal(std::string_view s) {
  unsigned v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// The first processor's block of a cpuinfo file: everything up to its first blank line.
std::string read_first_processor(const std::filesystem::path& file) {
  errno = 0;
  std::ifstream in(file);
  if (!in) {
    throw std::runtime_error(fmt::format("cannot open it: {}", std::strerror(errno)));
  }
  std::string text;
  for (std::string line; std::getline(in, line) && !(line.empty() && !text.empty());) {
    text += line + "\n";
  }
  if (in.bad()) throw std::runtime_error(fmt::format("cannot read it: {}", std::strerror(errno)));
  return text;
}

}  // namespace

CpuModel parse_cpu_model(std::string_view text) {
  CpuModel cpu;
  bool vendor = false;
  std::optional<unsigned> family, model;
  // "key<tabs>: value" lines; a blank line ends the first processor's block.
  while (!text.empty()) {
    const auto eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    if (trim(line).empty()) {
      if (vendor || family || model) break;
      continue;
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    if (key == "vendor_id") {
      cpu.vendor = std::string(value);
      vendor = true;
    } else if (key == "cpu family") {
      family = parse_decimal(value);
    } else if (key == "model") {
      model = parse_decimal(value);
    }
  }
  if (!vendor || !family || !model) {
    throw std::runtime_error(fmt::format(
        "its first processor has no {} (an x86 kernel writes vendor_id, cpu family and model)",
        !vendor   ? "vendor_id"
        : !family ? "decimal cpu family"
                  : "decimal model"));
  }
  cpu.family = *family;
  cpu.model = *model;
  return cpu;
}

CpuModel read_cpu_model(const std::filesystem::path& cpuinfo) {
  try {
    return parse_cpu_model(read_first_processor(cpuinfo));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format(
        "msr: cannot tell the CPU model from {}: {}; MSR_RAPL_POWER_UNIT's energy field means "
        "1/2^ESU J on most Intel CPUs but 2^ESU µJ on Silvermont and Airmont Atoms, so no "
        "figure is given without it: pass the proc root with --proc-root, or use --energy "
        "powercap (the kernel scales its values)",
        cpuinfo.string(), e.what()));
  }
}

RaplEnergyUnit rapl_energy_unit_of(const CpuModel& cpu) {
  const bool atom_unit = cpu.vendor == "GenuineIntel" && cpu.family == 6 &&
                         std::find(std::begin(kAtomUnitModels), std::end(kAtomUnitModels),
                                   cpu.model) != std::end(kAtomUnitModels);
  return atom_unit ? RaplEnergyUnit::kAtom : RaplEnergyUnit::kCore;
}

std::string_view rapl_energy_unit_name(RaplEnergyUnit unit) {
  return unit == RaplEnergyUnit::kAtom ? "2^ESU µJ" : "1/2^ESU J";
}

double rapl_energy_unit_uj(std::uint64_t power_unit_msr, RaplEnergyUnit unit) {
  const int esu = static_cast<int>((power_unit_msr >> 8) & 0x1f);
  return unit == RaplEnergyUnit::kAtom ? std::ldexp(1.0, esu) : 1e6 / std::ldexp(1.0, esu);
}

}  // namespace oaprof::power
