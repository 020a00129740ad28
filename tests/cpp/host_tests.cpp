// The host executor, the schedule rule, the branch runner and the guard, from C++; test_cpp.py
// runs the same kernels (kernels.c) through eagle.Graph and compares the bits.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "harness.hpp"

using eagle::exec::access;
using eagle::exec::arg;
using eagle::exec::Call;
using eagle::exec::Role;

namespace {

eagle_kernel_fn kernel(std::uintptr_t address) { return reinterpret_cast<eagle_kernel_fn>(address); }

struct Kernels {
    eagle_kernel_fn scale, shift, axpy;
};

// Branch b's chain over x, as test_cpp.py's chains(): x *= 1 + 0.01k, x += 0.25k alternately.
std::vector<Call> chain(const Kernels &k, double *x, std::int64_t n, int length)
{
    std::vector<Call> calls;
    for (int j = 0; j < length; ++j) {
        bool even = j % 2 == 0;
        double c = even ? 1.0 + 0.01 * j : 0.25 * j;
        calls.push_back({even ? k.scale : k.shift, {arg(x), arg(c)}, n, EAGLE_PER_SAMPLE,
                         {access(x, n, Role::ReadWrite)}});
    }
    return calls;
}

} // namespace

EXPORT int cpp_resolve(int group, int branches, const std::int64_t *samples, const std::uint8_t *native,
                       std::int64_t n, int threads, int *out)
{
    return harness::run([&] {
        std::vector<eagle::exec::NodeShape> nodes;
        for (std::int64_t i = 0; i < n; ++i)
            nodes.push_back({samples[i], native[i] != 0});
        *out = static_cast<int>(eagle::exec::resolve(group != 0, branches, nodes, threads));
    });
}

// A fork of `nplanes` chains, then one stage per plane: acc = (0.5 + i) * plane_i + acc; run
// `replays` times.  *schedule: the fork's schedule (resolve, the team of now).
EXPORT int cpp_fork_join(std::uintptr_t scale, std::uintptr_t shift, std::uintptr_t axpy, double **planes,
                         int nplanes, double *acc, std::int64_t n, int length, std::int64_t replays, int *schedule)
{
    return harness::run([&] {
        Kernels k{kernel(scale), kernel(shift), kernel(axpy)};
        std::vector<eagle::exec::NodeShape> nodes(static_cast<std::size_t>(nplanes * length), {n, true});
        eagle::exec::Schedule fork = eagle::exec::resolve(true, nplanes, nodes);
        *schedule = static_cast<int>(fork);
        eagle::exec::Program program;
        program.stage(fork);
        for (int b = 0; b < nplanes; ++b) {
            if (b)
                program.branch();
            for (const Call &call : chain(k, planes[b], n, length))
                program.kernel(call);
        }
        for (int i = 0; i < nplanes; ++i)
            program.stage().kernel({k.axpy,
                                    {arg(planes[i]), arg(acc), arg(0.5 + i)},
                                    n,
                                    EAGLE_PER_SAMPLE,
                                    {access(planes[i], n, Role::Read), access(acc, n, Role::ReadWrite)}});
        program.finalize().run(replays);
    });
}

// runHostBranches over nplanes chains.
EXPORT int cpp_run_branches(std::uintptr_t scale, std::uintptr_t shift, double **planes, int nplanes,
                            std::int64_t n, int length, std::int64_t replays)
{
    return harness::run([&] {
        Kernels k{kernel(scale), kernel(shift), nullptr};
        std::vector<std::vector<Call>> branches;
        for (int b = 0; b < nplanes; ++b)
            branches.push_back(chain(k, planes[b], n, length));
        eagle::exec::runHostBranches(branches, replays);
    });
}

// out64[0] = sum of x, out64[1] = max of x; out32[0] = sum of x32: fixed-order reductions.
EXPORT int cpp_reduce(const double *x, const float *x32, std::int64_t n, double *out64, float *out32)
{
    return harness::run([&] {
        eagle::exec::Program program;
        program.reduce(x, &out64[0], n, eagle::exec::Op::Sum)
            .reduce(x, &out64[1], n, eagle::exec::Op::Max)
            .reduce(x32, &out32[0], n, eagle::exec::Op::Sum)
            .finalize()
            .run();
    });
}

// A device-style loop (While over *cell, at most max_iters turns: decrement the cell, x *= 2),
// then an if/else on *flag (x += 1, else x -= 1), then a per-sample mix, on logical size `logical`.
EXPORT int cpp_control(std::uintptr_t scale, std::uintptr_t shift, std::uintptr_t decrement, std::uintptr_t mix,
                       std::uint32_t *cell, const std::uint32_t *flag, double *x, double *out, std::int64_t n,
                       std::int64_t max_iters, std::int64_t logical)
{
    return harness::run([&] {
        eagle::exec::Program body;
        body.kernel({kernel(decrement), {arg(cell)}, 1, 0, {access(cell, 1, Role::ReadWrite)}})
            .kernel({kernel(scale), {arg(x), arg(2.0)}, n, EAGLE_PER_SAMPLE, {access(x, n, Role::ReadWrite)}});
        eagle::exec::Program then, otherwise;
        then.kernel({kernel(shift), {arg(x), arg(1.0)}, n, EAGLE_PER_SAMPLE, {access(x, n, Role::ReadWrite)}});
        otherwise.kernel({kernel(shift), {arg(x), arg(-1.0)}, n, EAGLE_PER_SAMPLE, {access(x, n, Role::ReadWrite)}});
        eagle::exec::Program program;
        program.loop(cell, eagle::exec::Loop::While, max_iters, std::move(body))
            .ifThenElse(flag, std::move(then), std::move(otherwise))
            .kernel({kernel(mix),
                     {arg(x), arg(out)},
                     n,
                     EAGLE_PER_SAMPLE,
                     {access(x, n, Role::Read), access(out, n, Role::Write)}})
            .finalize()
            .setLogicalSize(logical)
            .run();
    });
}

// Errors carry libeagle's status and message; a moved-from Program says so by name.
EXPORT int cpp_errors(char *message, std::size_t size)
{
    return harness::run([&] {
        std::string what;
        eagle::exec::Program program;
        try {
            program.kernel({nullptr, {}, 1});
            CHECK(false);
        } catch (const eagle::Error &e) {
            CHECK(e.status() == EAGLE_ERR_ARG);
            what = e.what();
        }
        CHECK(what.rfind("eagle::exec::Program::kernel: eagle_add_kernel", 0) == 0);
        eagle::exec::Program unfinished;
        try {
            unfinished.run();
            CHECK(false);
        } catch (const eagle::Error &e) {
            CHECK(e.status() == EAGLE_ERR_STATE);
            what = e.what();
        }
        CHECK(what.rfind("eagle::exec::Program::run: eagle_run: ", 0) == 0);
        eagle::exec::Program moved = std::move(unfinished);
        EXPECT_THROW(eagle::Error, unfinished.stage(), what);
        CHECK(what.find("moved from") != std::string::npos);
        std::strncpy(message, what.c_str(), size - 1);
        message[size - 1] = '\0';
    });
}

namespace {
// The spin kernel's handshake: entered once a run is inside the kernel, released to let it end.
std::atomic<int> entered{0}, released{0};

void spin(std::int64_t, std::int64_t, const eagle_arg *)
{
    entered.store(1);
    while (!released.load())
        std::this_thread::yield();
}

void wait_for(const std::atomic<int> &flag)
{
    while (!flag.load())
        std::this_thread::yield();
}
} // namespace

// Busy from two threads: a Hold on one thread refuses another thread's Hold; a launch holding the
// flag inside the C core refuses a second launch and a C++ Hold of the same flag, and nothing of
// the second launch runs; once released, both succeed.  *held_during: the flag's value while the
// first launch held it.
EXPORT int cpp_busy_two_threads(std::int32_t *held_during)
{
    return harness::run([&] {
        std::string what;
        eagle::util::Busy busy;
        {
            std::atomic<int> holding{0}, done{0};
            std::thread other([&] {
                eagle::util::Busy::Hold hold(busy, "other");
                holding.store(1);
                wait_for(done);
            });
            wait_for(holding);
            CHECK(busy.held());
            EXPECT_THROW(eagle::BusyError, eagle::util::Busy::Hold(busy, "cpp_busy_two_threads"), what);
            CHECK(what.rfind("cpp_busy_two_threads: another call is still running", 0) == 0);
            done.store(1);
            other.join();
        }
        CHECK(!busy.held());
        CHECK(busy.tryEnter());
        busy.leave();

        eagle::exec::Program program;
        program.kernel({spin, {}, 1, 0, {}}).finalize().guard(busy);
        entered.store(0);
        released.store(0);
        std::thread runner([&] { program.launch(); });
        wait_for(entered);
        *held_during = *busy.flag();
        try {
            program.launch();
            CHECK(false);
        } catch (const eagle::BusyError &e) {
            CHECK(e.status() == EAGLE_ERR_BUSY);
        }
        EXPECT_THROW(eagle::BusyError, eagle::util::Busy::Hold(busy, "second"), what);
        released.store(1);
        runner.join();
        CHECK(!busy.held());
        entered.store(0);
        program.launch(); // the flag is free again: this one runs
        CHECK(entered.load() == 1);
    });
}
