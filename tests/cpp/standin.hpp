// The host stand-in for a kernel launch line (`kernel<<<grid, block, shared, stream>>>(args...)`)
// where no nvcc compiles one: the same launch through libeagle's eagle_cuda_launch, which records
// into a capture as cudaLaunchKernel does.
#ifndef EAGLE_TESTS_CPP_STANDIN_HPP
#define EAGLE_TESTS_CPP_STANDIN_HPP

#include <cstdint>
#include <vector>

#include "eagle/eagle.hpp"

namespace standin {

template <class... Args>
void launch(void *function, unsigned grid, unsigned block, unsigned shared, eagle::cuda::StreamHandle stream,
            Args... args)
{
    std::uint32_t g[3] = {grid, 1, 1}, b[3] = {block, 1, 1};
    std::vector<eagle_arg> slots = {eagle::exec::arg(args)...};
    eagle::detail::check(eagle_cuda_launch(0, function, g, b, shared,
                                           static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(stream)),
                                           slots.data(), static_cast<std::int32_t>(slots.size())),
                         "standin::launch");
}

} // namespace standin

#endif
