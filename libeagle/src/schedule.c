/*
 * The schedule of a host stage: seed 001's fixed rule ("CPU schedules").
 * One definition, so that eagle.Graph.build (through cffi) and the C++ face
 * (eagle::exec::resolve) pick the same schedule for the same stage.
 */
#include "internal.h"

EAGLE_API int eagle_stage_schedule(int32_t group, int32_t nbranches, int32_t threads,
                                   const int64_t *samples, const uint8_t *native, int64_t nnodes)
{
    const char *api = "eagle_stage_schedule";
    if (nbranches < 0 || nnodes < 0 || (nnodes && (!samples || !native)))
        return eagle_fail(EAGLE_ERR_ARG, "%s: a negative count, or NULL samples or native", api);
    /* A branch of one thread's items pays off only when the branches run side by side. */
    if (!group || nbranches < 2 || threads < 2)
        return EAGLE_WORK_SHARE;
    /* Python code and conditionals cannot run inside the native branch runner, and a node
     * over many samples keeps the whole team busy on its own. */
    for (int64_t i = 0; i < nnodes; ++i)
        if (!native[i] || samples[i] < 0 || samples[i] > EAGLE_BRANCH_TASKS_MAX_SAMPLES)
            return EAGLE_WORK_SHARE;
    return EAGLE_BRANCH_TASKS;
}
