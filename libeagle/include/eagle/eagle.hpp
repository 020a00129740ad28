/**
 * @file eagle.hpp
 * @brief eagle's C++ face, header-only over libeagle's C ABI (eagle.h).
 *
 * Link libeagle (the library eagle-graph installs beside these headers:
 * `python -c "import eagle.native as n; print(n.include_dir())"` prints the
 * include folder, and libeagle.so lies one folder up) and include this header,
 * or the part you use: eagle/exec.hpp (host programs), eagle/cuda.hpp (CUDA
 * graphs), eagle/util/Busy.h (the guard), eagle/error.hpp (the exceptions),
 * eagle/view.hpp (a host program's picture).  C++17.  The types own their
 * libeagle objects (RAII, move-only) and keep no state the C layer does not
 * hold, but for eagle::GraphView, which keeps the names a picture needs.
 */
#ifndef EAGLE_EAGLE_HPP
#define EAGLE_EAGLE_HPP

#include "eagle/cuda.hpp"
#include "eagle/error.hpp"
#include "eagle/exec.hpp"
#include "eagle/util/Busy.h"
#include "eagle/view.hpp"

#endif // EAGLE_EAGLE_HPP
