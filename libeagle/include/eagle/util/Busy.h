/**
 * @file Busy.h
 * @brief The non-blocking guard: one atomic flag, shared with the C core.
 *
 * eagle::util::Busy is the flag eagle.Graph's build, launch and enqueue hold
 * in Python: an int32 taken and released by libeagle's eagle_guard_enter and
 * eagle_guard_leave (atomic compare-exchange and store), so C, Python and C++
 * callers of one flag exclude each other, on free-threaded Python too.  Hand
 * it to eagle::exec::Program::guard and Program::launch holds it for the run
 * inside the C core (eagle_program_set_launch), with no C++ code in between.
 * A second caller is never queued: Hold throws eagle::BusyError at once.
 */
#ifndef EAGLE_UTIL_BUSY_H
#define EAGLE_UTIL_BUSY_H

#include <cstdint>

#include "eagle/eagle.h"
#include "eagle/error.hpp"

namespace eagle::util
{

/**
 * @brief A non-blocking guard flag.  Neither copied nor moved: the C core
 * may hold its address (eagle_program_set_launch).
 */
class Busy
{
  public:
    Busy() = default;
    Busy(const Busy &) = delete;
    Busy &operator=(const Busy &) = delete;

    /** Take the flag: true when this call took it, false when another holds it (never waits). */
    bool tryEnter() noexcept { return eagle_guard_enter(&flag_) != 0; }
    /** Release the flag taken by tryEnter. */
    void leave() noexcept { eagle_guard_leave(&flag_); }
    /** Whether some caller holds the flag now (a snapshot: it may change at once). */
    bool held() const noexcept { return __atomic_load_n(&flag_, __ATOMIC_ACQUIRE) != 0; }
    /** The flag itself, for C calls that take a guard. */
    std::int32_t *flag() noexcept { return &flag_; }

    /**
     * @brief Holds a Busy flag for one scope.
     *
     * @code
     * eagle::util::Busy busy;
     * {
     *     eagle::util::Busy::Hold hold(busy, "MySolver::step"); // BusyError if held
     *     // ... one caller at a time here ...
     * }
     * @endcode
     */
    class Hold
    {
      public:
        /** Take `busy`, or throw BusyError naming `api` when another caller holds it. */
        Hold(Busy &busy, const char *api) : busy_(busy)
        {
            if (!busy_.tryEnter())
                throw BusyError(api);
        }
        ~Hold() { busy_.leave(); }
        Hold(const Hold &) = delete;
        Hold &operator=(const Hold &) = delete;

      private:
        Busy &busy_;
    };

  private:
    std::int32_t flag_ = 0;
};

} // namespace eagle::util

#endif // EAGLE_UTIL_BUSY_H
