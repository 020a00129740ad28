/**
 * @file error.hpp
 * @brief The exceptions of eagle's C++ face: libeagle's status and message.
 *
 * Every libeagle call returns a status (0, or a negative EAGLE_ERR_*) and
 * leaves its message in eagle_last_error() on the calling thread.  The C++
 * face turns a negative status into an exception at once, on that thread, so
 * the message read is the call's own.  Exceptions rather than
 * `std::expected`-style results: the standard this face targets is C++17,
 * which has no `std::expected`, and every failure here is one the caller
 * fixes in code (a bad argument, a call out of order, a missing driver), not
 * a value to branch on.  The one failure a caller may want to branch on,
 * another thread holding a guard, is its own type: eagle::BusyError.
 */
#ifndef EAGLE_ERROR_HPP
#define EAGLE_ERROR_HPP

#include <stdexcept>
#include <string>

#include "eagle/eagle.h"

namespace eagle
{

/**
 * @brief A libeagle call failed.
 *
 * what() starts with the C++ API that failed (`eagle::cuda::Graph::launcher`),
 * then libeagle's own words, which name the C call and say what to change.
 */
class Error : public std::runtime_error
{
  public:
    Error(int status, const std::string &message) : std::runtime_error(message), status_(status) {}

    /** The libeagle status, one of the EAGLE_ERR_* codes of eagle.h. */
    int status() const noexcept { return status_; }

  private:
    int status_;
};

/**
 * @brief Another thread holds the guard of the object called (EAGLE_ERR_BUSY).
 *
 * Never queued behind the first caller: give each thread its own object, or
 * wait for the other call to return.
 */
class BusyError : public Error
{
  public:
    explicit BusyError(const std::string &api)
        : Error(EAGLE_ERR_BUSY, api + ": another call is still running on this object; give each "
                                      "thread its own, or wait for it")
    {
    }
};

namespace detail
{

/** Throw for a negative libeagle status (BusyError for EAGLE_ERR_BUSY), else return it. */
inline int check(int status, const char *api)
{
    if (status >= 0)
        return status;
    if (status == EAGLE_ERR_BUSY)
        throw BusyError(api);
    const char *detail = eagle_last_error();
    std::string message = std::string(api) + ": ";
    message += (detail && *detail) ? detail : "libeagle status " + std::to_string(status);
    throw Error(status, message);
}

} // namespace detail
} // namespace eagle

#endif // EAGLE_ERROR_HPP
