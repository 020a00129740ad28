/**
 * @file exec.hpp
 * @brief The host executor: programs of native kernels, the schedule rule,
 * and the branch runner.
 *
 * An eagle::exec::Program is a libeagle program (eagle.h, "programs"): stages
 * of branches of items, run `n` times in one call on the host thread team.
 * It is what eagle.Graph.build lowers a graph of NumPy planes to, built here
 * by hand: native kernels (the eagle_kernel_fn type), fixed-order reductions,
 * device-style conditionals and loops over one-cell uint32 guards.  Every
 * result has the bits of a serial run, at any team size and either schedule.
 */
#ifndef EAGLE_EXEC_HPP
#define EAGLE_EXEC_HPP

#include <array>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "eagle/eagle.h"
#include "eagle/error.hpp"
#include "eagle/util/Busy.h"

namespace eagle::exec
{

using eagle::detail::check;

/** How a stage runs (seed 001, "CPU schedules"). */
enum class Schedule : std::int32_t {
    /** Items in order, each native item's samples cut across the team in fixed blocks. */
    WorkShare = EAGLE_WORK_SHARE,
    /** Each branch on one thread, its items in order. */
    BranchTasks = EAGLE_BRANCH_TASKS,
};

/** What the schedule rule reads of one node of a stage. */
struct NodeShape {
    /** The samples it covers; negative when unknown (it then work-shares). */
    std::int64_t samples;
    /** A native kernel the branch runner can call (no Python, no conditional). */
    bool native;
};

/** The size of the host thread team (EAGLE_NUM_THREADS, else the CPUs this process may use). */
inline int numThreads() { return eagle_num_threads(); }

/** Resize the team; 0 re-reads EAGLE_NUM_THREADS and the CPU count.  Waits for runs using it. */
inline void setNumThreads(int n) { check(eagle_set_num_threads(n), "eagle::exec::setNumThreads"); }

/**
 * @brief The schedule of a stage: the rule eagle.Graph.build applies, the same C function.
 *
 * BranchTasks when the stage is a fork/join (`group`) of at least two
 * branches, `threads` is at least two, and every node is native over at most
 * EAGLE_BRANCH_TASKS_MAX_SAMPLES known samples; else WorkShare.
 *
 * @code
 * using eagle::exec::Schedule;
 * // eight branches of kernels over 1024 samples, on a team of 8
 * std::vector<eagle::exec::NodeShape> nodes(8 * 16, {1024, true});
 * Schedule s = eagle::exec::resolve(true, 8, nodes, 8); // Schedule::BranchTasks
 * @endcode
 */
inline Schedule resolve(bool group, std::int32_t branches, const std::vector<NodeShape> &nodes,
                        int threads = numThreads())
{
    std::vector<std::int64_t> samples;
    std::vector<std::uint8_t> native;
    samples.reserve(nodes.size());
    native.reserve(nodes.size());
    for (const NodeShape &node : nodes) {
        samples.push_back(node.samples);
        native.push_back(node.native ? 1 : 0);
    }
    int chosen = check(eagle_stage_schedule(group ? 1 : 0, branches, threads, samples.data(),
                                            native.data(), static_cast<std::int64_t>(nodes.size())),
                       "eagle::exec::resolve");
    return static_cast<Schedule>(chosen);
}

/** @name Kernel arguments: one eagle_arg slot per parameter. */
///@{
inline eagle_arg arg(void *p)
{
    eagle_arg a{};
    a.ptr = p;
    return a;
}
inline eagle_arg arg(const void *p) { return arg(const_cast<void *>(p)); }
inline eagle_arg arg(double v)
{
    eagle_arg a{};
    a.f64 = v;
    return a;
}
inline eagle_arg arg(float v)
{
    eagle_arg a{};
    a.f32 = v;
    return a;
}
inline eagle_arg arg(std::int64_t v)
{
    eagle_arg a{};
    a.i64 = v;
    return a;
}
inline eagle_arg arg(std::uint64_t v)
{
    eagle_arg a{};
    a.u64 = v;
    return a;
}
inline eagle_arg arg(std::int32_t v)
{
    eagle_arg a{};
    a.i32 = v;
    return a;
}
inline eagle_arg arg(std::uint32_t v)
{
    eagle_arg a{};
    a.u32 = v;
    return a;
}
///@}

/** How a kernel touches a plane. */
enum class Role : std::int32_t {
    Read = EAGLE_READ,
    Write = EAGLE_WRITE,
    ReadWrite = EAGLE_READWRITE
};

/** An access of a kernel to the contiguous 1-D array data[0:n] (what decides block fusion). */
template <class T> eagle_access access(const T *data, std::int64_t n, Role role)
{
    eagle_access a{};
    a.view.data = a.view.base = reinterpret_cast<std::uintptr_t>(data);
    a.view.itemsize = static_cast<std::int64_t>(sizeof(T));
    a.view.ndim = 1;
    a.view.device = -1;
    a.view.shape[0] = n;
    a.view.strides[0] = static_cast<std::int64_t>(sizeof(T));
    a.role = static_cast<std::int32_t>(role);
    return a;
}

/** A native kernel call: fn over samples [0, n) with its argument block. */
struct Call {
    eagle_kernel_fn fn;
    std::vector<eagle_arg> args;
    std::int64_t n;
    /** EAGLE_PER_SAMPLE (may be block-fused with its neighbours), EAGLE_EMPTY_CALL. */
    std::int32_t flags = EAGLE_PER_SAMPLE;
    /** What it touches: consecutive per-sample calls sharing the very same views are fused. */
    std::vector<eagle_access> accesses = {};
};

/** Reduce operations of Program::reduce. */
enum class Op : std::int32_t {
    Sum = EAGLE_SUM,
    Max = EAGLE_MAX,
    Min = EAGLE_MIN,
    All = EAGLE_ALL,
    Any = EAGLE_ANY,
};

/** When a loop reads its guard cell. */
enum class Loop : std::int32_t {
    While = EAGLE_LOOP_WHILE, ///< before every turn: run while *cell != 0
    Do = EAGLE_LOOP_DO,       ///< after every turn: once, then again while *cell != 0
    Count = EAGLE_LOOP_COUNT, ///< *cell read once per run: that many turns
};

namespace detail
{
template <class T> struct DType;
template <> struct DType<double> {
    static constexpr std::int32_t value = EAGLE_F64;
};
template <> struct DType<float> {
    static constexpr std::int32_t value = EAGLE_F32;
};
template <> struct DType<std::int64_t> {
    static constexpr std::int32_t value = EAGLE_I64;
};
template <> struct DType<std::int32_t> {
    static constexpr std::int32_t value = EAGLE_I32;
};
template <> struct DType<std::uint32_t> {
    static constexpr std::int32_t value = EAGLE_U32;
};
template <> struct DType<std::uint64_t> {
    static constexpr std::int32_t value = EAGLE_U64;
};
template <> struct DType<std::uint8_t> {
    static constexpr std::int32_t value = EAGLE_U8;
};
} // namespace detail

/**
 * @brief A host program: owns one eagle_program, move-only.
 *
 * Build it (stage, branch, kernel, reduce, ifThen, loop ...), finalize it
 * once, then run it any number of times.  Items hold raw pointers: the arrays
 * they touch must outlive the program's runs.  A sub-program handed to ifThen
 * or loop is owned by this program from then on.
 *
 * @code
 * eagle::exec::Program p;
 * p.kernel({scale, {eagle::exec::arg(x), eagle::exec::arg(2.0)}, n})
 *  .reduce(x, &total, n, eagle::exec::Op::Sum)
 *  .finalize();
 * p.run(100); // one call, 100 replays, no allocation
 * @endcode
 */
class Program
{
  public:
    Program() : p_(eagle_program_new())
    {
        if (!p_)
            check(EAGLE_ERR_NOMEM, "eagle::exec::Program");
    }
    ~Program() { eagle_program_free(p_); }
    Program(Program &&other) noexcept : p_(std::exchange(other.p_, nullptr)) {}
    Program &operator=(Program &&other) noexcept
    {
        if (this != &other) {
            eagle_program_free(p_);
            p_ = std::exchange(other.p_, nullptr);
        }
        return *this;
    }
    Program(const Program &) = delete;
    Program &operator=(const Program &) = delete;

    /** Open a new stage; items go to its first branch. */
    Program &stage(Schedule schedule = Schedule::WorkShare)
    {
        check(eagle_stage(get("stage"), static_cast<int>(schedule)), "eagle::exec::Program::stage");
        return *this;
    }
    /** Open the next branch of the current stage. */
    Program &branch()
    {
        check(eagle_branch(get("branch")), "eagle::exec::Program::branch");
        return *this;
    }
    /** Append a native kernel call (its arguments and accesses are copied). */
    Program &kernel(const Call &call)
    {
        check(eagle_add_kernel(get("kernel"), call.fn, call.args.data(),
                               static_cast<std::int32_t>(call.args.size()), call.n, call.flags,
                               call.accesses.data(),
                               static_cast<std::int32_t>(call.accesses.size())),
              "eagle::exec::Program::kernel");
        return *this;
    }
    /** out[0] = op over x[0:n] in the fixed order (the bits of eagle.reduce and of the GPU). */
    template <class T> Program &reduce(const T *x, T *out, std::int64_t n, Op op)
    {
        check(eagle_add_reduce(get("reduce"), x, out, n, detail::DType<T>::value,
                               static_cast<std::int32_t>(op)),
              "eagle::exec::Program::reduce");
        return *this;
    }
    /** Run `then` when *cell != 0. */
    Program &ifThen(const std::uint32_t *cell, Program then)
    {
        check(eagle_add_if(get("ifThen"), cell, then.get("ifThen"), nullptr),
              "eagle::exec::Program::ifThen");
        then.p_ = nullptr; // owned by this program now
        return *this;
    }
    /** Run `then` when *cell != 0, else `otherwise`. */
    Program &ifThenElse(const std::uint32_t *cell, Program then, Program otherwise)
    {
        check(eagle_add_if(get("ifThenElse"), cell, then.get("ifThenElse"),
                           otherwise.get("ifThenElse")),
              "eagle::exec::Program::ifThenElse");
        then.p_ = otherwise.p_ = nullptr;
        return *this;
    }
    /** A loop over `body` of the given kind, at most maxIters turns (< 0: no cap). */
    Program &loop(const std::uint32_t *cell, Loop kind, std::int64_t maxIters, Program body)
    {
        check(eagle_add_loop(get("loop"), cell, static_cast<std::int32_t>(kind), maxIters,
                             body.get("loop")),
              "eagle::exec::Program::loop");
        body.p_ = nullptr;
        return *this;
    }
    /** Check the program and work out its block-fused runs.  Once, before run. */
    Program &finalize()
    {
        check(eagle_program_finalize(get("finalize")), "eagle::exec::Program::finalize");
        return *this;
    }
    /** Per-sample items process min(their n, n) samples from the next run on. */
    Program &setLogicalSize(std::int64_t n)
    {
        check(eagle_program_set_logical_size(get("setLogicalSize"), n),
              "eagle::exec::Program::setLogicalSize");
        return *this;
    }
    /** Launches (launch()) hold `busy` from now on, inside the C core; it must outlive them. */
    Program &guard(util::Busy &busy)
    {
        check(eagle_program_set_launch(get("guard"), busy.flag(), nullptr, nullptr, 0),
              "eagle::exec::Program::guard");
        return *this;
    }
    /** Run `replays` times on the calling thread and the team; BusyError if another thread runs it. */
    void run(std::int64_t replays = 1)
    {
        check(eagle_run(get("run"), replays), "eagle::exec::Program::run");
    }
    /** run() holding the guard flag given to guard(): BusyError, with nothing run, when it is held. */
    void launch(std::int64_t replays = 1)
    {
        check(eagle_launch(get("launch"), replays), "eagle::exec::Program::launch");
    }
    /** Counters of the last run: team regions opened, barriers passed. */
    std::array<std::int64_t, 2> stats() const
    {
        std::array<std::int64_t, 2> out{};
        eagle_program_stats(p_, out.data());
        return out;
    }
    /** The eagle_program, still owned by this object. */
    eagle_program *handle() const noexcept { return p_; }

  private:
    eagle_program *get(const char *method) const
    {
        if (!p_)
            throw Error(EAGLE_ERR_STATE, std::string("eagle::exec::Program::") + method +
                                             ": this Program was moved from (or handed to another "
                                             "program as a body): use the object it went to");
        return p_;
    }

    eagle_program *p_;
};

/**
 * @brief The branch runner: run a fork of native branches `replays` times.
 *
 * One stage, each branch's calls in order, scheduled by resolve() (a fork
 * over few samples runs each branch on one thread: BranchTasks; a large one
 * work-shares), in a single native call.  The bits are a serial run's.
 */
inline void runHostBranches(const std::vector<std::vector<Call>> &branches,
                            std::int64_t replays = 1)
{
    std::vector<NodeShape> nodes;
    for (const auto &branch : branches)
        for (const Call &call : branch)
            nodes.push_back({call.n, true});
    Program program;
    program.stage(resolve(true, static_cast<std::int32_t>(branches.size()), nodes));
    for (std::size_t b = 0; b < branches.size(); ++b) {
        if (b)
            program.branch();
        for (const Call &call : branches[b])
            program.kernel(call);
    }
    program.finalize().run(replays);
}

} // namespace eagle::exec

#endif // EAGLE_EXEC_HPP
