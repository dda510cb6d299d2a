// The PAPI backend of a build with PAPI.
#include "power/papi_source.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <papi.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "power/timed_reading.h"
#include "power/unique_domains.h"

namespace oaprof::power {
namespace {

std::string papi_error(int code) {
  const char* text = PAPI_strerror(code);
  return text ? text : fmt::format("PAPI error {}", code);
}

class PapiSource final : public EnergySource {
 public:
  PapiSource(int component, const std::filesystem::path& powercap_dir) {
    int code = PAPI_NATIVE_MASK;
    if (PAPI_enum_cmp_event(&code, PAPI_ENUM_FIRST, component) == PAPI_OK) {
      do {
        char name[PAPI_MAX_STR_LEN] = {};
        if (PAPI_event_code_to_name(code, name) != PAPI_OK) continue;
        if (const auto ev = papi_energy_event(name, powercap_dir)) {
          names_.push_back(name);
          events_.push_back(*ev);
        }
      } while (PAPI_enum_cmp_event(&code, PAPI_ENUM_EVENTS, component) == PAPI_OK);
    }
    if (events_.empty()) {
      throw std::runtime_error(
          "not available: PAPI's energy component lists no energy event of a known plane");
    }
    check(PAPI_create_eventset(&event_set_), "PAPI_create_eventset");
    for (const std::string& n : names_) {
      check(PAPI_add_named_event(event_set_, n.c_str()), "PAPI_add_named_event " + n);
    }
    check(PAPI_start(event_set_), "PAPI_start");
    values_.assign(events_.size(), 0);
  }
  ~PapiSource() override {
    if (event_set_ == PAPI_NULL) return;
    PAPI_stop(event_set_, values_.data());
    PAPI_cleanup_eventset(event_set_);
    PAPI_destroy_eventset(&event_set_);
  }
  PapiSource(const PapiSource&) = delete;
  PapiSource& operator=(const PapiSource&) = delete;

  std::string_view name() const override { return "papi"; }
  std::vector<Domain> domains() const override { return detail::unique_domains(events_); }
  // PAPI_read gives each event's energy since PAPI_start, its components unwrapping the counters.
  EnergyReading read() override {
    return timed_reading(monotonic_ns, [this] {
      EnergyReading r;
      check(PAPI_read(event_set_, values_.data()), "PAPI_read");
      std::map<Domain, long double> uj;
      for (std::size_t i = 0; i < events_.size(); ++i) {
        const long long v = values_[i] < 0 ? 0 : values_[i];
        uj[events_[i].domain] += static_cast<long double>(v) * events_[i].uj_per_unit;
      }
      for (const auto& [domain, v] : uj) r.energy_uj[domain] = static_cast<std::uint64_t>(v);
      return r;
    });
  }

 private:
  void check(int rc, const std::string& what) {
    if (rc != PAPI_OK) {
      if (event_set_ != PAPI_NULL) {
        PAPI_cleanup_eventset(event_set_);
        PAPI_destroy_eventset(&event_set_);
      }
      throw std::runtime_error(fmt::format("PAPI: {} failed: {}", what, papi_error(rc)));
    }
  }
  std::vector<std::string> names_;
  std::vector<PapiEnergyEvent> events_;
  std::vector<long long> values_;
  int event_set_ = PAPI_NULL;
};

}  // namespace

bool papi_compiled_in() { return true; }

std::unique_ptr<EnergySource> make_papi_source(const std::filesystem::path& powercap_dir) {
  if (PAPI_is_initialized() == PAPI_NOT_INITED) {
    const int rc = PAPI_library_init(PAPI_VER_CURRENT);
    if (rc != PAPI_VER_CURRENT) {
      throw std::runtime_error(fmt::format("not available: PAPI_library_init failed: {}",
                                           rc > 0 ? "version mismatch" : papi_error(rc)));
    }
  }
  std::vector<std::string> disabled;
  // rapl first: it has the PP0/PP1/DRAM planes directly; powercap needs the sysfs names.
  for (const char* wanted : {"rapl", "powercap"}) {
    for (int cid = 0; cid < PAPI_num_components(); ++cid) {
      const PAPI_component_info_t* info = PAPI_get_component_info(cid);
      if (!info || std::string(info->name) != wanted) continue;
      if (info->disabled) {
        disabled.push_back(fmt::format("{} disabled: {}", wanted, info->disabled_reason));
        continue;
      }
      try {
        return std::make_unique<PapiSource>(cid, powercap_dir);
      } catch (const std::runtime_error& e) {
        disabled.push_back(fmt::format("{}: {}", wanted, e.what()));
      }
    }
  }
  if (disabled.empty()) {
    throw std::runtime_error(
        "not available: PAPI built without rapl/powercap components (Debian's libpapi has "
        "neither); use --energy powercap, perf or msr");
  }
  throw std::runtime_error(fmt::format(
      "not available: PAPI's energy components cannot be used ({})", fmt::join(disabled, "; ")));
}

}  // namespace oaprof::power
