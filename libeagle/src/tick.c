/*
 * The tick that makes a run's poll due (eagle_program_set_launch).  A
 * thread bumps `ticks` every EAGLE_POLL_MS, so that a run finds a poll due
 * with one relaxed load at each replay and loop turn instead of reading a
 * clock there (a clock read costs about what a small replay does).  The
 * first run that polls starts the thread; it ends after ten ticks with no
 * such run in progress, and the next one starts it again.
 *
 * Starting and ending race only on two seq_cst words: a run counts itself
 * in `runs` before it reads `ticking`, and the ending thread clears
 * `ticking` before it reads `runs`, so one of them sees the other and
 * exactly one ticker runs (the compare-exchange decides).
 *
 * fork(): the thread does not survive it; the child clears `ticking`
 * (pthread_atfork), and its next polling run starts its own.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "internal.h"

#define IDLE_TICKS 10

static atomic_llong ticks;
static atomic_int runs;    /* runs with a poll in progress */
static atomic_int ticking; /* a ticker thread is running */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void child_after_fork(void) { atomic_store(&ticking, 0); }

static void register_atfork(void) { pthread_atfork(NULL, NULL, child_after_fork); }

static void *ticker(void *arg)
{
    (void)arg;
    struct timespec period = {EAGLE_POLL_MS / 1000, (EAGLE_POLL_MS % 1000) * 1000000L};
    for (int idle = 0;;) {
        nanosleep(&period, NULL);
        atomic_fetch_add(&ticks, 1);
        idle = atomic_load(&runs) ? 0 : idle + 1;
        if (idle < IDLE_TICKS)
            continue;
        atomic_store(&ticking, 0);
        int stopped = 0;
        /* A run that began meanwhile may have seen ticking == 1: tick on for it. */
        if (atomic_load(&runs) == 0 || !atomic_compare_exchange_strong(&ticking, &stopped, 1))
            return NULL;
        idle = 0;
    }
}

int tick_begin(void)
{
    atomic_fetch_add(&runs, 1);
    int stopped = 0;
    if (atomic_load(&ticking) || !atomic_compare_exchange_strong(&ticking, &stopped, 1))
        return EAGLE_OK;
    pthread_once(&atfork_once, register_atfork);
    pthread_attr_t attr;
    pthread_t thread;
    int failed = pthread_attr_init(&attr) != 0;
    if (!failed) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        failed = pthread_create(&thread, &attr, ticker, NULL) != 0;
        pthread_attr_destroy(&attr);
    }
    if (!failed)
        return EAGLE_OK;
    atomic_store(&ticking, 0);
    atomic_fetch_sub(&runs, 1);
    return eagle_fail(EAGLE_ERR_THREAD,
                      "eagle_run: the thread that times the program's poll could not be started");
}

void tick_end(void) { atomic_fetch_sub(&runs, 1); }

int64_t tick_now(void) { return atomic_load_explicit(&ticks, memory_order_relaxed); }
