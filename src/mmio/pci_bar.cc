#include "mmio/pci_bar.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <regex>
#include <stdexcept>

#include <fmt/format.h>
#include <pciaccess.h>

#include "mmio/pci_sysfs.h"

namespace oaprof::mmio {

std::string PciAddress::str() const {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, dev, func);
}

PciAddress parse_pci_address(const std::string& text) {
  static const std::regex kForm(
      "^(?:([0-9a-fA-F]{1,4}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\\.([0-7])$");
  std::smatch m;
  if (std::regex_match(text, m, kForm)) {
    PciAddress a;
    a.domain = m[1].matched ? static_cast<unsigned>(std::stoul(m[1], nullptr, 16)) : 0;
    a.bus = static_cast<unsigned>(std::stoul(m[2], nullptr, 16));
    a.dev = static_cast<unsigned>(std::stoul(m[3], nullptr, 16));
    a.func = static_cast<unsigned>(std::stoul(m[4], nullptr, 16));
    if (a.dev <= 0x1F) return a;
  }
  throw std::invalid_argument(
      fmt::format("'{}' is not a PCI address; expected DDDD:BB:DD.F, e.g. 0000:00:02.0", text));
}

void check_intel_display(const PciAddress& addr, const PciIdentity& id) {
  const bool intel = id.vendor == 0x8086;
  const bool display = (id.device_class >> 16) == 0x03;
  if (!intel || !display) {
    throw std::runtime_error(fmt::format(
        "{} is not an Intel display device (vendor 0x{:04x}, class 0x{:06x}); use --device sim "
        "or --pci BDF to name the Intel GPU",
        addr.str(), id.vendor, id.device_class));
  }
}

std::string bar_map_advice(const PciAddress& addr, int err, bool root,
                           const std::optional<std::string>& lockdown_mode) {
  if (err != EPERM && err != EACCES) {
    return fmt::format(
        "check that {} is the GPU and enabled (`lspci -v -s {}`) and run "
        "`oaprof doctor`, or use --access perf, which maps no BAR",
        addr.str(), addr.str());
  }
  if (lockdown_forbids_bar(lockdown_mode)) {
    return fmt::format(
        "kernel lockdown is '{}', which forbids mapping PCI BARs even for root: use --access "
        "perf (the i915 perf stream needs no BAR), or boot without lockdown (disable Secure Boot "
        "or remove the lockdown= kernel parameter)",
        *lockdown_mode);
  }
  if (!root) {
    return "mapping a BAR needs root: run `sudo oaprof …`, or join group 'oaprof' and let oaprofd "
           "do it";
  }
  return "root was refused without kernel lockdown: a security module (SELinux, AppArmor) or a "
         "missing CAP_SYS_RAWIO may forbid it; see `oaprof doctor`, or use --access perf";
}

PciBar::PciBar(const PciAddress& addr, const std::filesystem::path& sysfs_root) : addr_(addr) {
  if (int err = pci_system_init(); err != 0) {
    throw std::runtime_error(fmt::format(
        "cannot look for {}: scanning PCI devices failed: {}; libpciaccess reads "
        "/sys/bus/pci/devices, so check that sysfs is mounted (`oaprof doctor`), or use "
        "--device sim",
        addr.str(), std::strerror(err)));
  }
  dev_ = pci_device_find_by_slot(addr.domain, addr.bus, addr.dev, addr.func);
  if (dev_ == nullptr) {
    pci_system_cleanup();
    throw std::runtime_error(fmt::format(
        "no PCI device at {}; find the GPU with `lspci -D -d 8086::0300` and pass --pci BDF, "
        "or use --device sim",
        addr.str()));
  }
  if (int err = pci_device_probe(dev_); err != 0) {
    pci_system_cleanup();
    throw std::runtime_error(fmt::format(
        "cannot read the configuration space of {}: {}; check that the device is still there "
        "(`lspci -D -s {}`) and run `oaprof doctor`, or use --device sim",
        addr.str(), std::strerror(err), addr.str()));
  }
  id_ = {static_cast<std::uint16_t>(dev_->vendor_id), static_cast<std::uint16_t>(dev_->device_id),
         dev_->device_class};
  try {
    check_intel_display(addr, id_);
  } catch (...) {
    pci_system_cleanup();
    throw;
  }
  const pci_mem_region& bar = dev_->regions[0];
  if (bar.size == 0) {
    pci_system_cleanup();
    throw std::runtime_error(fmt::format(
        "{} has no BAR0 to map: its register window is unassigned (disabled by the firmware, or "
        "hidden by a hypervisor); check `lspci -v -s {}`, or use --access perf, which maps no BAR",
        addr.str(), addr.str()));
  }
  void* ptr = nullptr;
  if (int err =
          pci_device_map_range(dev_, bar.base_addr, bar.size, PCI_DEV_MAP_FLAG_WRITABLE, &ptr);
      err != 0) {
    pci_system_cleanup();
    throw std::runtime_error(fmt::format(
        "cannot map BAR0 of {} ({} bytes): {}; {}", addr.str(), bar.size, std::strerror(err),
        bar_map_advice(addr, err, ::geteuid() == 0, kernel_lockdown_mode(sysfs_root))));
  }
  base_ = static_cast<volatile std::uint32_t*>(ptr);
  size_ = bar.size;
}

PciBar::~PciBar() {
  if (base_ != nullptr) pci_device_unmap_range(dev_, const_cast<std::uint32_t*>(base_), size_);
  pci_system_cleanup();
}

bool register_in_bar(std::uint32_t offset, std::uint64_t bar_bytes) {
  return offset % 4 == 0 && std::uint64_t{offset} + 4 <= bar_bytes;
}

void PciBar::check_offset(std::uint32_t offset) const {
  if (!register_in_bar(offset, size_)) {
    throw std::out_of_range(fmt::format(
        "register 0x{:X} is outside BAR0 of {} ({} bytes) or not 4-byte aligned; this is a bug "
        "in oaprof, please report it",
        offset, addr_.str(), size_));
  }
}

std::uint32_t PciBar::read32(std::uint32_t offset) {
  check_offset(offset);
  return base_[offset / 4];
}

void PciBar::write32(std::uint32_t offset, std::uint32_t value) {
  check_offset(offset);
  base_[offset / 4] = value;
}

std::string pci_device_label(const PciAddress& addr, const PciIdentity& id) {
  return fmt::format("{} [{:04x}:{:04x}]", addr.str(), id.vendor, id.device);
}

std::string PciBar::describe() const { return pci_device_label(addr_, id_); }

}  // namespace oaprof::mmio
