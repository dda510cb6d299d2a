// The platform table against tests/oa/data/pci_ids_reference.tsv, a fact table typed from the
// kernel's id lists, Mesa's device table and IGT's metric-file choice (each with the commit read,
// in the file's header): every id must agree, and the two must list the same ids.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "oa/platform.h"

namespace oaprof::oa {
namespace {

struct Reference {
  std::uint16_t id = 0;
  std::string kernel_macro;
  std::string gen;
  std::optional<int> kernel_gt;
  std::string mesa_info;
  std::optional<int> mesa_eus, mesa_subslices, mesa_threads, mesa_fp64;
  std::string igt_file;
};

std::optional<int> number_or_dash(const std::string& text) {
  if (text == "-") return std::nullopt;
  return std::stoi(text);
}

// The data lines of a reference table (no blank lines, no '#' comments).
std::vector<std::string> data_lines(const char* path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  }
  return lines;
}

std::vector<Reference> read_reference() {
  std::vector<Reference> rows;
  for (const std::string& line : data_lines(OAPROF_PCI_REFERENCE)) {
    std::istringstream fields(line);
    std::string id, gt, eus, subslices, threads, fp64;
    Reference r;
    fields >> id >> r.kernel_macro >> r.gen >> gt >> r.mesa_info >> eus >> subslices >> threads >>
        fp64 >> r.igt_file;
    if (!fields) throw std::runtime_error("short line in the reference: " + line);
    r.id = static_cast<std::uint16_t>(std::stoul(id, nullptr, 16));
    r.kernel_gt = number_or_dash(gt);
    r.mesa_eus = number_or_dash(eus);
    r.mesa_subslices = number_or_dash(subslices);
    r.mesa_threads = number_or_dash(threads);
    r.mesa_fp64 = number_or_dash(fp64);
    rows.push_back(r);
  }
  return rows;
}

// INTEL_ADLS_IDS -> "ADL", INTEL_AML_CFL_GT2_IDS -> "AML": the family the kernel's macro names,
// in oaprof's codenames (Alder Lake S, P and N are all "ADL", Raptor Lake S, U and P "RPL").
std::string family_of(const std::string& macro) {
  const std::string rest = macro.substr(std::string("INTEL_").size());
  const std::string family = rest.substr(0, rest.find('_'));
  if (family.starts_with("ADL")) return "ADL";
  if (family.starts_with("RPL")) return "RPL";  // INTEL_RPLS_IDS, INTEL_RPLU_IDS, INTEL_RPLP_IDS
  if (family == "ATS") return "ATS-M";          // INTEL_ATS_M150_IDS, INTEL_ATS_M75_IDS
  return family;
}

Generation generation_of(const std::string& gen) {
  static const std::map<std::string, Generation> kGens = {
      {"7.5", Generation::kGen7_5},  {"8", Generation::kGen8},   {"9", Generation::kGen9},
      {"11", Generation::kGen11},    {"12", Generation::kGen12}, {"12.55", Generation::kXeHpg},
      {"12.70", Generation::kXeLpg}, {"20", Generation::kXe2},   {"30", Generation::kXe2}};
  return kGens.at(gen);
}

const PciId* find_id(std::uint16_t id) {
  for (const PciId& p : known_pci_ids()) {
    if (p.device == id) return &p;
  }
  return nullptr;
}

TEST(PlatformReferenceTest, EveryIdAgreesWithKernelMesaAndIgt) {
  const std::vector<Reference> rows = read_reference();
  ASSERT_GT(rows.size(), 250u) << OAPROF_PCI_REFERENCE;
  for (const Reference& r : rows) {
    SCOPED_TRACE(::testing::Message() << "PCI id 0x" << std::hex << r.id << " (" << r.kernel_macro
                                      << ", Mesa " << r.mesa_info << ")");
    const PciId* entry = find_id(r.id);
    ASSERT_NE(entry, nullptr) << "the kernel lists it, oaprof does not";
    const Platform& p = *entry->platform;
    EXPECT_EQ(p.codename, family_of(r.kernel_macro));
    EXPECT_EQ(p.gen, generation_of(r.gen));
    if (r.kernel_gt) {
      EXPECT_EQ(p.gt, *r.kernel_gt);
    }
    EXPECT_EQ(p.metrics_file, r.igt_file == "-" ? "" : r.igt_file);
    EXPECT_EQ(entry->counts_from_mesa, r.mesa_eus.has_value());
    // Mesa's Xe-LPG entries give threads and FP64 but no EU count.
    if (r.mesa_threads) {
      EXPECT_EQ(p.threads_per_eu, *r.mesa_threads);
    }
    if (r.mesa_fp64) {
      EXPECT_EQ(p.has_fp64, *r.mesa_fp64 == 1);
    }
    if (!r.mesa_eus) continue;
    EXPECT_EQ(p.eus, *r.mesa_eus);
    EXPECT_EQ(p.subslices, *r.mesa_subslices);
  }
}

TEST(PlatformReferenceTest, EveryShippedIdIsInTheReference) {
  std::set<std::uint16_t> reference;
  for (const Reference& r : read_reference()) {
    EXPECT_TRUE(reference.insert(r.id).second) << "0x" << std::hex << r.id << " listed twice";
  }
  for (const PciId& id : known_pci_ids()) {
    EXPECT_TRUE(reference.contains(id.device))
        << "oaprof ships 0x" << std::hex << id.device << ", which no upstream list it was checked "
        << "against has";
  }
  EXPECT_EQ(reference.size(), known_pci_ids().size());
}

struct UnsupportedReference {
  std::uint16_t id = 0;
  std::string kernel_macro;
  std::string codename;
};

std::vector<UnsupportedReference> read_unsupported_reference() {
  std::vector<UnsupportedReference> rows;
  for (const std::string& line : data_lines(OAPROF_PCI_UNSUPPORTED)) {
    std::istringstream fields(line);
    std::string id;
    UnsupportedReference r;
    fields >> id >> r.kernel_macro >> r.codename;
    if (!fields) throw std::runtime_error("short line in the reference: " + line);
    r.id = static_cast<std::uint16_t>(std::stoul(id, nullptr, 16));
    rows.push_back(r);
  }
  return rows;
}

// The ids oaprof knows it does not profile (PVC, WCL, NVL-S/P, CRI) are the kernel's, each with
// a reason, and none of them is in the supported table: `oaprof platforms` reports them as known
// and unsupported, never as unknown.
TEST(PlatformReferenceTest, EveryUnsupportedIdIsTheKernelsWithAReason) {
  const std::vector<UnsupportedReference> rows = read_unsupported_reference();
  ASSERT_GT(rows.size(), 30u) << OAPROF_PCI_UNSUPPORTED;
  std::set<std::uint16_t> reference;
  for (const UnsupportedReference& r : rows) {
    SCOPED_TRACE(::testing::Message()
                 << "PCI id 0x" << std::hex << r.id << " (" << r.kernel_macro << ")");
    EXPECT_TRUE(reference.insert(r.id).second) << "listed twice";
    const UnsupportedPciId* entry = find_unsupported_pci_id(r.id);
    ASSERT_NE(entry, nullptr) << "the kernel lists it, oaprof does not know it";
    EXPECT_EQ(entry->platform->kernel_macro, r.kernel_macro);
    EXPECT_EQ(entry->platform->codename, r.codename);
    EXPECT_FALSE(entry->platform->reason.empty());
    EXPECT_FALSE(entry->platform->driver.empty());
    EXPECT_EQ(find_id(r.id), nullptr) << "both supported and unsupported";
    EXPECT_THAT(unsupported_pci_id_message(r.id), ::testing::HasSubstr("does not support"));
  }
  for (const UnsupportedPciId& id : known_unsupported_pci_ids()) {
    EXPECT_TRUE(reference.contains(id.device))
        << "oaprof lists 0x" << std::hex << id.device << " as unsupported, which the reference "
        << "does not have";
  }
  EXPECT_EQ(reference.size(), known_unsupported_pci_ids().size());
}

}  // namespace
}  // namespace oaprof::oa
