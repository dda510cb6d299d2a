"""A pyopencl program, as the issue found it: Python loads libOpenCL privately (RTLD_LOCAL), so an
LD_PRELOAD library cannot find the loader's functions through RTLD_NEXT. It launches `scale`
exactly three times and prints what the kernels computed; oaprof must not change either."""
import sys

import numpy as np
import pyopencl as cl

SOURCE = """
__kernel void scale(__global float *x, float factor) {
  size_t i = get_global_id(0);
  x[i] = x[i] * factor + 1.0f;
}
"""


def main():
    platforms = cl.get_platforms()
    devices = [d for p in platforms for d in p.get_devices()]
    if not devices:
        print("no OpenCL device", file=sys.stderr)
        return 2
    context = cl.Context([devices[0]])
    queue = cl.CommandQueue(context)
    program = cl.Program(context, SOURCE).build()
    host = np.arange(4096, dtype=np.float32)
    buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    kernel = cl.Kernel(program, "scale")
    for factor in (2.0, 0.5, 3.0):
        kernel.set_args(buffer, np.float32(factor))
        cl.enqueue_nd_range_kernel(queue, kernel, host.shape, None)
    cl.enqueue_copy(queue, host, buffer)
    queue.finish()
    print(f"launches made: 3, checksum {float(host.sum()):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
