// The wire format between the unprivileged OpenCL layer and the privileged side (oaprof, later
// oaprofd). It lives in oa because both ends must speak it and oa is the one layer both may
// depend on; it is pure encode/decode, no I/O.
//
// One message per SOCK_SEQPACKET datagram, all integers little-endian:
//   u32 magic 'OAPF' (0x4650414F) | u16 version | u16 type | u32 request_id | u32 payload_len
//   | payload_len bytes of payload
// A message is at most kMaxMessageBytes. Every request gets exactly one reply (kOk or kError)
// carrying the same request_id. Payloads:
//   kHello     u32 pid | u32 flags                              -> kOk
//   kSnapshot  u64 launch_id | u8 phase (0 before, 1 after; bit 7: energy first)
//              | [u64 global_size | u16 name_len | name bytes]  -> kOk
//              The bracketed part (the launch's work hint) came later within version 1: only
//              a 'before' carries it, only when oaprof asked the layer for it (a simulated
//              device, attach/layer_config.h), so an oaprof that predates it never receives one.
//              The name is 1 to kMaxWorkNameBytes, the size 1 to kMaxWorkItems, or it is refused.
//   kLaunch    u64 launch_id | u32 work_dim | 3×u64 global | 3×u64 local | 3×u64 offset
//              | u64 queued_ns | u64 submit_ns | u64 start_ns | u64 end_ns | u8 profiled
//              | u64 queue | u64 context | u64 device | u32 tid | u64 api_ns | u8 api
//              | u32 passes | u64 restore_bytes | u64 restore_ns
//              | u16 name_len | name bytes | [u32 flags]         -> kOk
//              flags (kLaunchDrainFailed, kLaunchLayerError) came later within version 1: a
//              launch without them has none set; a bit this side does not know is refused.
//              With kLaunchSampled (later still) the flags are followed by
//              | u64 host_start_ns | u64 host_end_ns | u32 overlap_ppm | u8 clock
//              (the launch's window on the host's CLOCK_MONOTONIC, what share of it other
//              launches of the process shared, and how its device clock was calibrated).
//              kLaunchProgramIndex (later still) says launch_id is the program's own index of
//              the launch; a layer that predates it counted measured launches only, and the
//              privileged side refuses its launches with an error that says so.
//              kLaunchNotBracketed (later still) flags a bracketed launch whose snapshots
//              cover more than its kernel; an oaprof that predates it refuses the launch.
//   kOk        (empty)
//   kError     u32 code | u16 len | message bytes
// oaprofd, the privileged daemon, speaks the same framing to the unprivileged oaprof (str: u16
// length + bytes; a client names a metric set, never a register address):
//   kOpen      u32 pid | u32 flags | str device | str access | str format | str metric_set
//              | str metrics_xml | str energy                  -> kOpened (the OA unit is counting)
//   kOpened    str label | str detail | u16 pci_id | u8 device (bit 0 simulated, bit 1 xe)
//              | str format | str metric_set | str metrics_file | str energy_backend | u8 n
//              | n×u8 domain | str energy_reason
//              | u8 topology_source | u16 max_slices | u16 max_subslices | u16 max_eus_per_subslice
//              | u64 slice_mask | u64 subslice_mask | u16 slices | u16 subslices | u16 eus
//              | str topology_note | u64 timestamp_hz | u8 timestamp_source | str timestamp_note
//              | [u8 which (bit 0 l3_banks, 1 compute_engines, 2 l3_nodes, 3 copy_engines,
//              4 sqidis) | a u64 for each bit set, in bit order]
//              (the device's facts, oa::DeviceFacts: what the daemon read from i915 or xe or
//              fell back to; the client's equations and rows use them). The bracketed counts came
//              later within version 1, for parts driven by xe: the daemon sends them only where
//              xe's queries gave them, so a client that predates them is refused only an xe part.
//   kSample    u32 report_id | u8 what (bit 0 report, bit 1 energy) -> kSampled
//   kSampled   u8 flags (bit 0 report, bit 1 energy, bit 2 config_lost, bit 3 stream losses,
//              bit 4 readout_interrupted)
//              | [u16 n | n report bytes (n <= 640, Xe2's PEC64u64_B8_C8; 256 on i915 parts)] |
//              [u64 time_ns | u8 n | n×(u8 domain | u64 energy_uj)] | [u32 reports_lost | u32
//              buffer_lost] Bit 3 and its counts (the perf stream's OA_REPORT_LOST and
//              OA_BUFFER_LOST records since open) came later within version 1: the daemon sets it
//              only once a loss happened, so a client that predates it is refused only a reply it
//              could not have shown correctly anyway.
//   kKernel    u8 running (0 or 1) | [9×u64 work]              -> kOk
//              The work (came later within version 1; only with running 1): the kernel's known
//              work (oa::KernelWork, whole numbers up to kMaxWorkCount each, in its field order)
//              for the simulator to count. A client sends it only to a simulated device and, when
//              an older oaprofd refuses it as malformed, sends the signal without it from then on.
//   kClose     (empty)                                         -> kOk, every register restored
//   kSwitchSet str metric_set                                  -> kOk, the unit counting that set
//              of the file the session opened (kernel replay across sets; came later within
//              version 1, and only a client that runs one sends it)
//   kSummary   u8 n | n×(str kernel | u64 launches | u64 gpu_ns | u64 energy_uj)
//              | [u8 flags (bit 0 share_names)]             -> kOk (the holder's only)
//              The flags came later within version 1: a summary without them shares no names,
//              and a client sends them only when it shares (oaprof --share-kernel-names), so
//              an older oaprofd refuses only a summary whose names it would have shown anyway.
//   kSelftest  u8 flags (bit 0 quick) | str device | str access  -> kOk once oaprofd holds the OA
//              unit and its selftest runs (docs/selftest.md, "Through oaprofd"); came later
//              within version 1: an older oaprofd answers kUnknownType, which the client turns
//              into "this oaprofd does not run the selftest: upgrade it". Nothing else: no
//              fault, file or register travels, and an unknown flag is refused.
//   kSelftestFetch u32 offset                                  -> kSelftestReport
//   kSelftestReport u8 done | str check | u32 total | u16 n | n bytes
//              Running (done 0): the check running now, total and n 0. Done: the report's JSON
//              text, total bytes (at most kMaxSelftestReportBytes) of which these n (at most
//              kMaxSelftestChunkBytes) start at the fetch's offset.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "oa/device_facts.h"
#include "oa/kernel_work.h"
#include "oa/launch_record.h"

namespace oaprof::ipc::wire {

inline constexpr std::uint32_t kMagic = 0x4650414F;
inline constexpr std::uint16_t kVersion = 1;
inline constexpr std::size_t kHeaderBytes = 16;
inline constexpr std::size_t kMaxMessageBytes = 4096;
inline constexpr std::size_t kMaxNameBytes = 1024;

enum class Type : std::uint16_t {
  kHello = 1,
  kSnapshot = 2,
  kLaunch = 3,
  kOpen = 4,
  kSample = 5,
  kKernel = 6,
  kClose = 7,
  kSummary = 8,
  kSwitchSet = 9,
  kSelftest = 10,
  kSelftestFetch = 11,
  kOk = 0x80,
  kError = 0x81,
  kOpened = 0x82,
  kSampled = 0x83,
  kSelftestReport = 0x84,
};

enum class Phase : std::uint8_t { kBefore = 0, kAfter = 1 };

enum class ErrorCode : std::uint32_t {
  kBadMessage = 1,
  kUnsupportedVersion = 2,
  kUnknownType = 3,
  kDeviceError = 4,
  kUnknownLaunch = 5,
  kBusy = 6,           // another client holds the OA unit
  kNotAuthorised = 7,  // neither root nor in oaprofd's group
  kNoSession = 8,      // sample/kernel/close without an open session of this client
  kBadRequest = 9,     // well-formed but refused: unknown metric set, untrusted file, ...
};

struct Hello {
  std::uint32_t pid = 0;
  std::uint32_t flags = 0;
};

// What the simulator needs to know a launch's work before it runs (the 'before' snapshot comes
// before the record that names the kernel): the function's name and its work-items. Real devices
// ignore it. Names are the program's, so untrusted: bounded here, looked up in the catalogue
// only (bench::known_work), never shown.
inline constexpr std::size_t kMaxWorkNameBytes = 128;
inline constexpr std::uint64_t kMaxWorkItems = std::uint64_t{1} << 40;
struct WorkHint {
  std::string kernel_name;        // 1 to kMaxWorkNameBytes bytes
  std::uint64_t global_size = 0;  // the product of the launch's global sizes, 1 to kMaxWorkItems
  friend bool operator==(const WorkHint&, const WorkHint&) = default;
};
// Whether `hint` may be sent: a longer name is no catalogue kernel's, so the layer leaves it out.
bool sendable(const WorkHint& hint);

struct Snapshot {
  std::uint64_t launch_id = 0;
  Phase phase = Phase::kBefore;
  // Read the energy before answering instead of just after. The privileged side normally reads
  // it once the reply is on its way (off the program's path); auto replay asks for it first on
  // a launch's first 'before', so the window it measures lies inside the energy window.
  bool energy_first = false;
  // A 'before' only, and sendable(): encode() throws std::invalid_argument or std::length_error
  // for another.
  std::optional<WorkHint> work = std::nullopt;
};
inline constexpr std::uint8_t kSnapshotEnergyFirst = 0x80;

// The launch the layer reports is the core's record (oa/launch_record.h); the wire only carries it.
using oa::ClockCalibration;
using oa::kLaunchDrainFailed;
using oa::kLaunchKnownFlags;
using oa::kLaunchLayerError;
using oa::kLaunchNotBracketed;
using oa::kLaunchProgramIndex;
using oa::kLaunchSampled;
using oa::Launch;
using oa::LaunchApi;
using oa::SampledWindow;

// Strings in the daemon's messages are at most this long (paths, names, reasons).
inline constexpr std::size_t kMaxTextBytes = 512;
// Energy domains carried by kOpened and kSampled (power::Domain values, which oa cannot include).
inline constexpr std::size_t kMaxEnergyDomains = 8;
// The largest OA report: Xe2's 640-byte PEC64u64_B8_C8 (oa::kMaxReportBytes); the PEC64u64 that
// oaprofd streams is 576 bytes, i915 parts send 256.
inline constexpr std::size_t kMaxReportBytes = 640;

struct Open {
  std::uint32_t pid = 0;
  std::uint32_t flags = 0;
  std::string device = "auto";  // the client's --device: auto, or what the daemon serves
  std::string access = "mmio";
  std::string format = "101";
  std::string metric_set = "Builtin";
  std::string metrics_xml;  // empty: the daemon's metric directories
  std::string energy = "auto";
};

struct Opened {
  std::string label;   // "simulated" or the PCI address
  std::string detail;  // the register window's description
  std::uint16_t pci_id = 0;
  bool simulated = false;
  bool xe = false;     // xe drives the device (its snapshots are periodic reports)
  std::string format;  // the layout name the daemon parsed the request's format to
  std::string metric_set;
  std::string metrics_file;    // the XML the set came from; empty for the built-in set
  std::string energy_backend;  // empty: no energy; energy_reason says why
  std::vector<std::uint8_t> energy_domains;
  std::string energy_reason;
  oa::DeviceFacts facts;  // the device's topology and timestamp frequency, and their sources
};

inline constexpr std::uint8_t kSampleReport = 1;
inline constexpr std::uint8_t kSampleEnergy = 2;
// Further bits of kSampled's flags.
inline constexpr std::uint8_t kSampledConfigLost = 4;
inline constexpr std::uint8_t kSampledStreamLosses = 8;
inline constexpr std::uint8_t kSampledReadoutInterrupted = 16;

struct Sample {
  std::uint32_t report_id = 0;
  std::uint8_t what = kSampleReport;
};

struct EnergyValues {
  std::uint64_t time_ns = 0;
  std::vector<std::pair<std::uint8_t, std::uint64_t>> energy_uj;  // (domain, µJ)
};

// What the session's perf stream lost since it opened (gpu::PerfStreamCounts without samples).
struct StreamLosses {
  std::uint32_t reports_lost = 0;
  std::uint32_t buffer_lost = 0;
  friend bool operator==(const StreamLosses&, const StreamLosses&) = default;
};

struct Sampled {
  std::optional<std::vector<std::uint8_t>> report;
  std::optional<EnergyValues> energy;
  bool config_lost = false;
  bool readout_interrupted = false;           // gpu::CounterSource::readout_interrupted()
  std::optional<StreamLosses> stream_losses;  // absent: none so far
};

// Each figure of a kernel's work on the wire: a whole number exact in a double.
inline constexpr std::uint64_t kMaxWorkCount = std::uint64_t{1} << 53;
struct Kernel {
  bool running = false;
  // The kernel's known work, when the client knows it (a catalogue kernel on the simulator);
  // with running only. Fractions are rounded to whole numbers on the wire.
  std::optional<oa::KernelWork> work = std::nullopt;
};

struct Close {};

// Kernel replay across sets: reprogram the session's unit for another set of the same metric
// file (a set symbol, never a path).
struct SwitchSet {
  std::string metric_set;
};

// What a client measured per kernel in its session, sent before it closes, for the exporter's
// per-kernel series (daemon/exporter.h). The client's own figures, not the daemon's: the daemon
// bounds and labels them as such. At most kMaxSummaryKernels, names at most kMaxSummaryName
// bytes (shortened, visibly), so that a summary always fits a message.
inline constexpr std::size_t kMaxSummaryKernels = 16;
inline constexpr std::size_t kMaxSummaryName = 128;
struct KernelSummary {
  std::string kernel;
  std::uint64_t launches = 0;
  std::uint64_t gpu_ns = 0;
  std::uint64_t energy_uj = 0;
  friend bool operator==(const KernelSummary&, const KernelSummary&) = default;
};
struct Summary {
  std::vector<KernelSummary> kernels;
  // The client lets oaprofd's exporter show its kernel names to whoever reads the page
  // (exporter.h); without it its figures count only towards an aggregate without names.
  bool share_names = false;
};
inline constexpr std::uint8_t kSummaryShareNames = 1;

// oaprofd's selftest for a group member (daemon/daemon_service.h): what the client may choose,
// and nothing the daemon would act on beyond its own sessions' grant.
inline constexpr std::uint8_t kSelftestQuick = 1;
struct Selftest {
  bool quick = false;
  std::string device = "auto";  // as kOpen's: auto, or what the daemon serves
  std::string access;           // "" or "all": every read-out; else mmio, rpc or perf
};
// The report comes in chunks, so that a reply stays within kMaxMessageBytes however many checks
// and figures it has; the whole is bounded so that neither side holds more.
inline constexpr std::size_t kMaxSelftestChunkBytes = 3072;
inline constexpr std::size_t kMaxSelftestReportBytes = std::size_t{1} << 20;
struct SelftestFetch {
  std::uint32_t offset = 0;  // of the report's text, once done
};
struct SelftestReport {
  bool done = false;
  std::string check = {};  // running: the check running now ("" before the first)
  std::uint32_t total = 0;
  std::string chunk = {};  // done: the report's bytes from the fetch's offset
  friend bool operator==(const SelftestReport&, const SelftestReport&) = default;
};

struct Ok {};

struct Error {
  ErrorCode code = ErrorCode::kBadMessage;
  std::string message;
};

using Body = std::variant<Hello, Snapshot, Launch, Ok, Error, Open, Opened, Sample, Sampled, Kernel,
                          Close, Summary, SwitchSet, Selftest, SelftestFetch, SelftestReport>;

struct Message {
  std::uint32_t request_id = 0;
  Body body;
};

// Throws std::length_error, naming the field, when a string that names something (a path, a
// metric set, a device: every string of kOpen, and kOpened's format, metric_set, metrics_file and
// energy_backend) is longer than its limit: cut short it would name something else. Prose (error
// messages, labels, reasons, kernel names) is shortened instead, ending in " [...]".
std::vector<std::uint8_t> encode(const Message& message);

// A message that could not be decoded: what to reply and why.
struct DecodeError {
  ErrorCode code;
  std::uint32_t request_id;  // 0 when the header itself was unreadable
  std::string reason;
};

// Never throws; every length is checked against the buffer and the limits above.
std::variant<Message, DecodeError> decode(std::span<const std::uint8_t> bytes);

}  // namespace oaprof::ipc::wire
