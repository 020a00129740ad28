/* Per-thread error messages, the ABI version, the guard, and eagle_free. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

static _Thread_local char last_error[512];

int eagle_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

EAGLE_API const char *eagle_last_error(void) { return last_error; }

EAGLE_API int eagle_abi_version(void) { return EAGLE_ABI_VERSION; }

EAGLE_API void eagle_free(void *p) { free(p); }

EAGLE_API int eagle_guard_enter(int32_t *flag)
{
    int32_t expected = 0;
    return __atomic_compare_exchange_n(flag, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

EAGLE_API void eagle_guard_leave(int32_t *flag) { __atomic_store_n(flag, 0, __ATOMIC_RELEASE); }
