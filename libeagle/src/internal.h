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

/* Make room for one more element of an array (n used, *cap allocated): 0, or
 * -1 when out of memory (the array is left as it was).  Defined in stages.c. */
int eagle_grow(void *arr, int32_t n, int32_t *cap, size_t elem);
#define GROW(arr, n, cap) eagle_grow(&(arr), (n), &(cap), sizeof *(arr))

/* ---------------------------------------------------------- overlap.c */

/*
 * NULL when v is a view eagle_overlap accepts (0 <= ndim <= EAGLE_MAX_DIMS,
 * itemsize >= 1, no negative shape); else a static phrase saying what is
 * wrong, for the caller's error message.  The one definition of a valid view.
 */
const char *eagle_view_problem(const eagle_view *v);

/* ------------------------------------------------------------ team.c */

/* A job for the team.  Any number of threads may join it (the caller
 * always does, a worker only if it arrives in time), so a job claims its
 * work from a shared counter and never cuts it by thread. */
typedef void (*team_job_fn)(void *ctx);

/*
 * Take the team for the calling thread's run.  Returns the number of
 * threads (>= 2) that team_parallel will use, or 1 when the run must stay on
 * the calling thread: a one-thread team, a team busy with another run, a
 * call from inside a team region or an OpenMP parallel region, or threads
 * that could not be started.  A non-1 answer must be paired with
 * team_release.
 */
int team_acquire(void);
void team_release(void);

/* Run job on the caller and on the workers that join in time, and return
 * when every thread that joined has left it: one barrier. */
void team_parallel(team_job_fn fn, void *ctx);

/* Non-zero on a thread that is inside a team region. */
int team_in_region(void);

/* ------------------------------------------------------------ reduce.c */

/* Reduce x[begin:end] (inside one block) into partials[block]; then the
 * partials of nblocks blocks into *out, in place.  Fixed order T. */
void reduce_block(const void *x, int64_t begin, int64_t end, int32_t dtype, int32_t op,
                  void *partials, int64_t block);
void reduce_finish(void *partials, int64_t nblocks, int32_t dtype, int32_t op, void *out);
/* *out = op's identity, the result over no values: sum and any 0, all 1, max the lowest value
 * of dtype (-inf for floats), min the highest (+inf). */
void reduce_identity(void *out, int32_t dtype, int32_t op);
int reduce_itemsize(int32_t dtype);

/* --------------------------------------------------------- interrupt.c */

/* Non-zero once SIGINT arrived while eagle_interrupt_catch(1) was in force. */
int eagle_interrupt_pending(void);

/* -------------------------------------------------------------- tick.c */

/* A run with a poll begins (EAGLE_OK, or EAGLE_ERR_THREAD when the ticker
 * cannot start; then the run must not go on) and ends; tick_now changes
 * every EAGLE_POLL_MS while such runs are in progress. */
int tick_begin(void);
void tick_end(void);
int64_t tick_now(void);

#endif /* EAGLE_INTERNAL_H */
