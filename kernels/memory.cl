// Memory micro-benchmarks of the catalogue and the empty kernel, in one program. kernel_runner
// builds it once per device, with -DUSE_FP64 when the device has double precision.
//
// load_store[_dp]_<width>: out[j] = in[j] over the whole buffer (every byte read and written once
//   per launch; idempotent). Each work-group copies one contiguous chunk and its work-items
//   interleave inside it, so neighbouring work-items touch neighbouring elements (coalesced on a
//   GPU) and a CPU device walks each chunk in order.
// pchase: a pointer chase through next[], which the host fills with next[j] = (j + stride) % n.
//   Work-item g starts at g * hops * stride (contiguous segments, so the work-items together walk
//   the data once when global × hops × stride = n) and stores where it ended, which the host knows
//   in closed form. pchase_bw runs it on many work-items, pchase_lat on one.
// empty: get_global_id(0) only, the base cost of a launch.
#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define PASTE_(a, b) a##b
#define PASTE(a, b) PASTE_(a, b)

#define LOAD_STORE(NAME, T)                                                                   \
  __kernel void NAME(__global const T* in, __global T* out, const uint n) {                   \
    const ulong groups = get_num_groups(0);                                                   \
    const ulong chunk = n / groups + (n % groups != 0);                                       \
    const ulong begin = get_group_id(0) * chunk;                                              \
    const ulong end = min((ulong)n, begin + chunk);                                           \
    const ulong step = get_local_size(0);                                                     \
    for (ulong j = begin + get_local_id(0); j < end; j += step) out[j] = in[j];               \
  }

#define LOAD_STORE_WIDTHS(PREFIX, E)                      \
  LOAD_STORE(PASTE(PREFIX, scalar), E)                   \
  LOAD_STORE(PASTE(PREFIX, vect2), PASTE(E, 2))          \
  LOAD_STORE(PASTE(PREFIX, vect4), PASTE(E, 4))          \
  LOAD_STORE(PASTE(PREFIX, vect8), PASTE(E, 8))          \
  LOAD_STORE(PASTE(PREFIX, vect16), PASTE(E, 16))

LOAD_STORE_WIDTHS(load_store_, float)
#ifdef USE_FP64
LOAD_STORE_WIDTHS(load_store_dp_, double)
#endif

__kernel void pchase(__global const uint* next, __global uint* out, const int hops,
                     const uint stride, const uint n) {
  const size_t g = get_global_id(0);
  uint j = (uint)(((ulong)g * (ulong)hops * stride) % n);
  for (int k = 0; k < hops; ++k) j = next[j];
  out[g] = j;
}

__kernel void empty(void) {
  const size_t i = get_global_id(0);
  (void)i;
}
