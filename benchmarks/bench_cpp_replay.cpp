// A C++ program using only eagle's C++ header and libeagle: a host program of 100 kernels (x *= c and
// x += d alternately, on one plane) replayed, timed per replay.  bench_cpp_replay.py compiles and runs
// it beside Python's g.launch() of the same graph.
//
// Usage: bench_cpp_replay N REPLAYS REPEAT  prints "launch1 <s> launchR <s> checksum <hex>":
// the median seconds of one run(1) call, of one replay inside run(REPLAYS), and the bits of x after
// one run(1) from x[i] = 1 + i / N (for the Python side to compare).
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "eagle/eagle.hpp"

extern "C" void scale(std::int64_t b, std::int64_t e, const eagle_arg *a)
{
    double *x = static_cast<double *>(a[0].ptr), c = a[1].f64;
    for (std::int64_t i = b; i < e; ++i)
        x[i] *= c;
}

extern "C" void shift(std::int64_t b, std::int64_t e, const eagle_arg *a)
{
    double *x = static_cast<double *>(a[0].ptr), d = a[1].f64;
    for (std::int64_t i = b; i < e; ++i)
        x[i] += d;
}

namespace {

double median_seconds(eagle::exec::Program &program, std::int64_t replays, int repeat)
{
    std::vector<double> times;
    program.run(replays); // warm-up: the team's start and first touches are not the figure
    for (int r = 0; r < repeat; ++r) {
        auto start = std::chrono::steady_clock::now();
        program.run(replays);
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    return times[times.size() / 2];
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s N REPLAYS REPEAT\n", argv[0]);
        return 2;
    }
    std::int64_t n = std::atoll(argv[1]), replays = std::atoll(argv[2]);
    int repeat = std::atoi(argv[3]);
    using namespace eagle::exec;
    std::vector<double> x(static_cast<std::size_t>(n));
    Program program;
    for (int k = 0; k < 100; ++k)
        program.kernel({k % 2 == 0 ? scale : shift,
                        {arg(x.data()), arg(k % 2 == 0 ? 0.999 : 0.001)},
                        n,
                        EAGLE_PER_SAMPLE,
                        {access(x.data(), n, Role::ReadWrite)}});
    program.finalize();
    for (std::int64_t i = 0; i < n; ++i)
        x[static_cast<std::size_t>(i)] = 1.0 + static_cast<double>(i) / static_cast<double>(n);
    program.run(1);
    std::uint64_t checksum = 0;
    for (double v : x) {
        std::uint64_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        checksum = checksum * 1099511628211u ^ bits;
    }
    double one = median_seconds(program, 1, repeat);
    double many = median_seconds(program, replays, repeat) / static_cast<double>(replays);
    std::printf("launch1 %.9e launchR %.9e checksum %016" PRIx64 "\n", one, many, checksum);
    return 0;
}
