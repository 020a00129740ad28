// The kernels of kernels.ptx in CUDA C, for the CPU emulation of the driver (tests/fakecuda): the
// harness compiles them for the host and registers them under the same names.  On a real GPU the
// PTX is used; keep the two in step.

// y[i] = 2 * x[i] for i < n (float32)
extern "C" __global__ void scale2(const float *x, float *y, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] + x[i];
}

// *p += v (uint32, one thread; p device or pinned)
extern "C" __global__ void add_u32(unsigned *p, unsigned v)
{
    *p += v;
}

// *counter += 1; *cond = *counter < limit (uint32, one thread)
extern "C" __global__ void count_step(unsigned *counter, unsigned *cond, unsigned limit)
{
    unsigned c = *counter + 1;
    *counter = c;
    *cond = c < limit;
}
