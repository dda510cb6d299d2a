#include "daemon/energy_gate.h"

namespace oaprof::daemon {

power::EnergyReading EnergyGate::reading(power::EnergySource& source, std::uint64_t now_ns) {
  if (last_ && now_ns - last_at_ns_ < min_interval_ns_) {
    ++repeated_;
    return *last_;
  }
  last_ = source.read();
  last_at_ns_ = now_ns;
  ++fresh_;
  return *last_;
}

}  // namespace oaprof::daemon
