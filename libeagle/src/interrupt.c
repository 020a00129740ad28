/*
 * Ctrl-C during a run.  Python's own SIGINT handler only marks the signal
 * pending; its KeyboardInterrupt is raised when the main thread next runs
 * Python code, which it does not while it waits in eagle_run with the GIL
 * released.  So while a caller asks for it (eagle_interrupt_catch), a C
 * handler is put in front of the one installed: it sets a flag, then calls
 * the handler it replaced (Python's, which still marks the signal pending).
 * The executor reads the flag, one relaxed atomic load, between replays and
 * between the turns of a loop, and stops the run with EAGLE_ERR_INTERRUPTED;
 * the caller then lets Python raise the pending KeyboardInterrupt.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>

#include "internal.h"

static atomic_int interrupted;
static atomic_int catch_depth; /* nested runs share one installed handler */
static struct sigaction replaced;

static void on_sigint(int sig, siginfo_t *info, void *uc)
{
    atomic_store_explicit(&interrupted, 1, memory_order_relaxed);
    if (replaced.sa_flags & SA_SIGINFO)
        replaced.sa_sigaction(sig, info, uc);
    else if (replaced.sa_handler != SIG_IGN && replaced.sa_handler != SIG_DFL)
        replaced.sa_handler(sig);
}

EAGLE_API int eagle_interrupt_catch(int on)
{
    if (on) {
        if (atomic_fetch_add(&catch_depth, 1) > 0)
            return EAGLE_OK;
        atomic_store(&interrupted, 0);
        struct sigaction mine = {0};
        mine.sa_sigaction = on_sigint;
        mine.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&mine.sa_mask);
        if (sigaction(SIGINT, &mine, &replaced) != 0) {
            atomic_fetch_sub(&catch_depth, 1);
            return eagle_fail(EAGLE_ERR_STATE, "eagle_interrupt_catch: sigaction failed");
        }
        return EAGLE_OK;
    }
    if (atomic_load(&catch_depth) <= 0)
        return eagle_fail(EAGLE_ERR_STATE, "eagle_interrupt_catch(0) without a matching (1)");
    if (atomic_fetch_sub(&catch_depth, 1) == 1) {
        sigaction(SIGINT, &replaced, NULL);
        atomic_store(&interrupted, 0);
    }
    return EAGLE_OK;
}

int eagle_interrupt_pending(void)
{
    return atomic_load_explicit(&interrupted, memory_order_relaxed);
}
