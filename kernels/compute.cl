// Compute micro-benchmarks of the catalogue: every <op>[_<type>]_<width> of one element type in one
// program, so a run compiles three programs (sp, dp, int) instead of one per kernel. kernel_runner
// builds it with -DELEM_SP, -DELEM_DP (with fp64) or -DELEM_INT, and -cl-mad-enable.
//
// Each work-item reads its start value from `in`, applies the operation `iterations` times with an
// operand from __constant memory (the method: operands in global memory were not cached and
// throughput collapsed), and stores the result so the compiler cannot delete the work. `in` is
// never written, so every launch computes the same thing and repeats are clean.
//
// Variants of each kernel NAME (reference/method.md "Kernels"):
//   NAME            loop on private memory (the best; the default)
//   NAME_loop       loop updating the result in __global memory
//   NAME_unrolled   private loop unrolled ×64
//   NAME_single     a single operation (launch and memory overheads)
// `outer` repeats the whole chain (power variants); each repeat restarts from in[i] + x * zero
// with zero = 0 passed at run time, which keeps the repeats dependent on each other (the compiler
// cannot hoist them) while every repeat computes the same values, so the host checks one chain.
#ifdef ELEM_DP
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define STEP_MAD(x, m) mad((x), (m), (m))
#define STEP_ADD(x, m) ((x) + (m))
#define STEP_SUB(x, m) ((x) - (m))
#define STEP_MUL(x, m) ((x) * (m))
#define STEP_DIV(x, m) ((x) / (m))

#define PASTE_(a, b) a##b
#define PASTE(a, b) PASTE_(a, b)

#define S4(s) s s s s
#define S16(s) S4(s) S4(s) S4(s) S4(s)
#define S64(s) S16(s) S16(s) S16(s) S16(s)

// Every variant takes the same arguments, so the host sets them up once for all.
#define ARGS(T, E)                                                                            \
  __global const T *in, __global T *out, __constant T *operand, const int iterations,         \
      const int outer, const E zero

#define KERNELS(NAME, T, E, STEP)                                                             \
  __kernel void NAME(ARGS(T, E)) {                                                            \
    const size_t i = get_global_id(0);                                                        \
    const T start = in[i];                                                                    \
    const T m = operand[get_local_id(0)];                                                     \
    T x = start;                                                                              \
    for (int o = 0; o < outer; ++o) {                                                         \
      x = start + x * zero;                                                                   \
      for (int k = 0; k < iterations; ++k) x = STEP(x, m);                                    \
    }                                                                                         \
    out[i] = x;                                                                               \
  }                                                                                           \
  __kernel void PASTE(NAME, _loop)(ARGS(T, E)) {                                              \
    const size_t i = get_global_id(0);                                                        \
    const size_t j = get_local_id(0);                                                         \
    const T start = in[i];                                                                    \
    out[i] = start;                                                                           \
    for (int o = 0; o < outer; ++o) {                                                         \
      out[i] = start + out[i] * zero;                                                         \
      for (int k = 0; k < iterations; ++k) out[i] = STEP(out[i], operand[j]);                 \
    }                                                                                         \
  }                                                                                           \
  __kernel void PASTE(NAME, _unrolled)(ARGS(T, E)) {                                          \
    const size_t i = get_global_id(0);                                                        \
    const T start = in[i];                                                                    \
    const T m = operand[get_local_id(0)];                                                     \
    T x = start;                                                                              \
    for (int o = 0; o < outer; ++o) {                                                         \
      x = start + x * zero;                                                                   \
      int k = 0;                                                                              \
      for (; k + 64 <= iterations; k += 64) {                                                 \
        S64(x = STEP(x, m);)                                                                  \
      }                                                                                       \
      for (; k < iterations; ++k) x = STEP(x, m);                                             \
    }                                                                                         \
    out[i] = x;                                                                               \
  }                                                                                           \
  __kernel void PASTE(NAME, _single)(ARGS(T, E)) {                                            \
    const size_t i = get_global_id(0);                                                        \
    out[i] = STEP(in[i], operand[get_local_id(0)]);                                           \
  }

#define WIDTHS(PREFIX, E, STEP)                                                               \
  KERNELS(PASTE(PREFIX, scalar), E, E, STEP)                                                  \
  KERNELS(PASTE(PREFIX, vect2), PASTE(E, 2), E, STEP)                                         \
  KERNELS(PASTE(PREFIX, vect4), PASTE(E, 4), E, STEP)                                         \
  KERNELS(PASTE(PREFIX, vect8), PASTE(E, 8), E, STEP)                                         \
  KERNELS(PASTE(PREFIX, vect16), PASTE(E, 16), E, STEP)

// Prefixes end in "_": some implementations (PoCL) define builtin names such as `mad` as
// object-like macros, which would rename a bare `mad` token inside the kernel names.
#if defined(ELEM_SP)
WIDTHS(add_, float, STEP_ADD)
WIDTHS(sub_, float, STEP_SUB)
WIDTHS(mul_, float, STEP_MUL)
WIDTHS(div_, float, STEP_DIV)
WIDTHS(mad_, float, STEP_MAD)
#elif defined(ELEM_DP)
WIDTHS(add_dp_, double, STEP_ADD)
WIDTHS(sub_dp_, double, STEP_SUB)
WIDTHS(mul_dp_, double, STEP_MUL)
WIDTHS(div_dp_, double, STEP_DIV)
WIDTHS(mad_dp_, double, STEP_MAD)
#elif defined(ELEM_INT)
// Integer kernels compute in uint: wrap-around is defined there, signed overflow is not.
WIDTHS(add_int_, uint, STEP_ADD)
WIDTHS(sub_int_, uint, STEP_SUB)
WIDTHS(mul_int_, uint, STEP_MUL)
WIDTHS(div_int_, uint, STEP_DIV)
#else
#error "define one of ELEM_SP, ELEM_DP, ELEM_INT"
#endif
