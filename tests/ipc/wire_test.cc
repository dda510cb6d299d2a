#include "ipc/wire.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include <fmt/format.h>

namespace oaprof::ipc::wire {
namespace {

using ::testing::HasSubstr;

Message roundtrip(const Message& m) {
  auto decoded = decode(encode(m));
  EXPECT_TRUE(std::holds_alternative<Message>(decoded)) << std::get<DecodeError>(decoded).reason;
  return std::get<Message>(decoded);
}

TEST(WireTest, LaunchRoundTrips) {
  Launch l;
  l.launch_id = 77;
  l.work_dim = 2;
  l.global = {1024, 16, 0};
  l.local = {64, 1, 0};
  l.offset = {0, 3, 0};
  l.queued_ns = 1;
  l.submit_ns = 2;
  l.start_ns = 3;
  l.end_ns = 400;
  l.profiled = true;
  l.queue = 0x55aa00001000;
  l.context = 0x55aa00002000;
  l.device = 0x55aa00003000;
  l.tid = 4321;
  l.api_ns = 123456789;
  l.api = LaunchApi::kTask;
  l.passes = 7;
  l.restore_bytes = 1 << 20;
  l.restore_ns = 98765;
  l.kernel_name = "mad_vect4";
  const Message m = roundtrip({9, l});
  EXPECT_EQ(m.request_id, 9u);
  const auto& out = std::get<Launch>(m.body);
  EXPECT_EQ(out.launch_id, 77u);
  EXPECT_EQ(out.work_dim, 2u);
  EXPECT_EQ(out.global, l.global);
  EXPECT_EQ(out.local, l.local);
  EXPECT_EQ(out.offset, l.offset);
  EXPECT_EQ(out.end_ns, 400u);
  EXPECT_TRUE(out.profiled);
  EXPECT_EQ(out.queue, l.queue);
  EXPECT_EQ(out.context, l.context);
  EXPECT_EQ(out.device, l.device);
  EXPECT_EQ(out.tid, 4321u);
  EXPECT_EQ(out.api_ns, 123456789u);
  EXPECT_EQ(out.api, LaunchApi::kTask);
  EXPECT_EQ(out.passes, 7u);
  EXPECT_EQ(out.restore_bytes, 1u << 20);
  EXPECT_EQ(out.restore_ns, 98765u);
  EXPECT_EQ(out.kernel_name, "mad_vect4");
}

// Level Zero's four launch calls go over the wire; a call this side does not know is refused.
TEST(WireTest, LevelZeroLaunchCallsRoundTripAndAnUnknownCallIsRefused) {
  Launch l;
  l.work_dim = 3;
  l.kernel_name = "k";
  for (LaunchApi api :
       {LaunchApi::kZeLaunchKernel, LaunchApi::kZeLaunchCooperativeKernel,
        LaunchApi::kZeLaunchKernelIndirect, LaunchApi::kZeLaunchMultipleKernelsIndirect}) {
    l.api = api;
    EXPECT_EQ(std::get<Launch>(roundtrip({1, l}).body).api, api);
  }
  l.api = static_cast<LaunchApi>(oa::kMaxLaunchApi + 1);
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(encode({1, l}))));
}

// The layer's validity flags ride after the kernel name; a launch without them (a layer that
// predates them) has none, and a bit this side does not know is refused.
TEST(WireTest, LaunchFlagsRoundTripAndUnknownBitsAreRefused) {
  Launch l;
  l.work_dim = 1;
  l.kernel_name = "k";
  const auto plain = encode({1, l});
  EXPECT_EQ(std::get<Launch>(roundtrip({1, l}).body).flags, 0u);
  l.flags = kLaunchDrainFailed | kLaunchLayerError;
  const auto flagged = encode({1, l});
  EXPECT_EQ(flagged.size(), plain.size() + 4);
  EXPECT_EQ(std::get<Launch>(roundtrip({1, l}).body).flags, kLaunchDrainFailed | kLaunchLayerError);
  l.flags = kLaunchProgramIndex;
  EXPECT_EQ(std::get<Launch>(roundtrip({1, l}).body).flags, kLaunchProgramIndex);
  l.flags = kLaunchProgramIndex | kLaunchNotBracketed;
  EXPECT_EQ(std::get<Launch>(roundtrip({1, l}).body).flags,
            kLaunchProgramIndex | kLaunchNotBracketed);
  l.flags = kLaunchKnownFlags + 1;  // the next bit, which no side knows yet
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(encode({1, l}))));
}

// A sampled launch carries its window on the host's clock after the flags; the flag and the
// window come together or not at all, and a window that ends before it starts, a share over
// one, an unknown clock or a truncated window is refused.
TEST(WireTest, ASampledLaunchCarriesItsWindowAndABadWindowIsRefused) {
  Launch l;
  l.work_dim = 1;
  l.kernel_name = "k";
  l.sampled =
      SampledWindow{1'000'000'000'123u, 1'000'000'900'456u, 250'000, ClockCalibration::kMarker};
  const Launch out = std::get<Launch>(roundtrip({1, l}).body);
  ASSERT_TRUE(out.sampled.has_value());
  EXPECT_EQ(*out.sampled, *l.sampled);
  EXPECT_EQ(out.flags, kLaunchSampled);
  // The flag alone, without a window, is not sent.
  Launch bare = l;
  bare.sampled.reset();
  bare.flags = kLaunchSampled;
  EXPECT_FALSE(std::get<Launch>(roundtrip({1, bare}).body).sampled.has_value());
  auto refused = [&](SampledWindow w) {
    Launch bad = l;
    bad.sampled = w;
    return std::holds_alternative<DecodeError>(decode(encode({1, bad})));
  };
  EXPECT_TRUE(refused({10, 9, 0, ClockCalibration::kMarker}));
  EXPECT_TRUE(refused({10, 20, 1'000'001, ClockCalibration::kMarker}));
  EXPECT_TRUE(refused({10, 20, 0, static_cast<ClockCalibration>(2)}));
  std::vector<std::uint8_t> bytes = encode({1, l});
  bytes.pop_back();
  bytes[12] = static_cast<std::uint8_t>(bytes[12] - 1);  // payload_len, low byte
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(bytes)));
}

// The fuzzer starts from these: each must stay a message the decoder takes, or the fuzzer would
// start from the refusal path alone.
TEST(WireTest, EveryFuzzSeedDecodes) {
  int seeds = 0;
  for (const auto& entry : std::filesystem::directory_iterator(OAPROF_WIRE_FUZZ_SEEDS)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                          std::istreambuf_iterator<char>());
    const auto decoded = decode(bytes);
    EXPECT_TRUE(std::holds_alternative<Message>(decoded))
        << entry.path().filename() << ": " << std::get<DecodeError>(decoded).reason;
    ++seeds;
  }
  EXPECT_GE(seeds, 9);
}

TEST(WireTest, ALaunchThatRanZeroTimesIsMalformed) {
  Launch l;
  l.work_dim = 1;
  l.passes = 0;
  l.kernel_name = "k";
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(encode({1, l}))));
}

TEST(WireTest, OtherMessagesRoundTrip) {
  EXPECT_EQ(std::get<Snapshot>(roundtrip({1, Snapshot{5, Phase::kAfter}}).body).phase,
            Phase::kAfter);
  EXPECT_EQ(std::get<Hello>(roundtrip({2, Hello{1234, 0}}).body).pid, 1234u);
  EXPECT_TRUE(std::holds_alternative<Ok>(roundtrip({3, Ok{}}).body));
  const auto e = std::get<Error>(roundtrip({4, Error{ErrorCode::kDeviceError, "boom"}}).body);
  EXPECT_EQ(e.code, ErrorCode::kDeviceError);
  EXPECT_EQ(e.message, "boom");
}

TEST(WireTest, ASummaryRoundTripsWithinItsBounds) {
  Summary s;
  s.kernels.push_back({"mad_vect4", 28, 1'400'000'000, 12'000'000});
  s.kernels.push_back({std::string(300, 'k'), 1, 2, 3});  // shortened, visibly
  const auto back = std::get<Summary>(roundtrip({9, s}).body);
  ASSERT_EQ(back.kernels.size(), 2u);
  EXPECT_EQ(back.kernels[0], s.kernels[0]);
  EXPECT_LE(back.kernels[1].kernel.size(), kMaxSummaryName);
  EXPECT_TRUE(back.kernels[1].kernel.ends_with(" [...]"));
  // At most kMaxSummaryKernels travel; a count above it is malformed.
  s.kernels.assign(kMaxSummaryKernels + 4, KernelSummary{"k", 1, 1, 1});
  EXPECT_EQ(std::get<Summary>(roundtrip({9, s}).body).kernels.size(), kMaxSummaryKernels);
  auto bytes = encode({9, Summary{{KernelSummary{"k", 1, 1, 1}}}});
  bytes[kHeaderBytes] = static_cast<std::uint8_t>(kMaxSummaryKernels + 1);
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(bytes)));
}

// Sharing kernel names is the client's choice, carried by a flags byte that only a sharing
// client sends: a summary that shares nothing is byte for byte what older oaprofds decode.
TEST(WireTest, ASummarySaysWhetherItsNamesMayBeSharedAndRefusesUnknownFlags) {
  Summary s{{KernelSummary{"k", 1, 1, 1}}};
  const auto unshared = encode({9, s});
  EXPECT_FALSE(std::get<Summary>(roundtrip({9, s}).body).share_names);
  s.share_names = true;
  auto shared = encode({9, s});
  EXPECT_TRUE(std::get<Summary>(roundtrip({9, s}).body).share_names);
  ASSERT_EQ(shared.size(), unshared.size() + 1);
  EXPECT_TRUE(
      std::equal(unshared.begin() + kHeaderBytes, unshared.end(), shared.begin() + kHeaderBytes));
  shared.back() = 0x2;  // a bit this side does not know
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(shared)));
  // A flags byte of 0 is never written (no flags: no byte), so one encoding per summary.
  shared.back() = 0x0;
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(shared)));
}

TEST(WireTest, ASnapshotCarriesItsEnergyFirstFlagAndRefusesUnknownPhases) {
  const auto first = std::get<Snapshot>(roundtrip({1, Snapshot{5, Phase::kBefore, true}}).body);
  EXPECT_TRUE(first.energy_first);
  EXPECT_EQ(first.phase, Phase::kBefore);
  const auto plain = std::get<Snapshot>(roundtrip({1, Snapshot{5, Phase::kAfter}}).body);
  EXPECT_FALSE(plain.energy_first);
  EXPECT_EQ(plain.phase, Phase::kAfter);
  // The phase is the payload's last byte: 2 is no phase, with or without the flag.
  for (std::uint8_t phase : {std::uint8_t{2}, std::uint8_t{0x82}}) {
    auto bytes = encode({1, Snapshot{5, Phase::kBefore}});
    bytes.back() = phase;
    EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(bytes))) << int(phase);
  }
}

// Issue 35: a 'before' may name its kernel and work-items for the simulator. Absent, the bytes are
// an older layer's; present, they are bounded, and only a 'before' carries them.
TEST(WireTest, ABeforeSnapshotCarriesABoundedWorkHint) {
  const WorkHint hint{"mad_vect4", 4096};
  const auto got = std::get<Snapshot>(roundtrip({1, Snapshot{5, Phase::kBefore, true, hint}}).body);
  ASSERT_TRUE(got.work);
  EXPECT_EQ(*got.work, hint);
  EXPECT_TRUE(got.energy_first);
  EXPECT_FALSE(std::get<Snapshot>(roundtrip({1, Snapshot{5, Phase::kBefore}}).body).work);
  EXPECT_EQ(encode({1, Snapshot{5, Phase::kBefore}}).size(), kHeaderBytes + 9)
      << "without a hint, a snapshot keeps the bytes an older oaprof decodes";
  EXPECT_THROW(encode({1, Snapshot{5, Phase::kAfter, false, hint}}), std::invalid_argument);
  for (const WorkHint& bad : {WorkHint{"", 1}, WorkHint{"k", 0}, WorkHint{"k", kMaxWorkItems + 1},
                              WorkHint{std::string(kMaxWorkNameBytes + 1, 'k'), 1}}) {
    EXPECT_FALSE(sendable(bad));
    EXPECT_THROW(encode({1, Snapshot{5, Phase::kBefore, false, bad}}), std::length_error);
  }
  // What a hostile layer could write instead: each refused by the decoder.
  const auto with_hint = [](std::uint8_t phase, std::uint64_t size, const std::string& name) {
    auto bytes = encode({1, Snapshot{5, Phase::kBefore}});
    bytes.back() = phase;
    const auto n = static_cast<std::uint16_t>(name.size());
    bytes.insert(bytes.end(), reinterpret_cast<const std::uint8_t*>(&size),
                 reinterpret_cast<const std::uint8_t*>(&size) + 8);
    bytes.insert(bytes.end(), reinterpret_cast<const std::uint8_t*>(&n),
                 reinterpret_cast<const std::uint8_t*>(&n) + 2);
    bytes.insert(bytes.end(), name.begin(), name.end());
    const auto len = static_cast<std::uint32_t>(bytes.size() - kHeaderBytes);
    std::memcpy(&bytes[12], &len, 4);
    return decode(bytes);
  };
  EXPECT_TRUE(std::holds_alternative<Message>(with_hint(0, 64, "mad_vect4")));
  EXPECT_TRUE(std::holds_alternative<DecodeError>(with_hint(1, 64, "mad_vect4")));  // an 'after'
  EXPECT_TRUE(std::holds_alternative<DecodeError>(with_hint(0, 0, "mad_vect4")));
  EXPECT_TRUE(std::holds_alternative<DecodeError>(with_hint(0, kMaxWorkItems + 1, "k")));
  EXPECT_TRUE(std::holds_alternative<DecodeError>(with_hint(0, 64, "")));
  EXPECT_TRUE(std::holds_alternative<DecodeError>(
      with_hint(0, 64, std::string(kMaxWorkNameBytes + 1, 'k'))));
}

// oaprof hands oaprofd the work it resolved: whole figures within kMaxWorkCount, with a start only.
TEST(WireTest, AKernelStartCarriesItsWorkAndRefusesFiguresPastTheBound) {
  // mad_vect4 over 4096 work-items
  const oa::KernelWork w{.work_items = 4096,
                         .fp32_ops = 8388608,
                         .flops = 16777216,
                         .global_bytes = 131072,
                         .footprint_bytes = 131072,
                         .global_accesses = 8192};
  const auto got = std::get<Kernel>(roundtrip({1, Kernel{true, w}}).body);
  ASSERT_TRUE(got.work);
  EXPECT_EQ(*got.work, w);
  EXPECT_EQ(encode({1, Kernel{true}}).size(), kHeaderBytes + 1)
      << "without work, the signal keeps the bytes an older oaprofd decodes";
  EXPECT_THROW(encode({1, Kernel{false, w}}), std::invalid_argument);
  // NaN, negatives and fractions go as whole numbers in range: one encoding each.
  oa::KernelWork odd;
  odd.fp32_ops = std::nan("");
  odd.fp64_ops = -5;
  odd.int_ops = 1e300;
  odd.flops = 2.5;
  const oa::KernelWork sent = *std::get<Kernel>(roundtrip({1, Kernel{true, odd}}).body).work;
  EXPECT_EQ(sent.fp32_ops, 0);
  EXPECT_EQ(sent.fp64_ops, 0);
  EXPECT_EQ(sent.int_ops, static_cast<double>(kMaxWorkCount));
  EXPECT_EQ(sent.flops, 3);
  auto past = encode({1, Kernel{true, w}});
  const std::uint64_t too_many = kMaxWorkCount + 1;
  std::memcpy(&past[kHeaderBytes + 1], &too_many, 8);
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(past)));
  auto stopped = encode({1, Kernel{true, w}});
  stopped[kHeaderBytes] = 0;  // an end with work
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(stopped)));
  auto cut = encode({1, Kernel{true, w}});
  cut.resize(cut.size() - 1);
  const auto len = static_cast<std::uint32_t>(cut.size() - kHeaderBytes);
  std::memcpy(&cut[12], &len, 4);
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(cut)));
}

TEST(WireTest, EveryTruncationIsRejectedNotCrashed) {
  Launch l;
  l.work_dim = 1;
  l.kernel_name = "k";
  const auto bytes = encode({1, l});
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    auto d = decode(std::span(bytes.data(), n));
    ASSERT_TRUE(std::holds_alternative<DecodeError>(d)) << "length " << n;
  }
}

TEST(WireTest, BadHeadersGiveSpecificErrors) {
  auto bytes = encode({7, Snapshot{1, Phase::kBefore}});
  auto bad_magic = bytes;
  bad_magic[0] ^= 0xFF;
  EXPECT_THAT(std::get<DecodeError>(decode(bad_magic)).reason, HasSubstr("magic"));

  auto bad_version = bytes;
  bad_version[4] = 99;
  const auto v = std::get<DecodeError>(decode(bad_version));
  EXPECT_EQ(v.code, ErrorCode::kUnsupportedVersion);
  EXPECT_EQ(v.request_id, 7u);

  auto bad_type = bytes;
  bad_type[6] = 0x55;
  EXPECT_EQ(std::get<DecodeError>(decode(bad_type)).code, ErrorCode::kUnknownType);

  auto extra = bytes;
  extra.push_back(0);
  EXPECT_THAT(std::get<DecodeError>(decode(extra)).reason, HasSubstr("payload length"));

  std::vector<std::uint8_t> huge(kMaxMessageBytes + 1, 0);
  EXPECT_THAT(std::get<DecodeError>(decode(huge)).reason, HasSubstr("exceeds"));
}

TEST(WireTest, InvalidFieldValuesAreRejected) {
  auto bytes = encode({1, Snapshot{1, Phase::kBefore}});
  bytes.back() = 2;  // phase must be 0 or 1
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(bytes)));
  Launch l;
  l.work_dim = 4;  // OpenCL allows 1..3
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(encode({1, l}))));
}

TEST(WireTest, OverlongKernelNamesAreCutToTheLimitVisibly) {
  Launch l;
  l.work_dim = 1;
  l.kernel_name = std::string(kMaxNameBytes + 100, 'k');
  const auto out = std::get<Launch>(roundtrip({1, l}).body);
  EXPECT_EQ(out.kernel_name.size(), kMaxNameBytes);
  EXPECT_TRUE(out.kernel_name.ends_with("k [...]")) << out.kernel_name.substr(1000);
}

TEST(WireTest, AnOverlongPathIsRefusedNotCut) {
  Open o;
  o.metric_set = "ComputeBasic";
  o.metrics_xml = "/" + std::string(kMaxTextBytes - 1, 'm');  // exactly the limit: carried whole
  EXPECT_EQ(std::get<Open>(roundtrip({1, o}).body).metrics_xml, o.metrics_xml);
  o.metrics_xml += "/oa-kblgt2.xml";
  try {
    (void)encode({1, o});
    ADD_FAILURE() << "a path longer than the limit was encoded";
  } catch (const std::length_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(fmt::format("its metrics XML path is {} bytes, more than the "
                                                "{} the protocol carries",
                                                o.metrics_xml.size(), kMaxTextBytes)));
  }
  Opened opened;
  opened.metrics_file = o.metrics_xml;
  EXPECT_THROW((void)encode({2, opened}), std::length_error);
}

TEST(WireTest, OverlongProseIsShortenedVisiblyAndStillSent) {
  Opened opened;
  opened.energy_reason = std::string(kMaxTextBytes, 'r') + "\xc3\xa9";  // ends in a 2-byte é
  const auto reason = std::get<Opened>(roundtrip({1, opened}).body).energy_reason;
  EXPECT_LE(reason.size(), kMaxTextBytes);
  EXPECT_TRUE(reason.ends_with("r [...]")) << reason;
  const std::string message(kMaxMessageBytes, 'e');
  const auto e = std::get<Error>(roundtrip({2, Error{ErrorCode::kBadRequest, message}}).body);
  EXPECT_TRUE(e.message.ends_with("e [...]"));
  // No half of a multi-byte character is left before the mark.
  std::string accents = "x";  // the cut then falls inside a character
  while (accents.size() < kMaxTextBytes + 10) accents += "\xc3\xa9";
  opened.energy_reason = accents;
  const auto cut = std::get<Opened>(roundtrip({3, opened}).body).energy_reason;
  EXPECT_TRUE(cut.ends_with("\xc3\xa9 [...]")) << cut.substr(cut.size() - 10);
}

// The device's facts go with Opened, so a client of oaprofd evaluates its equations with the
// topology the daemon read; counts that disagree with their masks are refused.
TEST(WireTest, OpenedCarriesTheDevicesFacts) {
  Opened o;
  oa::DeviceFacts& f = o.facts;
  f.topology = oa::Topology{1, 3, 8, 0x1, 0x7, 1, 3, 23};
  f.topology_source = oa::TopologySource::kI915Query;
  f.topology_note = "DRM_I915_QUERY_TOPOLOGY_INFO on render node /dev/dri/renderD128";
  f.timestamp_hz = 19.2e6;
  f.timestamp_source = oa::TimestampSource::kRegisters;
  f.timestamp_note = "RPM_CONFIG0 0xE";
  const oa::DeviceFacts got = std::get<Opened>(roundtrip({1, o}).body).facts;
  EXPECT_EQ(got.topology.eus, 23);
  EXPECT_EQ(got.topology.subslices, 3);
  EXPECT_EQ(got.topology.max_subslices, 3);
  EXPECT_EQ(got.topology.subslice_mask, 0x7u);
  EXPECT_EQ(got.topology_source, oa::TopologySource::kI915Query);
  EXPECT_EQ(got.topology_note, f.topology_note);
  EXPECT_EQ(got.timestamp_hz, 19.2e6);
  EXPECT_EQ(got.timestamp_source, oa::TimestampSource::kRegisters);
  EXPECT_EQ(got.timestamp_note, f.timestamp_note);
  o.facts.topology.subslices = 4;  // but three bits in the mask
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(encode({2, o}))));
}

// Issue 16: the device byte says whether the device is simulated and whether xe drives it (a
// Tiger Lake may be either driver's), each on its own; a bit oaprof does not know is refused.
TEST(WireTest, OpenedSaysWhetherXeDrivesTheDevice) {
  for (const bool simulated : {false, true}) {
    for (const bool xe : {false, true}) {
      Opened o;
      o.simulated = simulated;
      o.xe = xe;
      const Opened got = std::get<Opened>(roundtrip({1, o}).body);
      EXPECT_EQ(got.simulated, simulated);
      EXPECT_EQ(got.xe, xe);
    }
  }
  Opened plain, xe;
  xe.xe = true;
  std::vector<std::uint8_t> bytes = encode({1, plain});
  const std::vector<std::uint8_t> xe_bytes = encode({1, xe});
  ASSERT_EQ(bytes.size(), xe_bytes.size());
  std::size_t at = 0;
  while (at < bytes.size() && bytes[at] == xe_bytes[at]) ++at;
  ASSERT_LT(at, bytes.size());
  EXPECT_EQ(xe_bytes[at], 2u);
  bytes[at] = 4;  // a bit no daemon sets
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(bytes)));
  // The L3 groups cross too, each on its own bit.
  Opened xe2;
  xe2.facts.l3_banks = 16;
  xe2.facts.l3_nodes = 4;
  xe2.facts.sqidis = 4;
  const oa::DeviceFacts got = std::get<Opened>(roundtrip({1, xe2}).body).facts;
  EXPECT_EQ(got.l3_nodes, 4u);
  EXPECT_EQ(got.sqidis, 4u);
  EXPECT_FALSE(got.copy_engines.has_value());
  EXPECT_FALSE(got.compute_engines.has_value());
  // Tiger Lake's OAG counts no compute engine: a count of 0 is a count, and crosses as one.
  Opened tgl;
  tgl.xe = true;
  tgl.facts.compute_engines = 0;
  EXPECT_EQ(std::get<Opened>(roundtrip({1, tgl}).body).facts.compute_engines, 0u);
}

// Issue 16: a part xe drives sends where its facts came from (xe's queries) and the counts
// only xe gives ($L3BankTotalCount, $ComputeEngineTotalCount); an i915 part's Opened stays byte
// for byte what a client that predates the counts reads.
TEST(WireTest, OpenedCarriesTheCountsXesQueriesGave) {
  Opened o;
  oa::DeviceFacts& f = o.facts;
  f.topology = oa::Topology{1, 8, 8, 0x1, 0xFF, 1, 8, 64};
  f.topology_source = oa::TopologySource::kXeQuery;
  f.timestamp_hz = 19.2e6;
  f.timestamp_source = oa::TimestampSource::kXeOaUnit;
  const std::size_t without_counts = encode({1, o}).size();
  f.l3_banks = 4;
  f.compute_engines = 1;
  const auto bytes = encode({1, o});
  EXPECT_EQ(bytes.size(), without_counts + 1 + 8 + 8);
  const oa::DeviceFacts got = std::get<Opened>(std::get<Message>(decode(bytes)).body).facts;
  EXPECT_EQ(got.topology_source, oa::TopologySource::kXeQuery);
  EXPECT_EQ(got.timestamp_source, oa::TimestampSource::kXeOaUnit);
  EXPECT_EQ(got.l3_banks, 4u);
  EXPECT_EQ(got.compute_engines, 1u);
  // One count alone comes back alone.
  o.facts.l3_banks.reset();
  const oa::DeviceFacts one = std::get<Opened>(roundtrip({2, o}).body).facts;
  EXPECT_FALSE(one.l3_banks.has_value());
  EXPECT_EQ(one.compute_engines, 1u);
  // A count of zero, one no part has, or a bit nobody defined is a corrupt message.
  const std::size_t which_at = bytes.size() - 17, l3_at = bytes.size() - 16;
  const auto with = [&](auto change) {
    auto bad = bytes;
    change(bad);
    return decode(bad);
  };
  EXPECT_TRUE(std::holds_alternative<DecodeError>(
      with([&](auto& b) { std::fill_n(b.begin() + static_cast<std::ptrdiff_t>(l3_at), 8, 0); })));
  EXPECT_TRUE(std::holds_alternative<DecodeError>(with([&](auto& b) {
    const std::uint64_t too_many = 5000;
    std::memcpy(b.data() + l3_at, &too_many, 8);
  })));
  EXPECT_TRUE(std::holds_alternative<DecodeError>(with([&](auto& b) { b[which_at] = 4; })));
  auto cut = bytes;
  cut.resize(cut.size() - 4);
  std::uint32_t len = static_cast<std::uint32_t>(cut.size() - kHeaderBytes);
  std::memcpy(cut.data() + 12, &len, 4);
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(cut)));
}

// Xe2's largest report (PEC64u64_B8_C8) is 640 bytes: it crosses whole, and a longer one is
// refused.
TEST(WireTest, SampledCarriesAWholeXe2Report) {
  static_assert(kMaxReportBytes == 640);
  Sampled pec;
  pec.report = std::vector<std::uint8_t>(640);
  for (std::size_t i = 0; i < pec.report->size(); ++i) {
    (*pec.report)[i] = static_cast<std::uint8_t>(i * 7);
  }
  auto bytes = encode({5, pec});
  EXPECT_EQ(std::get<Sampled>(std::get<Message>(decode(bytes)).body).report, pec.report);
  // The length field says 641 and one more byte follows: still refused.
  const std::uint16_t n = 641;
  std::memcpy(bytes.data() + kHeaderBytes + 1, &n, 2);
  bytes.push_back(0);
  const std::uint32_t len = static_cast<std::uint32_t>(bytes.size() - kHeaderBytes);
  std::memcpy(bytes.data() + 12, &len, 4);
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(bytes)));
}

TEST(WireTest, DaemonRequestsRoundTrip) {
  Open o;
  o.pid = 42;
  o.device = "sim";
  o.access = "rpc";
  o.format = "A32u40_A4u32_B8_C8";
  o.metric_set = "ComputeBasic";
  o.metrics_xml = "/usr/share/oaprof/metrics/oa-kblgt2.xml";
  o.energy = "none";
  const auto got = std::get<Open>(roundtrip({9, o}).body);
  EXPECT_EQ(got.pid, 42u);
  EXPECT_EQ(got.device, "sim");
  EXPECT_EQ(got.access, "rpc");
  EXPECT_EQ(got.format, o.format);
  EXPECT_EQ(got.metric_set, "ComputeBasic");
  EXPECT_EQ(got.metrics_xml, o.metrics_xml);
  EXPECT_EQ(got.energy, "none");

  const auto s = std::get<Sample>(roundtrip({10, Sample{77, kSampleReport | kSampleEnergy}}).body);
  EXPECT_EQ(s.report_id, 77u);
  EXPECT_EQ(s.what, kSampleReport | kSampleEnergy);
  EXPECT_TRUE(std::get<Kernel>(roundtrip({11, Kernel{true}}).body).running);
  EXPECT_FALSE(std::get<Kernel>(roundtrip({12, Kernel{false}}).body).running);
  EXPECT_TRUE(std::holds_alternative<Close>(roundtrip({13, Close{}}).body));
  EXPECT_EQ(std::get<SwitchSet>(roundtrip({14, SwitchSet{"L3_1"}}).body).metric_set, "L3_1");
  // A name longer than a string may be is refused when encoded, never cut to another name.
  EXPECT_THROW(encode({15, SwitchSet{std::string(kMaxTextBytes + 1, 'A')}}), std::length_error);
  // Cut short on the wire: refused.
  auto cut = encode({16, SwitchSet{"Sampler_1"}});
  cut.resize(cut.size() - 3);
  const auto len = static_cast<std::uint32_t>(cut.size() - kHeaderBytes);
  std::memcpy(&cut[12], &len, 4);
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(cut)));
}

// Issue 32: the selftest through oaprofd. The request carries a flag, a device and an access and
// nothing else; the report comes back in bounded chunks.
TEST(WireTest, SelftestMessagesRoundTripWithinTheirBounds) {
  const auto req = std::get<Selftest>(roundtrip({30, Selftest{true, "sim", "mmio"}}).body);
  EXPECT_TRUE(req.quick);
  EXPECT_EQ(req.device, "sim");
  EXPECT_EQ(req.access, "mmio");
  EXPECT_EQ(std::get<SelftestFetch>(roundtrip({31, SelftestFetch{3072}}).body).offset, 3072u);
  const auto running =
      std::get<SelftestReport>(roundtrip({32, SelftestReport{false, "clocks"}}).body);
  EXPECT_FALSE(running.done);
  EXPECT_EQ(running.check, "clocks");
  const std::string chunk(kMaxSelftestChunkBytes, '{');
  const auto done =
      std::get<SelftestReport>(roundtrip({33, SelftestReport{true, "", 10'000, chunk}}).body);
  EXPECT_TRUE(done.done);
  EXPECT_EQ(done.total, 10'000u);
  EXPECT_EQ(done.chunk, chunk);
  // Within a message however large the report: a longer chunk or a larger report is not sent.
  EXPECT_LE(encode({33, SelftestReport{true, "", 10'000, chunk}}).size(), kMaxMessageBytes);
  EXPECT_THROW(encode({34, SelftestReport{true, "", 10'000, chunk + "x"}}), std::length_error);
  EXPECT_THROW(encode({35, SelftestReport{true, "", kMaxSelftestReportBytes + 1, "x"}}),
               std::length_error);
  EXPECT_THROW(encode({36, Selftest{false, "auto", std::string(kMaxTextBytes + 1, 'm')}}),
               std::length_error);
}

TEST(WireTest, SelftestMessagesRefuseWhatTheyDoNotCarry) {
  // A flag this side does not know (a fault knob, say) is refused, not ignored.
  auto flags = encode({40, Selftest{}});
  flags[kHeaderBytes] = 0x02;
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(flags)));
  // Trailing bytes (a fault's name after the access) are refused.
  auto trailing = encode({41, Selftest{}});
  trailing.push_back('x');
  const auto len = static_cast<std::uint32_t>(trailing.size() - kHeaderBytes);
  std::memcpy(&trailing[12], &len, 4);
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(trailing)));
  // A running report carries no bytes; a chunk longer than its report is malformed.
  auto running = encode({42, SelftestReport{true, "", 1, "x"}});
  running[kHeaderBytes] = 0;
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(running)));
  auto longer = encode({43, SelftestReport{true, "", 2, "xy"}});
  const std::uint32_t one = 1;
  std::memcpy(&longer[kHeaderBytes + 1 + 2], &one, 4);  // total 1 < n 2
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(longer)));
}

TEST(WireTest, DaemonRepliesRoundTrip) {
  Opened o;
  o.label = "0000:00:02.0";
  o.detail = "0000:00:02.0 [8086:5916]";
  o.pci_id = 0x5916;
  o.simulated = true;
  o.format = "A32u40_A4u32_B8_C8";
  o.metric_set = "Builtin";
  o.energy_backend = "powercap";
  o.energy_domains = {0, 1, 3};
  const auto got = std::get<Opened>(roundtrip({1, o}).body);
  EXPECT_EQ(got.label, o.label);
  EXPECT_EQ(got.detail, o.detail);
  EXPECT_EQ(got.pci_id, 0x5916);
  EXPECT_TRUE(got.simulated);
  EXPECT_EQ(got.format, o.format);
  EXPECT_EQ(got.energy_backend, "powercap");
  EXPECT_EQ(got.energy_domains, o.energy_domains);

  Sampled full;
  full.report = std::vector<std::uint8_t>(kMaxReportBytes);
  for (std::size_t i = 0; i < full.report->size(); ++i) {
    (*full.report)[i] = static_cast<std::uint8_t>(i);
  }
  full.energy = EnergyValues{123456789, {{0, 1000}, {3, 1ull << 40}}};
  full.config_lost = true;
  full.readout_interrupted = true;
  const auto sf = std::get<Sampled>(roundtrip({2, full}).body);
  EXPECT_EQ(sf.report, full.report);
  ASSERT_TRUE(sf.energy.has_value());
  EXPECT_EQ(sf.energy->time_ns, 123456789u);
  EXPECT_EQ(sf.energy->energy_uj, full.energy->energy_uj);
  EXPECT_TRUE(sf.config_lost);
  EXPECT_TRUE(sf.readout_interrupted);

  Sampled energy_only;
  energy_only.energy = EnergyValues{5, {}};
  const auto se = std::get<Sampled>(roundtrip({3, energy_only}).body);
  EXPECT_FALSE(se.report.has_value());
  EXPECT_FALSE(se.config_lost);
  EXPECT_FALSE(se.readout_interrupted);
  EXPECT_FALSE(se.stream_losses.has_value());
  EXPECT_EQ(se.energy->time_ns, 5u);
}

TEST(WireTest, SampledCarriesStreamLossesOnlyOnceThereAreAny) {
  Sampled lossy;
  lossy.report = std::vector<std::uint8_t>(64, 7);
  lossy.energy = EnergyValues{9, {{0, 11}}};
  lossy.stream_losses = StreamLosses{3, 0x01020304};
  const auto bytes = encode({4, lossy});
  const auto got = std::get<Sampled>(std::get<Message>(decode(bytes)).body);
  EXPECT_EQ(got.stream_losses, lossy.stream_losses);
  EXPECT_EQ(got.report, lossy.report);
  EXPECT_EQ(got.energy->energy_uj, lossy.energy->energy_uj);
  // Without losses the message is byte for byte what a peer that predates them sends.
  Sampled plain = lossy;
  plain.stream_losses.reset();
  const auto plain_bytes = encode({4, plain});
  EXPECT_EQ(plain_bytes.size() + 8, bytes.size());
  EXPECT_EQ(plain_bytes[kHeaderBytes], kSampleReport | kSampleEnergy);
  // Counts cut short, or a flag nobody defined, are refused.
  auto cut = bytes;
  cut.resize(cut.size() - 2);
  const std::uint32_t len = static_cast<std::uint32_t>(cut.size() - kHeaderBytes);
  std::memcpy(&cut[12], &len, 4);
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(cut)));
  auto unknown = plain_bytes;
  unknown[kHeaderBytes] |= 0x20;
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(unknown)));
}

TEST(WireTest, DaemonMessagesRefuseTruncationAndBadFields) {
  Open o;
  o.metric_set = "ComputeBasic";
  const auto bytes = encode({1, o});
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    ASSERT_TRUE(std::holds_alternative<DecodeError>(decode(std::span(bytes.data(), n)))) << n;
  }
  auto nothing = encode({1, Sample{1, kSampleReport}});
  nothing.back() = 0;  // a sample must ask for something
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(nothing)));
  auto unknown_bit = encode({1, Sample{1, kSampleReport}});
  unknown_bit.back() = 0x80;
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(unknown_bit)));
  auto kernel = encode({1, Kernel{true}});
  kernel.back() = 2;
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode(kernel)));
  auto close_with_payload = encode({1, Close{}});
  close_with_payload.push_back(0);
  close_with_payload[12] = 1;  // payload_len
  EXPECT_THAT(std::get<DecodeError>(decode(close_with_payload)).reason, HasSubstr("close"));
}

TEST(WireTest, ExistingEncodingsAreUnchanged) {
  // A layer in a running program may be older than oaprof: the first messages keep their bytes.
  const auto hello = encode({0x01020304, Hello{0x11223344, 0}});
  const std::vector<std::uint8_t> want = {0x4F, 0x41, 0x50, 0x46, 1, 0, 1, 0,
                                          4,    3,    2,    1,    8, 0, 0, 0,
                                          0x44, 0x33, 0x22, 0x11, 0, 0, 0, 0};
  EXPECT_EQ(hello, want);
  EXPECT_EQ(encode({1, Ok{}}).size(), kHeaderBytes);
}

}  // namespace
}  // namespace oaprof::ipc::wire
