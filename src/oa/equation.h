// The RPN equations of IGT metric sets (`A 7 READ $EuCoresTotalCount UDIV …`), compiled once when
// a set is imported so that an unknown token, a bad operand count or a reference to a missing
// counter is an import-time error, and evaluated per row with the arithmetic of the C that Mesa's
// and IGT's generators emit (each operator one statement on typed temporaries, see Operands),
// and division by zero gives 0, as in IGT's generated code. Unlike IGT, a value that a division by
// zero went into is marked (EquationValue::div_by_zero), so that reports can leave it empty
// instead of printing a 0 that was never measured.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "oa/delta.h"

namespace oaprof::oa {

class MetricProgram;

// The `$Name` variables that describe the device rather than a counter.
// The Xe2/Xe3 counts only the device can give (xe's GT topology and engine queries): their names
// without '$', each unknown in a DeviceVariables until set.
std::vector<std::string> device_query_variables();

struct DeviceVariables {
  std::uint64_t eu_cores_total = 0;           // $EuCoresTotalCount
  std::uint64_t eu_slices_total = 0;          // $EuSlicesTotalCount
  std::uint64_t eu_subslices_total = 0;       // $EuSubslicesTotalCount
  std::uint64_t eu_dual_subslices_total = 0;  // $EuDualSubslicesTotalCount (Gen12)
  std::uint64_t eu_threads_count = 7;         // $EuThreadsCount: hardware threads per EU
  std::uint64_t slice_mask = 0;               // $SliceMask
  std::uint64_t subslice_mask = 0;            // $SubsliceMask: bit s*max_subslices+ss
  std::uint64_t dual_subslice_mask = 0;       // $DualSubsliceMask (Gen12)
  std::uint64_t timestamp_frequency_hz = 0;   // $GpuTimestampFrequency
  std::uint64_t gpu_min_freq_hz = 0;          // $GpuMinFrequency
  std::uint64_t gpu_max_freq_hz = 0;          // $GpuMaxFrequency
  std::uint64_t sku_revision_id = 0;          // $SkuRevisionId
  // $QueryMode: 1 when deltas come from snapshots around a workload (MI_REPORT_PERF_COUNT or
  // MMIO), as in oaprof's per-kernel use; 0 for periodic sampling of the OA buffer.
  std::uint64_t query_mode = 1;
  // Xe2/Xe3 files (IGT lib/xe/oa-configs/oa-{lnl,bmg,ptl}.xml) also read these. 0 where the
  // device has not said: such a variable is in `unknown` and the counters that read it are
  // unavailable rather than computed from a made-up count.
  std::uint64_t xe_core_mask = 0;          // $GtXeCore<N>: bit N = Xe-core N, numbered flat
  std::uint64_t l3_bank_total = 0;         // $L3BankTotalCount
  std::uint64_t l3_node_total = 0;         // $L3NodeTotalCount
  std::uint64_t sqidi_total = 0;           // $SqidiTotalCount
  std::uint64_t geometry_pipe_total = 0;   // $GeometryPipeTotalCount
  std::uint64_t depth_pipe_total = 0;      // $DepthPipeTotalCount
  std::uint64_t color_pipe_total = 0;      // $ColorPipeTotalCount
  std::uint64_t compute_engine_total = 0;  // $ComputeEngineTotalCount (compute engines)
  std::uint64_t copy_engine_total = 0;     // $CopyEngineTotalCount (copy engines)
  // Names (without '$') of the variables above whose value the device did not give.
  std::vector<std::string> unknown = device_query_variables();
  bool known(std::string_view name) const;
  // Sets a device-query variable's value and removes it from `unknown`.
  void set_known(std::string_view name, std::uint64_t value);
};

// The name (without '$') of every device variable, and the value of one; nullopt when `name`
// is not a device variable. Besides these, equations may test one slice or subslice with
// $GtSlice<N> (bit N of $SliceMask) and $GtSlice<N>XeCore<M> or $GtSlice<N>DualSubslice<M>
// (bit 8·N + M of $SubsliceMask), as Mesa's gen_perf.py resolves them.
std::span<const std::string_view> device_variable_names();
std::optional<std::uint64_t> device_variable(const DeviceVariables& vars, std::string_view name);

// One value on the evaluation stack: the C type Mesa's generated code gives it.
struct EquationValue {
  bool is_float = false;
  std::uint64_t u = 0;
  double f = 0;
  // A UDIV or FDIV by zero went into this value (directly, through an operand, or through a
  // referenced counter): the number is IGT's 0-for-x/0 convention, not a figure.
  bool div_by_zero = false;

  static EquationValue of_uint(std::uint64_t v) { return {false, v, 0, false}; }
  static EquationValue of_float(double v) { return {true, 0, v, false}; }
  double as_double() const { return is_float ? f : static_cast<double>(u); }
  // A double converted as `uint64_t t = d;` does on x86-64: truncated; 2^64 and above give 0
  // (what gcc's conversion yields there; IGT's library shows it). C leaves negative and NaN
  // undefined: both give 0 here.
  // Inline: every operator of every equation of every row converts both operands.
  std::uint64_t as_uint() const {
    if (!is_float) return u;
    if (!(f >= 0.0) || f >= 18446744073709551616.0) return 0;  // NaN, negative, 2^64 and above
    return static_cast<std::uint64_t>(f);
  }
};

struct EquationInputs {
  const CounterDeltas& deltas;
  const DeviceVariables& vars;
  // Values of the counters of the same set, by index; only those an equation references must be
  // evaluated already (MetricSet keeps that order).
  std::span<const EquationValue> counters = {};
};

class Equation {
 public:
  // Maps a `$Name` that is not a device variable to the index of a counter of the same set;
  // nullopt when there is no such counter.
  using CounterResolver = std::function<std::optional<int>(std::string_view symbol)>;

  Equation() = default;

  // Throws std::invalid_argument naming the token and its position when the text is not a valid
  // equation: unknown token or variable, READ of a counter that does not exist, too few operands,
  // or not exactly one value left.
  static Equation compile(std::string_view text, const CounterResolver& resolve = {});

  EquationValue evaluate(const EquationInputs& in) const;

  const std::string& text() const { return text_; }
  bool empty() const { return ops_.empty(); }
  // Indexes of the counters the equation reads through `$Name`.
  const std::vector<int>& counter_references() const { return references_; }
  // The first device variable the equation reads that `vars` marks unknown; empty when none.
  std::string_view unknown_variable(const DeviceVariables& vars) const;

  enum class OpCode : std::uint8_t {
    kConst,
    kConstFloat,
    kVariable,
    kCounter,
    kSliceAvailable,
    kSubsliceAvailable,
    kXeCoreAvailable,
    kReadA,
    kReadB,
    kReadC,
    kReadGpuTime,
    kReadGpuClock,
    kReadPerfCnt,
    kUAdd,
    kUSub,
    kUMul,
    kUDiv,
    kUMin,
    kUMax,
    kFAdd,
    kFSub,
    kFMul,
    kFDiv,
    kFMin,
    kFMax,
    kAnd,
    kOr,
    kShl,
    kShr,
    kUGt,
    kUGte,
    kULt,
    kULte,
    kEq,
    kNeq,
    kLogicalAnd,
    kLogicalOr,
  };

 private:
  // Compiles a set's equations further, with their types (metric_program.h): it reads ops_.
  friend class MetricProgram;
  // Turns the text into ops_ one token at a time (equation.cc).
  class Compiler;
  struct Instruction {
    OpCode code;
    std::uint32_t index = 0;  // READ index, counter index or device-variable index
    std::uint64_t u = 0;
    double f = 0;
  };
  // The value an operand instruction (kConst to kReadPerfCnt) pushes, written into `out`: built
  // elsewhere and copied in, the value cost a stalled load on every push.
  static void load_operand(const Instruction& op, const EquationInputs& in, EquationValue& out);
  // What a binary operator (kUAdd to kLogicalOr) leaves in place of `a` and `b`.
  static EquationValue apply(OpCode code, const EquationValue& a, const EquationValue& b);

  std::vector<Instruction> ops_;
  std::vector<int> references_;
  std::string text_;
  int max_depth_ = 0;
};

}  // namespace oaprof::oa
