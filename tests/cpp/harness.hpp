// What every C++ test library shares: an exported test function returns 0 when every check
// held, else a non-zero code, with what went wrong in cpp_error() (C++ exceptions must not
// cross into ctypes).
#ifndef EAGLE_TESTS_CPP_HARNESS_HPP
#define EAGLE_TESTS_CPP_HARNESS_HPP

#include <exception>
#include <sstream>
#include <string>

#include "eagle/eagle.hpp"

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace harness {

inline std::string &last_error()
{
    static thread_local std::string message;
    return message;
}

// A failed check: the test returns its line.
struct Failure {
    int line;
    std::string what;
};

// f() run with every exception turned into a code and a message.
template <class F> int run(F &&f)
{
    try {
        f();
        return 0;
    } catch (const Failure &fail) {
        last_error() = "check failed at line " + std::to_string(fail.line) + ": " + fail.what;
        return fail.line;
    } catch (const eagle::Error &e) {
        last_error() = std::string("eagle::Error (status ") + std::to_string(e.status()) + "): " + e.what();
        return -1;
    } catch (const std::exception &e) {
        last_error() = std::string("std::exception: ") + e.what();
        return -2;
    }
}

} // namespace harness

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            throw harness::Failure{__LINE__, #cond};                                               \
    } while (0)

// The exception `expr` throws, of type T, or a failed check when it throws none.
#define EXPECT_THROW(T, expr, out)                                                                 \
    do {                                                                                           \
        bool thrown_ = false;                                                                      \
        try {                                                                                      \
            expr;                                                                                  \
        } catch (const T &e_) {                                                                    \
            thrown_ = true;                                                                        \
            out = std::string(e_.what());                                                          \
        }                                                                                          \
        if (!thrown_)                                                                              \
            throw harness::Failure{__LINE__, "no " #T " from " #expr};                             \
    } while (0)

EXPORT const char *cpp_error() { return harness::last_error().c_str(); }

#endif
