// Compute micro-benchmarks of the catalogue, one source for every <op>[_<type>]_<width>.
// kernel_runner builds it once per kernel with:
//   -DKERNEL_NAME=mad_vect4 -DT=float4 -DOP_MAD   (and -DUSE_FP64 for double, -cl-mad-enable for mad)
// Each work-item reads its start value from `in`, applies the operation `iterations` times with
// an operand from __constant memory (the method: operands in global memory were not cached and
// throughput collapsed), and stores the result so the compiler cannot delete the work. `in` is
// never written, so every launch computes the same thing and repeats are clean.
#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#if defined(OP_MAD)
#define STEP(x, m) mad((x), (m), (m))
#elif defined(OP_ADD)
#define STEP(x, m) ((x) + (m))
#elif defined(OP_SUB)
#define STEP(x, m) ((x) - (m))
#elif defined(OP_MUL)
#define STEP(x, m) ((x) * (m))
#elif defined(OP_DIV)
#define STEP(x, m) ((x) / (m))
#else
#error "define one of OP_MAD, OP_ADD, OP_SUB, OP_MUL, OP_DIV"
#endif

__kernel void KERNEL_NAME(__global const T* in, __global T* out, __constant T* operand,
                          const int iterations) {
  const size_t i = get_global_id(0);
  T x = in[i];
  const T m = operand[get_local_id(0)];
  for (int k = 0; k < iterations; ++k) {
    x = STEP(x, m);
  }
  out[i] = x;
}
