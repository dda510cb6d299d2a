// Built twice: into power_test against the library as configured (PAPI when pkg-config found it)
// and into power_papi_off_test against the library with PAPI compiled out. OAPROF_EXPECT_PAPI
// says which one this is.
#include "power/papi_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/power/fake_tree.h"

namespace oaprof::power {
namespace {
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(PapiTest, CompiledInAsConfigured) { EXPECT_EQ(papi_compiled_in(), OAPROF_EXPECT_PAPI != 0); }

TEST(PapiTest, UnavailableSaysSoAndWhy) {
  test_support::FakeTree tree;
  // No PAPI here has a usable energy component: Debian's has none, and this tree has no zones.
  try {
    make_papi_source(tree.root());
    FAIL() << "a PAPI energy source opened without RAPL";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), StartsWith("not available: "));
    if (papi_compiled_in()) {
      EXPECT_THAT(e.what(), ::testing::AnyOf(HasSubstr("PAPI built without rapl/powercap"),
                                             HasSubstr("cannot be used")));
    } else {
      EXPECT_THAT(e.what(), HasSubstr("built without PAPI"));
    }
  }
}

TEST(PapiTest, RaplEventNamesMapToPlanesInNanojoules) {
  const std::filesystem::path none = "/nonexistent";
  const auto pkg = papi_energy_event("rapl:::PACKAGE_ENERGY:PACKAGE0", none);
  ASSERT_TRUE(pkg.has_value());
  EXPECT_EQ(pkg->domain, Domain::kPackage);
  EXPECT_DOUBLE_EQ(pkg->uj_per_unit, 1e-3);
  EXPECT_EQ(papi_energy_event("rapl:::PP1_ENERGY:PACKAGE0", none)->domain, Domain::kUncore);
  EXPECT_EQ(papi_energy_event("rapl:::DRAM_ENERGY:PACKAGE1", none)->domain, Domain::kDram);
  EXPECT_FALSE(papi_energy_event("rapl:::PACKAGE_ENERGY_CNT:PACKAGE0", none).has_value());
  EXPECT_FALSE(papi_energy_event("rapl:::THERMAL_SPEC_CNT:PACKAGE0", none).has_value());
  EXPECT_FALSE(papi_energy_event("perf::CYCLES", none).has_value());
}

TEST(PapiTest, PowercapEventNamesTakeTheirDomainFromSysfs) {
  test_support::FakeTree tree;
  tree.write("intel-rapl:0/name", "package-0");
  tree.write("intel-rapl:0:1/name", "uncore");
  const auto zone = papi_energy_event("powercap:::ENERGY_UJ:ZONE0", tree.root());
  ASSERT_TRUE(zone.has_value());
  EXPECT_EQ(zone->domain, Domain::kPackage);
  EXPECT_DOUBLE_EQ(zone->uj_per_unit, 1.0);
  EXPECT_EQ(papi_energy_event("powercap:::ENERGY_UJ:ZONE0_SUBZONE1", tree.root())->domain,
            Domain::kUncore);
  EXPECT_FALSE(papi_energy_event("powercap:::ENERGY_UJ:ZONE3", tree.root()).has_value());
  EXPECT_FALSE(papi_energy_event("powercap:::ENERGY_UJ:ZONEx", tree.root()).has_value());
  EXPECT_FALSE(papi_energy_event("powercap:::POWER_LIMIT_A_UW:ZONE0", tree.root()).has_value());
}

}  // namespace
}  // namespace oaprof::power
