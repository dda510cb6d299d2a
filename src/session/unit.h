// Taking the OA unit, written once for `sudo oaprof` and oaprofd: the session lock, the restore of
// a dead holder's journal, a new journal, and the device with every register write journaled.
// Whoever holds a Unit may program the OA unit; nobody else may, on this machine, until it goes.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "gpu/device.h"
#include "power/energy_registry.h"
#include "session/register_journal.h"
#include "session/session_lock.h"

namespace oaprof::session {

// Another process holds the OA unit. holder() is what it wrote into the lock.
class UnitBusy : public std::runtime_error {
 public:
  explicit UnitBusy(std::string holder)
      : std::runtime_error("busy: held by " + holder), holder_(std::move(holder)) {}
  const std::string& holder() const { return holder_; }

 private:
  std::string holder_;
};

// The lock file and the journal's state file of one state directory (/run/oaprof by default).
struct UnitFiles {
  std::filesystem::path lock;
  std::filesystem::path state;
  static UnitFiles in(const std::filesystem::path& state_dir) {
    return {state_dir / "session.lock", state_dir / "state"};
  }
};

// A hold on the OA unit. Members go in reverse: the device (forcewake let go first), then the
// journal (its state file), then the lock.
struct Unit {
  std::optional<SessionLock> lock;
  std::unique_ptr<SessionJournal> journal;
  gpu::Device device;

  // Every register the journal saw is back (or none was written): its state file may go.
  void mark_restored() {
    if (journal) journal->mark_restored();
  }
};

// Takes the unit for `holder` ("uid U, pid P since T"): the lock without waiting (UnitBusy when
// another process has it), then the journal a dead holder left (what was restored goes to `note`),
// a new journal, and the device `device` names with its register window journaled. Throws what
// opening the device throws (std::invalid_argument for a bad request, std::runtime_error else).
Unit take_unit(const UnitFiles& files, const std::string& holder, gpu::DeviceOptions device,
               const std::function<void(const std::string&)>& note);

// The first half of take_unit: the lock (UnitBusy when another process has it), a dead holder's
// journal restored, and a new journal, without the device yet. oaprofd's selftest reserves the
// unit as it answers the request, then opens the device on a thread of its own.
Unit reserve_unit(const UnitFiles& files, const std::string& holder,
                  const gpu::DeviceOptions& device,
                  const std::function<void(const std::string&)>& note);
// The second half: `device` opened with its register window journaled by `unit`'s journal. A
// wrap_mmio the caller set wraps the journaled window, so every write it lets through is
// journaled. `unit` must outlive the device.
gpu::Device open_journaled(const Unit& unit, gpu::DeviceOptions device);

// Opens the device alone, with no lock and no journal: the in-process simulator, which no other
// process can reach.
Unit open_private_unit(const gpu::DeviceOptions& device);

// The energy backend `requested` means on a device: `auto` on a simulated GPU is its simulated
// energy, driven by the simulated GPU's activity: the card's hwmon (sim-hwmon) for a discrete
// part, the RAPL tree (sim) for an integrated one; anything else is itself.
std::string energy_backend_for(std::string_view requested, bool device_simulated,
                               bool device_discrete);

// The device as the energy choice sees it (power/energy_registry.h): simulated or not, discrete
// or integrated (oa::Platform::discrete), and its label.
power::EnergyDevice energy_device(const gpu::Device& device);

// `roots` pointed at the device: its PCI address (where hwmon looks), its placement (what "auto"
// tries) and, simulated, the driver whose hwmon sim-hwmon models and the simulated GPU's
// per-event energy model where it has one (the energy source must not outlive `device`).
void aim_energy_roots(power::EnergyRoots& roots, const gpu::Device& device);

}  // namespace oaprof::session
