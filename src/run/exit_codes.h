// Exit status of oaprof's own failures, one table for every tool. When a profiled program ran,
// oaprof exits with the program's status instead (128 + N when it was killed by signal N), except
// that a program that succeeded while the session broke (kExitSession) does not hide that.
#pragma once

namespace oaprof::run {

inline constexpr int kExitUsage = 2;
inline constexpr int kExitSetup = 3;
inline constexpr int kExitOutput = 4;
// The GPU session broke during the run (oaprofd went away, a snapshot or the restore failed):
// the rows written are complete, launches after the break were not measured.
inline constexpr int kExitSession = 5;
// Application replay: the runs launched different sequences, so no joined file was written (each
// pass's own file is kept).
inline constexpr int kExitPassesDiffer = 6;
inline constexpr int kExitCannotRun = 127;

}  // namespace oaprof::run
