#include "mmio/forcewake.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "mmio/registers.h"

namespace oaprof::mmio {
namespace {

bool is_chv(const oa::Platform& platform) { return platform.codename == "CHV"; }

}  // namespace

std::span<const reg::ForcewakeDomain> all_forcewake_domains(const oa::Platform& platform) {
  switch (platform.gen) {
    case oa::Generation::kGen7_5:
      return reg::kForcewakeDomainsHswBdw;
    case oa::Generation::kGen8:
      return is_chv(platform) ? std::span<const reg::ForcewakeDomain>(reg::kForcewakeDomainsChv)
                              : std::span<const reg::ForcewakeDomain>(reg::kForcewakeDomainsHswBdw);
    case oa::Generation::kGen9:
      return reg::kForcewakeDomainsGen9;
    case oa::Generation::kGen11:
    case oa::Generation::kGen12:
    case oa::Generation::kXeHpg:  // intel_uncore.c gives GRAPHICS_VER 12 below 12.70 these
      return reg::kForcewakeDomainsGen11;
    case oa::Generation::kXeLpg:
      return reg::kForcewakeDomainsXeLpg;
    case oa::Generation::kXe2:
      return {};  // xe owns the part: oaprof wakes no domain of it
  }
  return {};
}

std::span<const reg::ForcewakeDomain> oa_forcewake_domains(const oa::Platform& platform) {
  const bool gen9_on =
      platform.gen == oa::Generation::kGen9 || platform.gen == oa::Generation::kGen11 ||
      platform.gen == oa::Generation::kGen12 || platform.gen == oa::Generation::kXeHpg;
  // Xe-LPG: its two domains are exactly the OA registers' (GT with its moved ack, render).
  return gen9_on ? std::span<const reg::ForcewakeDomain>(reg::kOaForcewakeGen9)
                 : all_forcewake_domains(platform);
}

ForcewakeMode parse_forcewake_mode(const std::string& text) {
  if (text == "auto") return ForcewakeMode::kAuto;
  if (text == "debugfs") return ForcewakeMode::kDebugfs;
  if (text == "registers") return ForcewakeMode::kRegisters;
  if (text == "none") return ForcewakeMode::kNone;
  throw std::invalid_argument(
      fmt::format("unknown forcewake mode '{}'; valid: auto, debugfs, registers, none", text));
}

Forcewake::Forcewake(std::string method, int fd, Mmio* mmio)
    : method_(std::move(method)), fd_(fd), mmio_(mmio) {
  if (mmio_ != nullptr) saved_ = std::make_unique<SavedRegisters>(*mmio_);
}

Forcewake::~Forcewake() { release(); }

void Forcewake::release() {
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
  signal_guard_.reset();
  if (saved_) saved_->restore();
}

std::unique_ptr<Forcewake> Forcewake::take_registers(Mmio& mmio, const oa::Platform& platform,
                                                     const ForcewakeOptions& options) {
  std::unique_ptr<Forcewake> fw(new Forcewake("registers", -1, &mmio));
  const auto domains = oa_forcewake_domains(platform);
  for (const reg::ForcewakeDomain& d : domains) {
    fw->saved_->set_owned_bits(d.request, reg::kForcewakeOaprofBit);
  }
  for (const reg::ForcewakeDomain& d : domains) {
    const auto deadline = std::chrono::steady_clock::now() + options.ack_timeout;
    while ((mmio.read32(d.ack) & reg::kForcewakeOaprofBit) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        throw std::runtime_error(fmt::format(
            "{}: the {} power well did not acknowledge forcewake (request 0x{:X}, ack register "
            "0x{:X}, {}) within {} ms; is i915 loaded and the GPU not in reset? Try --forcewake "
            "debugfs as root with debugfs mounted",
            mmio.describe(), d.name, d.request, d.ack, oa::generation_name(platform.gen),
            options.ack_timeout.count()));
      }
    }
  }
  fw->signal_guard_ = std::make_unique<SignalRestoreGuard>(*fw->saved_);
  return fw;
}

std::unique_ptr<Forcewake> Forcewake::acquire(Mmio& mmio, const oa::Platform& platform,
                                              const ForcewakeOptions& options) {
  if (options.mode == ForcewakeMode::kNone) {
    return std::unique_ptr<Forcewake>(new Forcewake("none", -1, nullptr));
  }
  if (options.mode == ForcewakeMode::kRegisters) return take_registers(mmio, platform, options);
  if (!options.dri_minor) {
    if (options.mode == ForcewakeMode::kAuto) return take_registers(mmio, platform, options);
    throw std::runtime_error(fmt::format(
        "{}: cannot hold forcewake through debugfs: the device has no DRM card in sysfs (is i915 "
        "bound to it? see `oaprof doctor`), so no dri/N/i915_forcewake_user is its own; use "
        "--forcewake registers",
        mmio.describe()));
  }
  const std::string path =
      fmt::format("{}/dri/{}/i915_forcewake_user", options.debugfs_root, *options.dri_minor);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) return std::unique_ptr<Forcewake>(new Forcewake("debugfs " + path, fd, nullptr));
  const int err = errno;
  if (options.mode == ForcewakeMode::kDebugfs) {
    throw std::runtime_error(fmt::format(
        "cannot hold forcewake through {}: {}; run as root with debugfs mounted (mount -t "
        "debugfs none /sys/kernel/debug), or use --forcewake registers",
        path, std::strerror(err)));
  }
  return take_registers(mmio, platform, options);
}

}  // namespace oaprof::mmio
