// What `--device` names, parsed once at the edge (the command line, oaprofd's protocol, a state
// file) into a value the rest of the code asks, never compares as text: the integrated GPU's
// usual address (auto), the in-process simulator (sim), the simulator mirrored into a register
// file (sim:FILE) or a PCI address.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "mmio/pci_bar.h"

namespace oaprof::gpu {

class DeviceSpec {
 public:
  enum class Kind { kAuto, kSim, kSimFile, kPci };

  DeviceSpec() = default;  // auto

  // "auto", "sim", "sim:FILE" or a PCI address ("0000:00:02.0", "00:02.0"); throws
  // std::invalid_argument saying which forms are meant.
  static DeviceSpec parse(std::string_view text);
  static DeviceSpec sim() { return DeviceSpec(Kind::kSim); }
  static DeviceSpec sim_file(std::filesystem::path file);
  static DeviceSpec pci(const mmio::PciAddress& address);

  Kind kind() const { return kind_; }
  bool is_auto() const { return kind_ == Kind::kAuto; }
  bool simulated() const { return kind_ == Kind::kSim || kind_ == Kind::kSimFile; }
  // sim:FILE's register file; empty for the other kinds.
  const std::filesystem::path& file() const { return file_; }
  // The PCI address of a real device: auto is 0000:00:02.0. Throws std::logic_error for the
  // simulator, which has none.
  mmio::PciAddress address() const;
  // auto resolved to its address; the other kinds as they are.
  DeviceSpec resolved() const;

  // The spelling parse() reads back: addresses in their full form (0000:00:02.0).
  std::string str() const;

  friend bool operator==(const DeviceSpec& a, const DeviceSpec& b) { return a.str() == b.str(); }

 private:
  explicit DeviceSpec(Kind kind) : kind_(kind) {}

  Kind kind_ = Kind::kAuto;
  std::filesystem::path file_;
  mmio::PciAddress address_;
};

// The device that `--device SPEC --pci BDF` choose: SPEC alone without --pci; BDF when SPEC is
// auto or names the same address. Throws std::invalid_argument for a BDF that is not a PCI
// address, or when SPEC names another device (sim, another address).
DeviceSpec device_spec_with_pci(const DeviceSpec& device, const std::string& pci);

}  // namespace oaprof::gpu
