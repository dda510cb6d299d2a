#include "mmio/saved_registers.h"

#include <gtest/gtest.h>

#include <map>

namespace oaprof::mmio {
namespace {

class MapMmio final : public Mmio {
 public:
  std::uint32_t read32(std::uint32_t offset) override { return regs[offset]; }
  void write32(std::uint32_t offset, std::uint32_t value) override {
    regs[offset] = value;
    writes++;
  }
  std::string describe() const override { return "map"; }
  std::map<std::uint32_t, std::uint32_t> regs;
  int writes = 0;
};

TEST(SavedRegistersTest, RestoresEveryRegisterBitIdenticalOnce) {
  MapMmio m;
  m.regs = {{0x2B00, 0x11}, {0x2B04, 0x22}, {0x9888, 0x33}};
  const auto before = m.regs;
  {
    SavedRegisters saved(m);
    saved.write(0x2B00, 0xAA);
    saved.write(0x2B00, 0xBB);  // second write must not overwrite the saved original
    saved.write(0x9888, 0xCC);
    EXPECT_EQ(saved.saved_count(), 2u);
    EXPECT_EQ(m.regs[0x2B00], 0xBBu);
    saved.restore();
    EXPECT_EQ(m.regs, before);
    const int writes = m.writes;
    saved.restore();  // idempotent
    EXPECT_EQ(m.writes, writes);
  }
}

TEST(SavedRegistersTest, DestructorRestoresOnErrorPaths) {
  MapMmio m;
  m.regs[0x2B00] = 7;
  try {
    SavedRegisters saved(m);
    saved.write(0x2B00, 0x15);
    throw std::runtime_error("configuration failed half-way");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(m.regs[0x2B00], 7u);
}

}  // namespace
}  // namespace oaprof::mmio
