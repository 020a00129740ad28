/*
 * The one-thread kernel that sets a conditional node's handle from a
 * one-cell uint32 array, as PTX text the driver compiles (cuModuleLoadData),
 * so that no CUDA compiler is needed anywhere:
 *
 *     eagle_set_condition(handle, cell, op, k): v = *cell;
 *         cudaGraphSetConditional(handle, op == 0 ? v != k : op == 1 ? v == k
 *                                 : op == 2 ? min(v, k) : op == 3 ? v >= k : k)
 *
 * cudaGraphSetConditional is a device-runtime builtin that nvcc and NVRTC
 * lower to a call of `.extern .func cudaGraphSetConditional(.b64, .b32)`;
 * ptxas leaves it as an undefined symbol for the driver's loader to bind,
 * the way it treats vprintf, so neither cudadevrt nor -rdc is needed.
 * PTX ISA 8.3 is what a CUDA 12.3 driver (the first with conditional nodes)
 * reads; the driver compiles the text for the GPU it runs on, so a low
 * target (sm_52) keeps it loadable on every GPU.  The cell
 * is read with a generic load: it may be device or pinned host memory.
 * The ops are enum condition_op (cuda_internal.h).  tests/test_cuda_decls.py
 * assembles this text with ptxas where one exists.
 */
#ifndef EAGLE_CUDA_CONDITION_PTX_H
#define EAGLE_CUDA_CONDITION_PTX_H

static const char condition_ptx[] =
    ".version 8.3\n"
    ".target sm_52\n"
    ".address_size 64\n"
    "\n"
    ".extern .func cudaGraphSetConditional\n"
    "(\n"
    "    .param .b64 cudaGraphSetConditional_param_0,\n"
    "    .param .b32 cudaGraphSetConditional_param_1\n"
    ");\n"
    "\n"
    ".visible .entry eagle_set_condition(\n"
    "    .param .u64 handle,\n"
    "    .param .u64 cell,\n"
    "    .param .u32 op,\n"
    "    .param .u32 k\n"
    ")\n"
    "{\n"
    "    .reg .pred %p<2>;\n"
    "    .reg .b32 %r<10>;\n"
    "    .reg .b64 %rd<3>;\n"
    "\n"
    "    ld.param.u64 %rd1, [handle];\n"
    "    ld.param.u64 %rd2, [cell];\n"
    "    ld.param.u32 %r1, [op];\n"
    "    ld.param.u32 %r2, [k];\n"
    "    ld.u32 %r3, [%rd2];\n"
    "    setp.ne.u32 %p1, %r3, %r2;\n"
    "    selp.u32 %r4, 1, 0, %p1;\n"
    "    selp.u32 %r5, 0, 1, %p1;\n"
    "    min.u32 %r6, %r3, %r2;\n"
    "    setp.ge.u32 %p1, %r3, %r2;\n"
    "    selp.u32 %r7, 1, 0, %p1;\n"
    "    mov.u32 %r9, %r2;\n"
    "    setp.eq.u32 %p1, %r1, 3;\n"
    "    selp.b32 %r9, %r7, %r9, %p1;\n"
    "    setp.eq.u32 %p1, %r1, 2;\n"
    "    selp.b32 %r9, %r6, %r9, %p1;\n"
    "    setp.eq.u32 %p1, %r1, 1;\n"
    "    selp.b32 %r9, %r5, %r9, %p1;\n"
    "    setp.eq.u32 %p1, %r1, 0;\n"
    "    selp.b32 %r9, %r4, %r9, %p1;\n"
    "    {\n"
    "    .param .b64 param0;\n"
    "    st.param.b64 [param0+0], %rd1;\n"
    "    .param .b32 param1;\n"
    "    st.param.b32 [param1+0], %r9;\n"
    "    call.uni cudaGraphSetConditional, (param0, param1);\n"
    "    }\n"
    "    ret;\n"
    "}\n";

#endif /* EAGLE_CUDA_CONDITION_PTX_H */
