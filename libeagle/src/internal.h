/* Declarations shared between libeagle's .c files (not part of the ABI). */
#ifndef EAGLE_INTERNAL_H
#define EAGLE_INTERNAL_H

#include "eagle/eagle.h"

/* Record a message for eagle_last_error() on this thread and return status. */
int eagle_fail(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Clear this thread's last error. */
void eagle_clear_error(void);

#endif /* EAGLE_INTERNAL_H */
