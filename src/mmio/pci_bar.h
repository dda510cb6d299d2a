// The real register window: BAR0 of the Intel display device (0000:00:02.0 by default), found and
// mapped through libpciaccess. Vendor and class are checked before anything is mapped, because on
// many virtual machines 00:02.0 is a virtio device and writing to it would corrupt a disk.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "mmio/mmio.h"

struct pci_device;

namespace oaprof::mmio {

struct PciAddress {
  unsigned domain = 0, bus = 0, dev = 2, func = 0;
  std::string str() const;
  friend bool operator==(const PciAddress&, const PciAddress&) = default;
};

// Parses "0000:00:02.0" or "00:02.0"; throws std::invalid_argument with the expected form.
PciAddress parse_pci_address(const std::string& text);

struct PciIdentity {
  std::uint16_t vendor = 0;
  std::uint16_t device = 0;
  std::uint32_t device_class = 0;  // 24-bit class code, 0x03xxxx for display
};

// "0000:00:02.0 [8086:5916]": how a real device names itself in messages and outputs, whether or
// not its BAR is mapped.
std::string pci_device_label(const PciAddress& addr, const PciIdentity& id);

// Throws std::runtime_error naming the device and what was expected unless it is an Intel display
// device. Pure, so tests can feed any identity.
void check_intel_display(const PciAddress& addr, const PciIdentity& id);

// Whether a 32-bit access at `offset` lies wholly inside a BAR of `bar_bytes`: aligned, and
// offset + 4 <= bar_bytes computed in 64 bits, so that 0xFFFFFFFC cannot wrap past the check.
bool register_in_bar(std::uint32_t offset, std::uint64_t bar_bytes);

// What to do when mapping BAR0 of `addr` failed with `err`. EPERM/EACCES has two causes that
// want different fixes: kernel lockdown (`lockdown_mode`, from mmio/pci_sysfs.h) refuses even
// root, so only --access perf or a boot without lockdown helps; otherwise the caller is not root.
std::string bar_map_advice(const PciAddress& addr, int err, bool root,
                           const std::optional<std::string>& lockdown_mode);

class PciBar final : public Mmio {
 public:
  // Finds, checks and maps BAR0 writable. Every failure throws std::runtime_error with what
  // failed, why and what to do. `sysfs_root` is where the kernel's lockdown mode is read when
  // the mapping is refused.
  explicit PciBar(const PciAddress& addr, const std::filesystem::path& sysfs_root = "/sys");
  ~PciBar() override;
  PciBar(const PciBar&) = delete;
  PciBar& operator=(const PciBar&) = delete;

  std::uint32_t read32(std::uint32_t offset) override;
  void write32(std::uint32_t offset, std::uint32_t value) override;
  std::string describe() const override;
  const PciIdentity& identity() const { return id_; }

 private:
  // Throws std::out_of_range unless register_in_bar(offset, size_).
  void check_offset(std::uint32_t offset) const;

  PciAddress addr_;
  PciIdentity id_;
  pci_device* dev_ = nullptr;
  volatile std::uint32_t* base_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace oaprof::mmio
