#include "gpu/device.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "gpu/i915/i915_query.h"
#include "gpu/xe/xe_query.h"
#include "mmio/pci_bar.h"
#include "mmio/pci_sysfs.h"
#include "mmio/registers.h"

namespace oaprof::gpu {
namespace {

// A device xe drives is read only through xe's observation stream (--access perf, no BAR),
// and only where xe has OA (Gen12 on: xe_oa_init requires GRAPHICS_VER >= 12, xe_oa.c @
// torvalds/linux 0755a4e3e809). i915's perf stream and execbuffer do not exist there, and the
// BAR read-outs would program the OA unit behind xe, which owns it: xe's observation streams
// program the same OAG registers and refuse a second stream (EBUSY) to keep them consistent
// (include/uapi/drm/xe_drm.h, DRM_XE_OBSERVATION @ torvalds/linux
// c8507a25cebd179db935dd266a33c51bef1b1e80); writing them underneath would break that
// exclusion, unverified on hardware. docs/xe.md says more.
// A device oaprof has no platform for: a known unsupported id says what it is and why, any other
// id that oaprof does not know it (never that its driver lacks OA: xe has OA from Gen12 on).
std::string unknown_device_message(const mmio::PciAddress& addr, std::uint16_t device_id) {
  if (const std::string why = oa::unsupported_pci_id_message(device_id); !why.empty()) {
    return fmt::format("{}: {}; use --device sim meanwhile", addr.str(), why);
  }
  return fmt::format(
      "{} is an Intel GPU with PCI id 0x{:04x}, which oaprof does not know; please report it, "
      "and use --device sim meanwhile",
      addr.str(), device_id);
}

void refuse_xe(const mmio::PciAddress& addr, const std::optional<mmio::PciIdentity>& id,
               bool map_registers) {
  const auto platform = id ? oa::platform_for_pci_id(id->device) : std::nullopt;
  if (!platform) {
    if (id) throw std::runtime_error(unknown_device_message(addr, id->device));
    throw std::runtime_error(fmt::format(
        "{} is driven by xe, but its PCI identity is unreadable in sysfs; use --device sim "
        "meanwhile",
        addr.str()));
  }
  const bool has_oa = platform->gen == oa::Generation::kXe2 || oa::is_gen12_family(platform->gen);
  if (!has_oa) {
    throw std::runtime_error(fmt::format(
        "{} ({}) is driven by xe, which has OA only on Gen12 and later (xe_oa_init); bind i915 "
        "to it, or use --device sim meanwhile",
        addr.str(), platform->codename));
  }
  if (!map_registers) return;
  throw std::runtime_error(fmt::format(
      "{} is a {} part driven by xe, which owns its OA unit: oaprof reads it only through xe's "
      "observation stream; use --access perf (docs/xe.md)",
      addr.str(), platform->codename));
}

// --oa-exponent left at auto (-1): 16 on i915, where snapshots are MI_REPORT_PERF_COUNT and
// periodic reports only keep the buffer drained; 10 on xe, where every snapshot waits for the
// next periodic report ((2 << 10) ticks: 107 us at 19.2 MHz).
int period_exponent_for(int asked, const oa::Platform& platform) {
  if (asked >= 0) return asked;
  return platform.driver == oa::KernelDriver::kXe ? 10 : 16;
}

// The simulator with its register file mirrored into a shared file mapping. Only written
// registers are mirrored (the read-back after the write), so the file changes exactly where
// oaprof programmed something and never just because time passed.
class FileMirroredSim final : public mmio::Mmio {
 public:
  FileMirroredSim(std::unique_ptr<mmio::SimGpu> sim, std::string path)
      : sim_(std::move(sim)), path_(std::move(path)) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) {
      const int err = errno;
      if (fd >= 0) ::close(fd);
      throw std::runtime_error(fmt::format("--device sim:{}: cannot open the register file: {}",
                                           path_, std::strerror(err)));
    }
    const bool fresh = st.st_size == 0;
    if (!fresh && st.st_size != mmio::SimGpu::kRegisterFileBytes) {
      ::close(fd);
      throw std::runtime_error(fmt::format(
          "--device sim:{}: the file holds {} bytes, not a register file of {}; remove it or name "
          "another file",
          path_, st.st_size, mmio::SimGpu::kRegisterFileBytes));
    }
    if (fresh && ::ftruncate(fd, mmio::SimGpu::kRegisterFileBytes) != 0) {
      const int err = errno;
      ::close(fd);
      throw std::runtime_error(fmt::format("--device sim:{}: {}", path_, std::strerror(err)));
    }
    void* p = ::mmap(nullptr, mmio::SimGpu::kRegisterFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                     fd, 0);
    const int err = errno;
    ::close(fd);
    if (p == MAP_FAILED) {
      throw std::runtime_error(fmt::format("--device sim:{}: mmap: {}", path_, std::strerror(err)));
    }
    bar_ = std::span(static_cast<std::uint32_t*>(p), mmio::SimGpu::kRegisterFileBytes / 4);
    // All at one instant: read one by one, each read would advance the model (a million of them
    // took most of an oaprofd session's open, ten times more under AddressSanitizer).
    const std::vector<std::uint32_t> own_values = sim_->read_all();
    for (std::size_t i = 0; i < bar_.size(); ++i) {
      const auto offset = static_cast<std::uint32_t>(i * 4);
      const std::uint32_t own = own_values[i];
      if (fresh) {
        bar_[i] = own;
      } else if (bar_[i] != own) {
        // Adopt what an earlier process left, masked registers with a full mask.
        sim_->write32(offset, mmio::reg::is_masked_register(offset)
                                  ? 0xFFFF0000u | (bar_[i] & 0xFFFFu)
                                  : bar_[i]);
      }
    }
  }
  ~FileMirroredSim() override { ::munmap(bar_.data(), bar_.size_bytes()); }
  FileMirroredSim(const FileMirroredSim&) = delete;
  FileMirroredSim& operator=(const FileMirroredSim&) = delete;

  mmio::SimGpu& sim() { return *sim_; }
  std::uint32_t read32(std::uint32_t offset) override { return sim_->read32(offset); }
  void write32(std::uint32_t offset, std::uint32_t value) override {
    sim_->write32(offset, value);
    if (offset / 4 < bar_.size()) bar_[offset / 4] = sim_->read32(offset);
  }
  std::string describe() const override {
    return fmt::format("{} (registers in {})", sim_->describe(), path_);
  }

 private:
  std::unique_ptr<mmio::SimGpu> sim_;
  std::string path_;
  std::span<std::uint32_t> bar_;
};

// The register window of a real device opened for a read-out that maps no BAR (--access perf):
// i915 owns the OA unit there. It only describes the device; any access is a bug, refused loudly.
class UnmappedRegisters final : public mmio::Mmio {
 public:
  UnmappedRegisters(const mmio::PciAddress& addr, const mmio::PciIdentity& id)
      : description_(mmio::pci_device_label(addr, id)) {}
  std::uint32_t read32(std::uint32_t offset) override { refuse("read", offset); }
  void write32(std::uint32_t offset, std::uint32_t) override { refuse("write", offset); }
  std::string describe() const override { return description_; }

 private:
  [[noreturn]] void refuse(const char* what, std::uint32_t offset) const {
    throw std::logic_error(fmt::format(
        "{}: {} of register 0x{:X}, but the device was opened for a read-out that maps no BAR "
        "(--access perf); this is a bug in oaprof, please report it",
        description_, what, offset));
  }
  std::string description_;
};

}  // namespace

Device& Device::operator=(Device&& other) noexcept {
  if (this == &other) return *this;
  forcewake.reset();
  sim_xe.reset();  // its open streams put back the simulated registers they programmed
  mmio.reset();    // before the clock a simulator reads
  clock = std::move(other.clock);
  mmio = std::move(other.mmio);
  sim = std::exchange(other.sim, nullptr);
  sim_xe = std::move(other.sim_xe);
  platform = other.platform;
  facts = std::move(other.facts);
  pci_id = other.pci_id;
  forcewake = std::move(other.forcewake);
  render_node = std::move(other.render_node);
  drm_card_sysfs = std::move(other.drm_card_sysfs);
  perf_period_exponent = other.perf_period_exponent;
  sim_oa_buffer_bytes = other.sim_oa_buffer_bytes;
  pci_address = std::move(other.pci_address);
  sysfs_root = std::move(other.sysfs_root);
  return *this;
}

std::string Device::label() const { return simulated() ? "simulated" : mmio->describe(); }

std::optional<double> read_gpu_freq_mhz(Device& device) {
  // The actual frequency's register moved: GEN6_RPSTAT1 on Gen9/11, GEN12_RPSTAT1 on Gen12,
  // MTL_MIRROR_TARGET_WP1 on Xe-LPG (mmio::reg::frequency_register). Gen7.5/8: not read.
  const mmio::reg::FrequencyRegister* freq = mmio::reg::frequency_register(device.platform.gen);
  if (!device.mmio || freq == nullptr) return std::nullopt;
  const std::uint32_t units = (device.mmio->read32(freq->offset) >> freq->shift) & freq->mask;
  if (units == 0) return std::nullopt;
  return units * 50.0 / 3.0;
}

namespace {

// The device's own topology and timestamp frequency: under xe from xe's queries on its render
// node; else from i915 on its render node when it has one, else from its clock registers
// (mapped, forcewake held) and the platform table.
void read_facts(Device& d, bool registers_mapped) {
  if (d.platform.driver == oa::KernelDriver::kXe) {
    std::unique_ptr<XeQuery> xe;
    std::string why;
    try {
      xe = open_xe_query(resolve_render_node(d));
    } catch (const std::exception& e) {
      why = e.what();
    }
    d.facts = read_xe_device_facts(d.platform, xe.get(), why);
    d.platform = oa::apply_facts(d.platform, d.facts);
    return;
  }
  std::unique_ptr<I915Query> i915;
  std::string why;
  try {
    i915 = open_i915_query(resolve_render_node(d));
  } catch (const std::exception& e) {
    why = e.what();
  }
  d.facts =
      read_device_facts(d.platform, i915.get(), why, registers_mapped ? d.mmio.get() : nullptr);
  d.platform = oa::apply_facts(d.platform, d.facts);
}

}  // namespace

Device make_sim_device(std::unique_ptr<mmio::Clock> clock, const mmio::SimConfig& config) {
  Device d;
  auto sim = std::make_unique<mmio::SimGpu>(config, *clock);
  d.sim = sim.get();
  d.pci_id = mmio::sim_pci_id(config.platform);
  d.clock = std::move(clock);
  d.mmio = std::move(sim);
  if (config.platform.driver == oa::KernelDriver::kXe) {
    // xe fuses whole Xe-cores: --sim-eus keeps as many as it fills.
    const int per_core = std::max(config.platform.eus / std::max(config.platform.subslices, 1), 1);
    SimXeOptions xe_options{.gpu_mhz = config.freq_mhz,
                            .xe_cores = std::max(mmio::simulated_eus(config) / per_core, 1),
                            .rejected_config_uuid = config.faults.rejected_config_uuid};
    d.sim_xe = std::make_unique<SimXeDevice>(config.platform, *d.clock, xe_options, d.sim);
    // Asked as a real xe is: its OA units and GT topology queries.
    const auto query = make_sim_xe_query(*d.sim_xe);
    d.facts = read_xe_device_facts(config.platform, query.get(), "");
    d.platform = oa::apply_facts(config.platform, d.facts);
    return d;
  }
  std::unique_ptr<I915Query> i915;
  if (config.i915) i915 = make_sim_i915_query(*d.sim);
  d.facts = read_device_facts(config.platform, i915.get(),
                              "the simulated device has no i915 (--sim-no-i915)", d.mmio.get());
  d.platform = oa::apply_facts(config.platform, d.facts);
  return d;
}

std::optional<oa::Platform> platform_of_spec(const DeviceOptions& options) {
  if (options.spec.simulated()) return options.sim.platform;
  const auto found = mmio::read_pci_identity(options.sysfs_root, options.spec.address());
  return found ? oa::platform_for_pci_id(found->device) : std::nullopt;
}

Device open_device(const DeviceOptions& options) {
  Device d;
  if (options.spec.simulated()) {
    d = make_sim_device(std::make_unique<mmio::SteadyClock>(), options.sim);
    if (options.spec.kind() == DeviceSpec::Kind::kSimFile) {
      const std::string path = options.spec.file().string();
      // make_sim_device made the SimGpu the window; hand it to the mirror instead.
      std::unique_ptr<mmio::SimGpu> sim(d.sim);
      (void)d.mmio.release();
      auto mirrored = std::make_unique<FileMirroredSim>(std::move(sim), path);
      d.sim = &mirrored->sim();
      d.mmio = std::move(mirrored);
    }
    if (options.wrap_mmio) d.mmio = options.wrap_mmio(std::move(d.mmio));
    mmio::ForcewakeOptions fw = options.forcewake;
    if (fw.mode != mmio::ForcewakeMode::kNone) fw.mode = mmio::ForcewakeMode::kRegisters;
    // Under xe, xe holds forcewake for its stream: oaprof touches no register (as on hardware).
    if (d.platform.driver == oa::KernelDriver::kXe) fw.mode = mmio::ForcewakeMode::kNone;
    d.forcewake = mmio::Forcewake::acquire(*d.mmio, options.sim.platform, fw);
    d.perf_period_exponent = period_exponent_for(options.perf_period_exponent, d.platform);
    d.sim_oa_buffer_bytes = options.sim_oa_buffer_bytes;
    return d;
  }
  const mmio::PciAddress addr = options.spec.address();
  const bool xe_bound = mmio::bound_driver(options.sysfs_root, addr) == "xe";
  if (xe_bound) {
    // Identified from sysfs first: the BAR is never mapped under xe.
    refuse_xe(addr, mmio::read_pci_identity(options.sysfs_root, addr), options.map_registers);
  }
  mmio::PciIdentity id;
  if (options.map_registers) {
    auto bar = std::make_unique<mmio::PciBar>(addr, options.sysfs_root);
    id = bar->identity();
    d.mmio = std::move(bar);
  } else {
    const auto found = mmio::read_pci_identity(options.sysfs_root, addr);
    if (!found) {
      throw std::runtime_error(fmt::format(
          "no PCI device at {} ({} is missing or unreadable); find the GPU with `lspci -D -d "
          "8086::0300` and pass --pci BDF, or use --device sim",
          addr.str(), mmio::pci_device_dir(options.sysfs_root, addr).string()));
    }
    id = *found;
    mmio::check_intel_display(addr, id);
    d.mmio = std::make_unique<UnmappedRegisters>(addr, id);
  }
  const auto platform = oa::platform_for_pci_id(id.device);
  if (!platform) throw std::runtime_error(unknown_device_message(addr, id.device));
  d.platform = *platform;
  // Tiger Lake to Meteor Lake may be bound to xe (xe.force_probe): read through xe then.
  if (xe_bound) d.platform.driver = oa::KernelDriver::kXe;
  d.pci_id = id.device;
  if (options.wrap_mmio) d.mmio = options.wrap_mmio(std::move(d.mmio));
  mmio::ForcewakeOptions fw = options.forcewake;
  if (!options.map_registers) fw.mode = mmio::ForcewakeMode::kNone;  // i915 holds it for perf
  fw.dri_minor = mmio::find_drm_nodes(options.sysfs_root, addr).card_minor;  // not always dri/0
  d.forcewake = mmio::Forcewake::acquire(*d.mmio, *platform, fw);
  d.render_node = options.render_node;
  d.drm_card_sysfs = options.drm_card_sysfs;
  d.perf_period_exponent = period_exponent_for(options.perf_period_exponent, d.platform);
  d.pci_address = addr.str();
  d.sysfs_root = options.sysfs_root;
  read_facts(d, options.map_registers);
  return d;
}

namespace {

// <sysfs>/bus/pci/devices/<BDF>/drm, where the minors of `device` are; throws naming the device
// and `what` it lacks when that minor is not there.
int drm_minor_of(const Device& device, std::optional<int> mmio::DrmNodes::*minor,
                 std::string_view what, std::string_view option) {
  const mmio::PciAddress addr = mmio::parse_pci_address(device.pci_address);
  const std::optional<int> found = mmio::find_drm_nodes(device.sysfs_root, addr).*minor;
  if (!found) {
    throw std::runtime_error(fmt::format(
        "{} has no DRM {} in {}: is i915 bound to it? (`oaprof doctor` checks), or name one with "
        "{}",
        device.pci_address, what, (mmio::pci_device_dir(device.sysfs_root, addr) / "drm").string(),
        option));
  }
  return *found;
}

}  // namespace

std::string resolve_render_node(const Device& device) {
  if (device.render_node != "auto" || device.pci_address.empty()) return device.render_node;
  return fmt::format("/dev/dri/renderD{}", drm_minor_of(device, &mmio::DrmNodes::render_minor,
                                                        "render node", "--render-node"));
}

std::string resolve_card_sysfs(const Device& device) {
  if (device.drm_card_sysfs != "auto" || device.pci_address.empty()) return device.drm_card_sysfs;
  const int card = drm_minor_of(device, &mmio::DrmNodes::card_minor, "card", "--drm-card");
  return (mmio::pci_device_dir(device.sysfs_root, mmio::parse_pci_address(device.pci_address)) /
          "drm" / fmt::format("card{}", card))
      .string();
}

}  // namespace oaprof::gpu
