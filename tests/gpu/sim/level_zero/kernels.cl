// Kernels of the Level Zero test programs, compiled to SPIR-V at build time. On the simulated
// driver they compute nothing: only their names, arguments and group counts matter.
kernel void scale(global float* x, float factor) { x[get_global_id(0)] *= factor; }

kernel void add_one(global int* x) { x[get_global_id(0)] += 1; }

kernel __attribute__((reqd_work_group_size(16, 1, 1))) void fixed_group(global int* x,
                                                                         local int* scratch) {
  scratch[get_local_id(0)] = x[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  x[get_global_id(0)] = scratch[15 - get_local_id(0)];
}

// Named after kernel_runner's catalogue kernel, so that under oaprof the simulator counts that
// kernel's known work (bench::known_work: only its name and work-items matter).
kernel void mad_vect4(global float4* x) { x[get_global_id(0)] = mad(x[get_global_id(0)], 2, 1); }

// The simulated driver's GPU hang (kHangKernel in src/gpu/sim/level_zero/driver_state.h): a launch
// of it never ends and the device is lost.
kernel void sim_hang(global int* x) { x[get_global_id(0)] = 0; }
