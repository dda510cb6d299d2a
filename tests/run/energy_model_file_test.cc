// --energy-model's file: read and checked at the edge, refused with a usage error when it is not
// a model the rows can trust, or a model of another generation than the device.
#include "run/energy_model_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "tests/common/energy_model_fixture.h"

namespace oaprof::run {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

model::EnergyModel gen9_model() { return oaprof::testing::gen9_energy_model(); }

class EnergyModelFileTest : public ::testing::Test {
 protected:
  EnergyModelFileTest()
      : path_(fs::temp_directory_path() / ("oaprof-model-" + std::to_string(::getpid()))) {}
  ~EnergyModelFileTest() override { fs::remove(path_); }
  std::string write(const std::string& text) {
    std::ofstream(path_) << text;
    return path_.string();
  }
  std::string write(const model::EnergyModel& m) { return write(model::to_json(m).dump()); }
  fs::path path_;
};

TEST_F(EnergyModelFileTest, AModelReadsBackAsItWasWritten) {
  const auto m = read_energy_model(write(gen9_model()), std::nullopt);
  EXPECT_EQ(m->platform, "KBL GT2");
  EXPECT_EQ(m->events.size(), 8u);
  EXPECT_DOUBLE_EQ(m->static_power.value, 1.0);
}

TEST_F(EnergyModelFileTest, WhatNoFitGivesIsAUsageErrorNamingTheFileAndTheField) {
  model::EnergyModel negative = gen9_model();
  negative.events[2].value = -1e-9;
  negative.events[2].low = -2e-9;
  model::EnergyModel outside = gen9_model();
  outside.static_power.value = 5;  // interval 0.9-1.1
  model::EnergyModel upside_down = gen9_model();
  upside_down.freq_min_mhz = 1300;
  const std::pair<model::EnergyModel, std::string> cases[] = {{negative, "fpu0_active_eu_cycles"},
                                                              {outside, "static_power"},
                                                              {upside_down, "frequency range"}};
  for (const auto& [m, what] : cases) {
    SCOPED_TRACE(what);
    try {
      read_energy_model(write(m), std::nullopt);
      ADD_FAILURE() << "accepted";
    } catch (const base::UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(path_.string()));
      EXPECT_THAT(e.what(), HasSubstr(what));
      EXPECT_THAT(e.what(), HasSubstr("oaprof model fit"));
    }
  }
}

TEST_F(EnergyModelFileTest, NotJsonNotAModelOrNoFileIsAUsageError) {
  EXPECT_THROW(read_energy_model(write("not json"), std::nullopt), base::UsageError);
  EXPECT_THROW(read_energy_model(write("{\"schema\": \"x\"}"), std::nullopt), base::UsageError);
  EXPECT_THROW(read_energy_model(write(std::string(kMaxEnergyModelBytes + 1, ' ')), std::nullopt),
               base::UsageError);
  EXPECT_THROW(read_energy_model("/no/such/model.json", std::nullopt), base::UsageError);
}

TEST_F(EnergyModelFileTest, AModelOfAnotherGenerationIsRefused) {
  const model::EnergyModel m = gen9_model();
  EXPECT_NO_THROW(require_model_fits(m, *oa::platform_by_name("kblgt2"), "m.json"));
  try {
    require_model_fits(m, *oa::platform_by_name("tglgt2"), "m.json");
    ADD_FAILURE() << "accepted";
  } catch (const base::UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the model is of KBL GT2 (Gen9), the device is TGL GT2"));
  }
}

}  // namespace
}  // namespace oaprof::run
