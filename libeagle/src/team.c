/*
 * The host thread team: persistent worker threads that run one job at a
 * time for the thread that holds the team.
 *
 * Protocol.  The holder writes the job, opens the gate with one ticket per
 * worker and bumps `epoch`; a worker that sees a new epoch counts itself
 * `inside`, takes a ticket if one is left and runs the job.  The holder runs
 * the job as thread 0, then closes the gate and waits until no worker is
 * inside (the barrier).  Jobs claim their work from a shared counter, so a
 * worker that arrives late (asleep, or its core taken by another process)
 * finds the gate closed and the work already done by the others: a busy
 * machine costs the run its parallelism, never a wait for a thread that is
 * not running.  Workers spin for a while after a job so that the next job
 * of the same run costs no wake-up, then sleep on a condition variable.
 * All shared words are seq_cst atomics: a worker announces itself in
 * `sleepers` before its last look at `epoch`, and the holder bumps `epoch`
 * before it reads `sleepers`, so no wake-up is lost; a worker counts itself
 * `inside` before it reads the gate, and the holder closes the gate before
 * it reads `inside`, so no worker runs a job the holder has left.
 *
 * Determinism does not live here: jobs cut work on fixed block boundaries
 * and keep no per-thread results, so which thread runs what never matters.
 *
 * fork(): threads do not survive it.  The team records its owner's pid; a
 * child that uses the team abandons the parent's (never joining or
 * signalling those threads) and starts its own.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

/* A waiting thread first spins on `pause` (the next job of a run usually
 * comes within microseconds), then yields its core (in case the team has
 * more threads than the machine has free cores), then sleeps. */
#define SPIN_BEFORE_YIELD 8192
#define SPIN_BEFORE_SLEEP 40000

typedef struct team {
    pid_t pid;   /* the process that started these threads */
    int size;    /* threads including the holder; 0 = not configured */
    int started; /* workers running (size - 1 of them) */
    pthread_t *workers;
    pthread_mutex_t hold;       /* held by the run that uses the team */
    pthread_mutex_t sleep_lock; /* guards the condition variable */
    pthread_cond_t wake;
    _Atomic unsigned epoch; /* bumped once per job */
    atomic_int gate;        /* tickets left for workers to join the current job */
    atomic_int inside;      /* workers between reading the gate and leaving the job */
    atomic_int sleepers;    /* workers asleep or about to sleep */
    atomic_int quit;
    team_job_fn job; /* written before epoch is bumped */
    void *job_ctx;
} team;

static team *the_team;
static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int in_region;

static int is_blank(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* EAGLE_NUM_THREADS as a thread count: a whole number from 1 to INT_MAX, blanks
 * around it allowed; anything else is 0, the CPU count.  eagle._threads.parse
 * reads it by the same rule and warns about the rest, naming what is used. */
static int env_size(const char *env)
{
    long long n = 0;
    int digits = 0;
    while (is_blank(*env))
        env++;
    for (; *env >= '0' && *env <= '9'; env++, digits++) {
        n = n * 10 + (*env - '0');
        if (n > INT_MAX)
            return 0;
    }
    while (is_blank(*env))
        env++;
    return digits && *env == '\0' && n >= 1 ? (int)n : 0;
}

static int configured_size(void)
{
    const char *env = getenv("EAGLE_NUM_THREADS");
    int asked = env ? env_size(env) : 0;
    if (asked >= 1)
        return asked;
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (int)n : 1;
}

static team *team_new(int size)
{
    team *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->pid = getpid();
    t->size = size >= 1 ? size : configured_size();
    pthread_mutex_init(&t->hold, NULL);
    pthread_mutex_init(&t->sleep_lock, NULL);
    pthread_cond_init(&t->wake, NULL);
    return t;
}

/* The team of this process, made on first use and again in a forked child. */
static team *get_team(void)
{
    pthread_mutex_lock(&config_lock);
    /* A parent's team is abandoned, not freed: its threads are gone.  The
     * child keeps its size, which may have been set at run time. */
    if (!the_team || the_team->pid != getpid())
        the_team = team_new(the_team ? the_team->size : 0);
    team *t = the_team;
    pthread_mutex_unlock(&config_lock);
    return t;
}

static void relax(int *polls)
{
    if (++*polls > SPIN_BEFORE_YIELD)
        sched_yield();
#if defined(__x86_64__) || defined(__i386__)
    else
        __builtin_ia32_pause();
#endif
}

typedef struct worker_arg {
    team *t;
    unsigned seen; /* the epoch at creation: a job posted before the thread runs is not missed */
} worker_arg;

static int take_ticket(team *t)
{
    int left = atomic_load(&t->gate);
    while (left > 0 && !atomic_compare_exchange_weak(&t->gate, &left, left - 1))
        ;
    return left > 0;
}

static void *worker_main(void *p)
{
    worker_arg arg = *(worker_arg *)p;
    free(p);
    team *t = arg.t;
    in_region = 1; /* a worker's own calls into the executor run in place */
    unsigned seen = arg.seen;
    for (;;) {
        int polls = 0;
        while (atomic_load(&t->epoch) == seen && !atomic_load(&t->quit)
               && polls < SPIN_BEFORE_SLEEP)
            relax(&polls);
        if (atomic_load(&t->epoch) == seen && !atomic_load(&t->quit)) {
            pthread_mutex_lock(&t->sleep_lock);
            atomic_fetch_add(&t->sleepers, 1);
            while (atomic_load(&t->epoch) == seen && !atomic_load(&t->quit))
                pthread_cond_wait(&t->wake, &t->sleep_lock);
            atomic_fetch_sub(&t->sleepers, 1);
            pthread_mutex_unlock(&t->sleep_lock);
        }
        if (atomic_load(&t->quit))
            return NULL;
        seen = atomic_load(&t->epoch);
        atomic_fetch_add(&t->inside, 1);
        if (take_ticket(t))
            t->job(t->job_ctx);
        atomic_fetch_sub(&t->inside, 1);
    }
}

static void wake_workers(team *t)
{
    if (atomic_load(&t->sleepers) > 0) {
        pthread_mutex_lock(&t->sleep_lock);
        pthread_cond_broadcast(&t->wake);
        pthread_mutex_unlock(&t->sleep_lock);
    }
}

static void stop_workers(team *t)
{
    if (!t->started)
        return;
    atomic_store(&t->quit, 1);
    pthread_mutex_lock(&t->sleep_lock);
    pthread_cond_broadcast(&t->wake);
    pthread_mutex_unlock(&t->sleep_lock);
    for (int i = 0; i < t->started; ++i)
        pthread_join(t->workers[i], NULL);
    free(t->workers);
    t->workers = NULL;
    t->started = 0;
    atomic_store(&t->quit, 0);
}

/* Start the workers; on failure the team stays usable with the ones that started. */
static void start_workers(team *t)
{
    t->workers = calloc((size_t)t->size, sizeof *t->workers);
    if (!t->workers)
        return;
    for (int i = 1; i < t->size; ++i) {
        worker_arg *arg = malloc(sizeof *arg);
        if (!arg)
            break;
        arg->t = t;
        arg->seen = atomic_load(&t->epoch);
        if (pthread_create(&t->workers[t->started], NULL, worker_main, arg) != 0) {
            free(arg);
            break;
        }
        t->started++;
    }
}

/* Is the calling thread inside an OpenMP parallel region?  Only asked when
 * an OpenMP runtime is already loaded in the process. */
static int in_openmp_region(void)
{
    static int (*omp_in_parallel)(void);
    static int looked;
    if (!looked) {
        omp_in_parallel = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_in_parallel");
        looked = 1;
    }
    return omp_in_parallel && omp_in_parallel();
}

int team_in_region(void) { return in_region; }

int team_acquire(void)
{
    if (in_region || in_openmp_region())
        return 1;
    team *t = get_team();
    if (t->size < 2 || pthread_mutex_trylock(&t->hold) != 0)
        return 1; /* another run holds the team: this one runs in place, same bits */
    if (!t->started)
        start_workers(t);
    if (t->started == 0) {
        pthread_mutex_unlock(&t->hold);
        return 1;
    }
    in_region = 1;
    return t->started + 1;
}

void team_release(void)
{
    in_region = 0;
    pthread_mutex_unlock(&the_team->hold);
}

void team_parallel(team_job_fn fn, void *ctx)
{
    team *t = the_team;
    t->job = fn;
    t->job_ctx = ctx;
    atomic_store(&t->gate, t->started);
    atomic_fetch_add(&t->epoch, 1);
    wake_workers(t);
    fn(ctx);
    atomic_store(&t->gate, 0); /* all work is claimed: a worker not yet in stays out */
    int polls = 0;
    while (atomic_load(&t->inside) > 0)
        relax(&polls);
}

EAGLE_API int eagle_num_threads(void) { return get_team()->size; }

EAGLE_API int eagle_set_num_threads(int n)
{
    if (n < 0)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_set_num_threads: n must be >= 0, got %d", n);
    if (in_region)
        return eagle_fail(EAGLE_ERR_STATE, "eagle_set_num_threads: called from inside a run");
    team *t = get_team();
    pthread_mutex_lock(&t->hold); /* waits for a run that holds the team */
    stop_workers(t);
    t->size = n >= 1 ? n : configured_size();
    pthread_mutex_unlock(&t->hold);
    return EAGLE_OK;
}
