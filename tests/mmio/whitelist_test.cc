#include "mmio/whitelist.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pugixml.hpp>

#include <string>
#include <vector>

#include "mmio/oa_programmer.h"

namespace oaprof::mmio {
namespace {

using ::testing::HasSubstr;

struct IgtFile {
  const char* name;
  oa::Generation gen;
  const char* dir = OAPROF_IGT_METRICS_DIR;
};

// Every IGT metrics file of Haswell to Xe-LPG (cnl is Gen10, which oaprof does not know).
constexpr IgtFile kFiles[] = {
    {"hsw", oa::Generation::kGen7_5},
    {"bdw", oa::Generation::kGen8},
    {"chv", oa::Generation::kGen8},
    {"sklgt2", oa::Generation::kGen9},
    {"sklgt3", oa::Generation::kGen9},
    {"sklgt4", oa::Generation::kGen9},
    {"bxt", oa::Generation::kGen9},
    {"kblgt2", oa::Generation::kGen9},
    {"kblgt3", oa::Generation::kGen9},
    {"glk", oa::Generation::kGen9},
    {"cflgt2", oa::Generation::kGen9},
    {"cflgt3", oa::Generation::kGen9},
    {"icl", oa::Generation::kGen11},
    {"ehl", oa::Generation::kGen11},
    {"tglgt1", oa::Generation::kGen12},
    {"tglgt2", oa::Generation::kGen12},
    {"rkl", oa::Generation::kGen12},
    {"adl", oa::Generation::kGen12},
    {"dg1", oa::Generation::kGen12},
    {"mtlgt2", oa::Generation::kXeLpg, OAPROF_IGT_MTL_METRICS_DIR},
    {"mtlgt3", oa::Generation::kXeLpg, OAPROF_IGT_MTL_METRICS_DIR},
};

bool programmed_over_mmio(oa::Generation gen) { return gen != oa::Generation::kGen7_5; }

// Xe-LPG's OAM sets write the media GT's OA unit, which oaprof's read-outs refuse.
bool media_set(const pugi::xml_node& set) {
  return std::string(set.attribute("oa_format").as_string()).find("MPEC") != std::string::npos;
}

ConfigRegisterKind kind_of(const std::string& type) {
  if (type == "NOA") return ConfigRegisterKind::kMux;
  if (type == "OA") return ConfigRegisterKind::kBoolean;
  if (type == "FLEX") return ConfigRegisterKind::kFlex;
  throw std::invalid_argument("unknown register_config type " + type);
}

TEST(WhitelistTest, EveryWriteOfEveryIgtMetricSetPasses) {
  int sets = 0, writes = 0, media_sets = 0;
  for (const IgtFile& f : kFiles) {
    const std::string path = std::string(f.dir) + "/oa-" + f.name + ".xml";
    pugi::xml_document doc;
    ASSERT_TRUE(doc.load_file(path.c_str())) << path;
    oa::Platform platform = oa::simulated_platform();
    platform.gen = f.gen;
    if (std::string(f.name) == "chv") platform.codename = "CHV";
    for (const auto& set : doc.child("metrics").children("set")) {
      OaConfig config;
      for (const auto& rc : set.children("register_config")) {
        const ConfigRegisterKind kind = kind_of(rc.attribute("type").as_string());
        for (const auto& r : rc.children("register")) {
          const oa::RegisterWrite w{static_cast<std::uint32_t>(std::stoul(
                                        r.attribute("address").as_string(), nullptr, 16)),
                                    static_cast<std::uint32_t>(
                                        std::stoul(r.attribute("value").as_string(), nullptr, 16))};
          EXPECT_TRUE(is_whitelisted(platform, kind, w.address))
              << f.name << " / " << set.attribute("symbol_name").as_string() << ": "
              << config_register_kind_name(kind) << " 0x" << std::hex << w.address;
          (kind == ConfigRegisterKind::kMux       ? config.mux
           : kind == ConfigRegisterKind::kBoolean ? config.boolean
                                                  : config.flex)
              .push_back(w);
          ++writes;
        }
      }
      const oa::ReportFormat format = oa::formats_for(f.gen).front().size_bytes == 256
                                          ? oa::formats_for(f.gen).front().format
                                          : oa::ReportFormat::kA32u40_A4u32_B8_C8;
      if (programmed_over_mmio(f.gen) && !media_set(set)) {
        EXPECT_NO_THROW(plan_oa_programming(platform, format, config))
            << f.name << " / " << set.attribute("symbol_name").as_string();
      } else if (programmed_over_mmio(f.gen)) {
        ++media_sets;
        EXPECT_THROW(plan_oa_programming(platform, format, config), std::invalid_argument)
            << f.name << " / " << set.attribute("symbol_name").as_string();
      }
      ++sets;
    }
  }
  EXPECT_GT(sets, 600);  // the 21 files hold 650+ sets; an empty parse must not pass
  EXPECT_GT(writes, 10000);
  EXPECT_EQ(media_sets, 6);  // MediaSet1, MediaSet2, TestOam of mtlgt2 and mtlgt3
}

TEST(WhitelistTest, WritesOutsideTheListsAreRefusedWithTheRanges) {
  const auto gen9 = oa::Generation::kGen9;
  EXPECT_FALSE(is_whitelisted(gen9, ConfigRegisterKind::kMux, 0x2B00));      // OACONTROL
  EXPECT_FALSE(is_whitelisted(gen9, ConfigRegisterKind::kBoolean, 0x9888));  // mux as boolean
  EXPECT_FALSE(is_whitelisted(gen9, ConfigRegisterKind::kFlex, 0xE460));
  EXPECT_FALSE(is_whitelisted(gen9, ConfigRegisterKind::kBoolean, 0x2712));  // unaligned
  EXPECT_FALSE(is_whitelisted(gen9, ConfigRegisterKind::kMux, 0x91D0));      // Gen11 only
  EXPECT_TRUE(is_whitelisted(oa::Generation::kGen11, ConfigRegisterKind::kMux, 0x91D0));
  EXPECT_FALSE(is_whitelisted(oa::Generation::kGen12, ConfigRegisterKind::kBoolean, 0x2710));
  oa::Platform chv = oa::simulated_platform();
  chv.gen = oa::Generation::kGen8;
  EXPECT_FALSE(is_whitelisted(chv, ConfigRegisterKind::kMux, 0x1823A4));
  chv.codename = "CHV";
  EXPECT_TRUE(is_whitelisted(chv, ConfigRegisterKind::kMux, 0x1823A4));
  EXPECT_FALSE(is_whitelisted(chv, ConfigRegisterKind::kMux, 0x1823A8));
  try {
    check_whitelisted(gen9, ConfigRegisterKind::kBoolean, {0xA278, 0x10001});  // forcewake
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("refusing to write 0x00010001 to register 0xA278"));
    EXPECT_THAT(e.what(), HasSubstr("0x2710–0x272C"));
  }
}

TEST(WhitelistTest, XeLpgTakesMeteorLakesListsNotGen12s) {
  // i915_perf.c: gen12_is_valid_mux_addr switches to mtl_oa_mux_regs from IP 12.70 (0x20CC is
  // repurposed there, VISACTL in the media GT joins), and MTL's boolean list is
  // xehp_is_valid_b_counter_addr: Gen12's plus OAA_ENABLE_REG, the LCE block and the OAM unit's.
  const oa::Platform mtl = *oa::platform_for_pci_id(0x7D55);
  const auto gen12 = oa::Generation::kGen12;
  EXPECT_FALSE(is_whitelisted(mtl, ConfigRegisterKind::kMux, 0x20CC));
  EXPECT_TRUE(is_whitelisted(gen12, ConfigRegisterKind::kMux, 0x20CC));
  EXPECT_TRUE(is_whitelisted(mtl, ConfigRegisterKind::kMux, 0x38D114));
  EXPECT_FALSE(is_whitelisted(mtl, ConfigRegisterKind::kMux, 0x38D118));
  EXPECT_TRUE(is_whitelisted(mtl, ConfigRegisterKind::kMux, 0x9888));
  EXPECT_TRUE(is_whitelisted(mtl, ConfigRegisterKind::kBoolean, 0xD900));
  EXPECT_TRUE(is_whitelisted(mtl, ConfigRegisterKind::kBoolean, 0xDC48));
  EXPECT_FALSE(is_whitelisted(gen12, ConfigRegisterKind::kBoolean, 0xDC48));
  EXPECT_TRUE(is_whitelisted(mtl, ConfigRegisterKind::kBoolean, 0xDD48));
  EXPECT_FALSE(is_whitelisted(mtl, ConfigRegisterKind::kBoolean, 0xDD4C));
  EXPECT_TRUE(is_whitelisted(mtl, ConfigRegisterKind::kBoolean, 0x39323C));
  EXPECT_FALSE(is_whitelisted(mtl, ConfigRegisterKind::kBoolean, 0x393100));
  EXPECT_TRUE(is_whitelisted(mtl, ConfigRegisterKind::kFlex, 0xE458));
  try {
    check_whitelisted(mtl, ConfigRegisterKind::kMux, {0x20CC, 0});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("on Xe-LPG"));
    EXPECT_THAT(e.what(), HasSubstr("mtl_oa_mux_regs"));
  }
}

TEST(WhitelistTest, Dg2TakesGen12sMuxListAndXeHpsBooleanListWithoutOam) {
  // i915_perf.c: DG2 (12.55) is below 12.70, so gen12_oa_mux_regs (0x20CC kept, no VISACTL);
  // has_oa_slice_contrib_limits gives it xehp_is_valid_b_counter_addr, whose OAM ranges start at
  // 12.70.
  const oa::Platform a770 = *oa::platform_for_pci_id(0x56A0);
  EXPECT_TRUE(is_whitelisted(a770, ConfigRegisterKind::kMux, 0x20CC));
  EXPECT_FALSE(is_whitelisted(a770, ConfigRegisterKind::kMux, 0x38D100));
  EXPECT_TRUE(is_whitelisted(a770, ConfigRegisterKind::kBoolean, 0xDC48));
  EXPECT_TRUE(is_whitelisted(a770, ConfigRegisterKind::kBoolean, 0xDD48));
  EXPECT_TRUE(is_whitelisted(a770, ConfigRegisterKind::kBoolean, 0xD900));
  EXPECT_FALSE(is_whitelisted(a770, ConfigRegisterKind::kBoolean, 0x393000));
  EXPECT_TRUE(is_whitelisted(a770, ConfigRegisterKind::kFlex, 0xE458));
}

TEST(WhitelistTest, ListsArePerPlatformAsTheKernelsIsValidFunctions) {
  // linux i915_perf.c: chv_is_valid_mux_addr is gen7_oa_mux_regs + chv_oa_mux_regs only, so
  // Cherryview refuses Broadwell's RPM_CONFIG/NOA_CONFIG (0x0D00–0x0D2C) and WAIT_FOR_RC6_EXIT.
  const oa::Platform chv = *oa::platform_for_pci_id(0x22B0);
  const oa::Platform bdw = *oa::platform_for_pci_id(0x1616);
  for (const std::uint32_t a : {0x0D00u, 0x0D2Cu, 0x20CCu}) {
    EXPECT_FALSE(is_whitelisted(chv, ConfigRegisterKind::kMux, a)) << std::hex << a;
    EXPECT_TRUE(is_whitelisted(bdw, ConfigRegisterKind::kMux, a)) << std::hex << a;
  }
  EXPECT_TRUE(is_whitelisted(chv, ConfigRegisterKind::kMux, 0x9888));
  EXPECT_TRUE(is_whitelisted(chv, ConfigRegisterKind::kMux, 0xE180));
  EXPECT_THROW(check_whitelisted(chv, ConfigRegisterKind::kMux, {0x20CC, 0}),
               std::invalid_argument);
  // Haswell: gen7 + hsw mux ranges, no flex registers at all.
  const auto hsw = oa::Generation::kGen7_5;
  EXPECT_TRUE(is_whitelisted(hsw, ConfigRegisterKind::kMux, 0x25100));
  EXPECT_TRUE(is_whitelisted(hsw, ConfigRegisterKind::kMux, 0x2FF90));
  EXPECT_TRUE(is_whitelisted(hsw, ConfigRegisterKind::kMux, 0x9EC0));
  EXPECT_FALSE(is_whitelisted(hsw, ConfigRegisterKind::kMux, 0x0D00));
  EXPECT_FALSE(is_whitelisted(hsw, ConfigRegisterKind::kFlex, 0xE458));
  EXPECT_TRUE(is_whitelisted(hsw, ConfigRegisterKind::kBoolean, 0x2740));
  // Gen12: the OAG boolean block and its own mux list (no 0x9800 range, no 0x0D08).
  const auto gen12 = oa::Generation::kGen12;
  EXPECT_TRUE(is_whitelisted(gen12, ConfigRegisterKind::kBoolean, 0xD900));
  EXPECT_TRUE(is_whitelisted(gen12, ConfigRegisterKind::kBoolean, 0xDC44));
  EXPECT_FALSE(is_whitelisted(gen12, ConfigRegisterKind::kBoolean, 0xDC48));
  EXPECT_TRUE(is_whitelisted(gen12, ConfigRegisterKind::kMux, 0x9840));
  EXPECT_TRUE(is_whitelisted(gen12, ConfigRegisterKind::kMux, 0x0D04));
  EXPECT_FALSE(is_whitelisted(gen12, ConfigRegisterKind::kMux, 0x0D08));
  EXPECT_FALSE(is_whitelisted(gen12, ConfigRegisterKind::kMux, 0x9800));
  EXPECT_TRUE(is_whitelisted(gen12, ConfigRegisterKind::kFlex, 0xE65C));
  try {
    check_whitelisted(chv, ConfigRegisterKind::kMux, {0x0D00, 1});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("on Cherryview"));
    EXPECT_THAT(e.what(), HasSubstr("chv_is_valid_mux_addr"));
    EXPECT_THAT(e.what(), HasSubstr("0x182300–0x1823A4"));
  }
}

}  // namespace
}  // namespace oaprof::mmio
