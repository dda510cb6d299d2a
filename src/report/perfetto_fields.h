// The field numbers of the few Perfetto trace messages oaprof writes, from Perfetto's published
// protos (the trace format is a stable, documented wire format: numbers are never reused).
// Source: github.com/google/perfetto @ ec5d16b14b743ba6063d720956d6d6af6610fd72 (2026-08-22):
//   protos/perfetto/trace/trace.proto                       Trace
//   protos/perfetto/trace/trace_packet.proto                TracePacket
//   protos/perfetto/trace/clock_snapshot.proto              ClockSnapshot, ClockSnapshot.Clock
//   protos/perfetto/common/builtin_clock.proto              BuiltinClock
//   protos/perfetto/trace/track_event/track_descriptor.proto    TrackDescriptor
//   protos/perfetto/trace/track_event/process_descriptor.proto  ProcessDescriptor
//   protos/perfetto/trace/track_event/thread_descriptor.proto   ThreadDescriptor
//   protos/perfetto/trace/track_event/counter_descriptor.proto  CounterDescriptor
//   protos/perfetto/trace/track_event/track_event.proto         TrackEvent
//   protos/perfetto/trace/track_event/debug_annotation.proto    DebugAnnotation
// The same numbers hold in the older revisions read alongside (track_event.proto @ 246b14de,
// trace_packet.proto @ a7c2f7a7), except double_counter_value (44), which is newer than those.
#pragma once

#include <cstdint>

namespace oaprof::report::perfetto {

// Trace
inline constexpr std::uint32_t kTracePacket = 1;  // repeated TracePacket packet = 1

// TracePacket
inline constexpr std::uint32_t kPacketClockSnapshot = 6;
inline constexpr std::uint32_t kPacketTimestamp = 8;
inline constexpr std::uint32_t kPacketTrustedSequenceId = 10;  // trusted_packet_sequence_id
inline constexpr std::uint32_t kPacketTrackEvent = 11;
inline constexpr std::uint32_t kPacketSequenceFlags = 13;
inline constexpr std::uint32_t kPacketTimestampClockId = 58;
inline constexpr std::uint32_t kPacketTrackDescriptor = 60;
inline constexpr std::uint32_t kSeqIncrementalStateCleared = 1;  // SequenceFlags

// ClockSnapshot / ClockSnapshot.Clock / BuiltinClock
inline constexpr std::uint32_t kClockSnapshotClocks = 1;
inline constexpr std::uint32_t kClockId = 1;
inline constexpr std::uint32_t kClockTimestamp = 2;
inline constexpr std::uint32_t kBuiltinClockMonotonic = 3;
inline constexpr std::uint32_t kBuiltinClockBoottime = 6;

// TrackDescriptor
inline constexpr std::uint32_t kTrackUuid = 1;
inline constexpr std::uint32_t kTrackName = 2;
inline constexpr std::uint32_t kTrackProcess = 3;
inline constexpr std::uint32_t kTrackThread = 4;
inline constexpr std::uint32_t kTrackParentUuid = 5;
inline constexpr std::uint32_t kTrackCounter = 8;

// ProcessDescriptor
inline constexpr std::uint32_t kProcessPid = 1;
inline constexpr std::uint32_t kProcessName = 6;

// ThreadDescriptor
inline constexpr std::uint32_t kThreadPid = 1;
inline constexpr std::uint32_t kThreadTid = 2;
inline constexpr std::uint32_t kThreadName = 5;

// CounterDescriptor
inline constexpr std::uint32_t kCounterUnitName = 6;

// TrackEvent and TrackEvent.Type
inline constexpr std::uint32_t kEventDebugAnnotations = 4;
inline constexpr std::uint32_t kEventType = 9;
inline constexpr std::uint32_t kEventTrackUuid = 11;
inline constexpr std::uint32_t kEventCategories = 22;
inline constexpr std::uint32_t kEventName = 23;
inline constexpr std::uint32_t kEventDoubleCounterValue = 44;
inline constexpr std::uint32_t kTypeSliceBegin = 1;
inline constexpr std::uint32_t kTypeSliceEnd = 2;
inline constexpr std::uint32_t kTypeInstant = 3;
inline constexpr std::uint32_t kTypeCounter = 4;

// DebugAnnotation
inline constexpr std::uint32_t kAnnotationUintValue = 3;
inline constexpr std::uint32_t kAnnotationDoubleValue = 5;
inline constexpr std::uint32_t kAnnotationStringValue = 6;
inline constexpr std::uint32_t kAnnotationName = 10;

}  // namespace oaprof::report::perfetto
