// `oaprof platforms [--json] [--pci-id ID]`: every PCI id of oaprof's platform table with what
// oaprof assumes about it (generation, GT, EUs, clocks, IGT metric file, kernel driver), so users,
// `doctor` and tests read one list. The table and its upstream sources: src/oa/platform.cc.
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "oa/metric_paths.h"
#include "oa/platform.h"
#include "report/json_text.h"
#include "tools/oaprof/commands.h"

namespace oaprof::tools {
namespace {

struct PlatformsOptions {
  bool json = false;
  std::string pci_id;
};

bool read_from_device(const oa::Platform& p) {
  return p.timestamp_rule == oa::TimestampRule::kCrystalCtc;
}

std::string timestamp_text(const oa::Platform& p) {
  if (read_from_device(p)) return "read from the device";
  return fmt::format("{:g} MHz", p.timestamp_hz / 1e6);
}

std::string driver_text(const oa::Platform& p) {
  const std::string_view driver = oa::kernel_driver_name(p.driver);
  return p.force_probe ? fmt::format("{} (force_probe)", driver) : std::string(driver);
}

nlohmann::json to_json(const oa::PciId& id) {
  const oa::Platform& p = *id.platform;
  nlohmann::json j{
      {"pci_id", fmt::format("0x{:04x}", id.device)},
      {"generation", oa::generation_name(p.gen)},
      {"codename", p.codename},
      {"gt", oa::gt_label(p)},
      {"slices", p.slices},
      {"subslices", p.subslices},
      {"subslices_are_dual", oa::is_gen12_family(p.gen)},
      {"eus", p.eus},
      {"counts_from", id.counts_from_mesa ? "mesa" : "assumed"},
      {"threads_per_eu", p.threads_per_eu},
      {"fp64", p.has_fp64},
      {"timestamp_rule", oa::timestamp_rule_name(p.timestamp_rule)},
      {"timestamp", timestamp_text(p)},
      {"timestamp_default_hz", p.timestamp_hz},
      {"max_freq_mhz", p.max_freq_mhz},
      {"min_freq_mhz", p.min_freq_mhz},
      {"kernel_driver", oa::kernel_driver_name(p.driver)},
      {"force_probe", p.force_probe},
      {"supported", true},
  };
  j["timestamp_hz"] =
      read_from_device(p) ? nlohmann::json(nullptr) : nlohmann::json(p.timestamp_hz);
  j["igt_metric_file"] = p.metrics_file.empty()
                             ? nlohmann::json(nullptr)
                             : nlohmann::json(oa::metric_file_name(p.metrics_file));
  j["product"] = id.product.empty() ? nlohmann::json(nullptr) : nlohmann::json(id.product);
  j["igt_metric_file_inferred"] = id.metric_file_inferred.empty()
                                      ? nlohmann::json(nullptr)
                                      : nlohmann::json(id.metric_file_inferred);
  return j;
}

// A known id oaprof does not profile: what it is, what binds it, and why it is not supported.
nlohmann::json to_json(const oa::UnsupportedPciId& id) {
  const oa::UnsupportedPlatform& p = *id.platform;
  return nlohmann::json{{"pci_id", fmt::format("0x{:04x}", id.device)},
                        {"codename", p.codename},
                        {"name", p.name},
                        {"supported", false},
                        {"kernel_id_list", p.kernel_macro},
                        {"kernel_driver", p.driver},
                        {"oa", p.oa},
                        {"reason", p.reason}};
}

// "oa-mtlgt2.xml~" where the file is oaprof's inference, not IGT's (the table's footer says so).
std::string metric_file_cell(const oa::PciId& id) {
  const oa::Platform& p = *id.platform;
  if (p.metrics_file.empty()) return "-";
  const std::string file = oa::metric_file_name(p.metrics_file);
  return id.metric_file_inferred.empty() ? file : file + "~";
}

std::string table_row(const oa::PciId& id) {
  const oa::Platform& p = *id.platform;
  const char* mark = id.counts_from_mesa ? "" : "*";
  return fmt::format(
      "0x{:04X}  {:<6}  {:<4}  {:<5}  {:>3}{:<1} {:>4}{:<1} {:>6}  {:<4}  {:<20}  "
      "{:>5}  {:<14}  {}\n",
      id.device, oa::generation_name(p.gen), p.codename, oa::gt_label(p), p.eus, mark, p.subslices,
      mark, p.threads_per_eu, p.has_fp64 ? "yes" : "no", timestamp_text(p), p.max_freq_mhz,
      metric_file_cell(id), driver_text(p));
}

// The known-but-unsupported ids, one block per platform (the table keeps a platform's ids
// together, and they share the reason).
void print_unsupported_table() {
  std::cout << "\nKnown, not supported (the kernel lists them; oaprof does not profile them):\n";
  const auto ids = oa::known_unsupported_pci_ids();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const oa::UnsupportedPlatform* p = ids[i].platform;
    if (i == 0 || ids[i - 1].platform != p) {
      std::cout << fmt::format("{:<4}  {}: {}\n      ids:", p->codename, p->name, p->reason);
    }
    std::cout << fmt::format(" 0x{:04X}", ids[i].device);
    if (i + 1 == ids.size() || ids[i + 1].platform != p) std::cout << "\n";
  }
}

void print_table() {
  std::cout << fmt::format(
      "{:<6}  {:<6}  {:<4}  {:<5}  {:>4} {:>5} {:>6}  {:<4}  {:<20}  {:>5}  "
      "{:<14}  {}\n",
      "PCI id", "gen", "name", "GT", "EUs", "subsl", "thr/EU", "FP64", "timestamp", "max",
      "IGT metrics", "driver");
  for (const oa::PciId& id : oa::known_pci_ids()) std::cout << table_row(id);
  std::cout
      << "EUs and subslices (dual subslices on Gen12) are Mesa's per id; * marks an id Mesa\n"
         "gives no count for, whose counts are assumed. On a real device i915's topology query\n"
         "gives the fused truth. max: nominal maximum frequency in MHz (a model default).\n"
         "~ marks a metric file that is oaprof's inference: upstream IGT maps the id to\n"
         "none (`oaprof platforms --pci-id ID` says why).\n";
  print_unsupported_table();
  std::cout << "Sources: src/oa/platform.cc, docs/hardware-access.md.\n";
}

std::string metric_file_text(const oa::PciId& id) {
  const oa::Platform& p = *id.platform;
  if (p.metrics_file.empty()) return "none (IGT describes no metric set; use --metric-set Builtin)";
  const std::string file = oa::metric_file_name(p.metrics_file);
  if (id.metric_file_inferred.empty()) return file;
  return fmt::format("{} ({})", file, id.metric_file_inferred);
}

void print_one(const oa::PciId& id) {
  const oa::Platform& p = *id.platform;
  if (!id.product.empty()) std::cout << fmt::format("product:           {}\n", id.product);
  std::cout << fmt::format(
      "PCI id:            8086:{:04x}\n"
      "generation:        {}\n"
      "platform:          {} {}\n"
      "EUs:               {} in {} slice(s), {} {}subslices{}\n"
      "threads per EU:    {}\n"
      "FP64:              {}\n"
      "timestamp:         {}{}\n"
      "frequency:         {} to {} MHz (nominal defaults)\n"
      "IGT metric file:   {}\n"
      "kernel driver:     {}\n",
      id.device, oa::generation_name(p.gen), p.codename, oa::gt_label(p), p.eus, p.slices,
      p.subslices, oa::is_gen12_family(p.gen) ? "dual " : "",
      id.counts_from_mesa ? " (Mesa)" : " (assumed: Mesa gives no count for this id)",
      p.threads_per_eu, p.has_fp64 ? "yes" : "no (no FP64 hardware)", timestamp_text(p),
      read_from_device(p) ? fmt::format(" ({:g} MHz until read)", p.timestamp_hz / 1e6) : "",
      p.min_freq_mhz, p.max_freq_mhz, metric_file_text(id), driver_text(p));
}

void print_one(const oa::UnsupportedPciId& id) {
  const oa::UnsupportedPlatform& p = *id.platform;
  std::cout << fmt::format(
      "PCI id:            8086:{:04x}\n"
      "platform:          {} ({})\n"
      "supported:         no: {}\n"
      "kernel id list:    {} (include/drm/intel/pciids.h)\n"
      "kernel driver:     {}\n"
      "OA:                {}\n",
      id.device, p.name, p.codename, p.reason, p.kernel_macro, p.driver, p.oa);
}

template <typename Id>
int show(const Id& id, bool json) {
  if (json) {
    std::cout << report::json_text(to_json(id), 1) << "\n";
  } else {
    print_one(id);
  }
  return 0;
}

// A supported id, a known unsupported one (exit 0, with the reason), or an unknown one (exit 2).
int show_id(std::uint16_t device, bool json) {
  if (const oa::PciId* id = oa::find_pci_id(device)) return show(*id, json);
  if (const oa::UnsupportedPciId* id = oa::find_unsupported_pci_id(device)) return show(*id, json);
  std::cerr << fmt::format(
      "oaprof platforms: PCI id 8086:{:04x} is not in oaprof's platform table (Haswell through "
      "Panther Lake) nor among the ids it knows it does not support; `oaprof platforms` lists "
      "every id it knows\n",
      device);
  return base::kExitUsage;
}

int run_platforms(const PlatformsOptions& opt) {
  if (opt.pci_id.empty()) {
    if (opt.json) {
      nlohmann::json all = nlohmann::json::array();
      for (const oa::PciId& id : oa::known_pci_ids()) all.push_back(to_json(id));
      for (const auto& id : oa::known_unsupported_pci_ids()) all.push_back(to_json(id));
      std::cout << report::json_text(all, 1) << "\n";
    } else {
      print_table();
    }
    return 0;
  }
  const std::optional<std::uint16_t> device = oa::parse_pci_device_id(opt.pci_id);
  if (!device) {
    std::cerr << fmt::format(
        "oaprof platforms: '{}' is not a PCI device id; give it in hexadecimal, e.g. 0x3E92 or "
        "8086:3e92\n",
        opt.pci_id);
    return base::kExitUsage;
  }
  return show_id(*device, opt.json);
}

std::pair<CLI::App*, Action> add_platforms_command(CLI::App& app) {
  auto opt = std::make_shared<PlatformsOptions>();
  CLI::App* sub = app.add_subcommand(
      "platforms", "every Intel GPU PCI id oaprof knows (docs/hardware-access.md)");
  sub->add_option("--pci-id", opt->pci_id,
                  "show one id, e.g. 0x3E92 (an unsupported one says why)");
  sub->add_flag("--json", opt->json, "write JSON (an array, or one object with --pci-id)");
  sub->footer(
      "Exit status:\n  0  listed (a known id oaprof does not support included)\n  2  bad options, "
      "or a --pci-id that is unknown");
  return {sub, [opt] { return run_platforms(*opt); }};
}

}  // namespace

OAPROF_REGISTER_SUBCOMMAND(platforms, add_platforms_command);

}  // namespace oaprof::tools
