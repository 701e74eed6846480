/* Writes a run's facts as it goes: pod attempts and cluster samples (sim/recorder.py), into
 * growable columns that module.c hands back to Python. */
#include <math.h>
#include <stdlib.h>

#include "sim.h"

/* Make room for `capacity` items in each of `count` parallel columns (item sizes `sizes`). */
static int grow_columns(void **columns[], const size_t *sizes, int count, int64_t capacity) {
    for (int i = 0; i < count; i++) {
        void *grown = realloc(*columns[i], sizes[i] * (size_t)capacity);
        if (grown == NULL) return 0;
        *columns[i] = grown;
    }
    return 1;
}

static int grow_records(PodRecords *r) {
    if (r->size < r->capacity) return 1;
    int64_t capacity = r->capacity ? r->capacity * 2 : 1024;
    void **columns[] = {(void **)&r->uid, (void **)&r->node, (void **)&r->outcome,
                        (void **)&r->bound_s, (void **)&r->started_s, (void **)&r->finished_s,
                        (void **)&r->ended_s};
    const size_t sizes[] = {sizeof(int64_t), sizeof(int32_t), sizeof(int32_t), sizeof(double),
                            sizeof(double), sizeof(double), sizeof(double)};
    if (!grow_columns(columns, sizes, 7, capacity)) return 0;
    r->capacity = capacity;
    return 1;
}

/* Recorder.pod_ended (bound pods) and pod_not_bound; NAN stands for None. */
void record_pod(Sim *sim, int64_t uid, int32_t outcome, double now_s, int bound) {
    PodRecords *r = &sim->records;
    if (!grow_records(r)) {
        sim->error = 1;
        PyErr_NoMemory();
        return;
    }
    const Pod *pod = &sim->pods[uid];
    int64_t at = r->size++;
    r->uid[at] = uid;
    r->outcome[at] = outcome;
    r->node[at] = bound ? pod->node : NONE;
    r->bound_s[at] = bound ? pod->bound_s : NAN;
    r->started_s[at] = bound && pod->started_s >= 0.0 ? pod->started_s : NAN;
    r->finished_s[at] = outcome == R_SUCCEEDED ? now_s : NAN;
    r->ended_s[at] = outcome == R_UNFINISHED ? NAN : now_s;
}

static int grow_samples(Samples *s) {
    if (s->size < s->capacity) return 1;
    int64_t capacity = s->capacity ? s->capacity * 2 : 1024;
    void **columns[] = {(void **)&s->time_s, (void **)&s->cpu_allocated, (void **)&s->cpu_used,
                        (void **)&s->gpu_allocated, (void **)&s->pending, (void **)&s->running};
    const size_t sizes[] = {sizeof(double), sizeof(double), sizeof(double), sizeof(double),
                            sizeof(int64_t), sizeof(int64_t)};
    if (!grow_columns(columns, sizes, 6, capacity)) return 0;
    s->capacity = capacity;
    return 1;
}

/* Recorder.sample: on a tick or when the backlog changed; one per instant at most. */
void record_sample(Sim *sim, int tick) {
    int64_t pending = sim->pending_count;
    if (!tick && pending == sim->last_pending) return;
    sim->last_pending = pending;
    Samples *s = &sim->samples;
    double now = sim->now_s, cpu = sim->cpu_capacity;
    int64_t at = s->size;
    if (!(at > 0 && s->time_s[at - 1] == now)) {
        if (!grow_samples(s)) {
            sim->error = 1;
            PyErr_NoMemory();
            return;
        }
        s->size++;
    } else {
        at--;
    }
    s->time_s[at] = now;
    s->pending[at] = pending;
    s->running[at] = sim->running;
    s->cpu_allocated[at] = cpu != 0.0 ? (double)sim->cpu_allocated_m / 1000.0 / cpu : 0.0;
    s->cpu_used[at] = cpu != 0.0 ? sim->cpu_used / cpu : 0.0;
    s->gpu_allocated[at] = sim->gpu_capacity
        ? (double)sim->gpus_allocated / (double)sim->gpu_capacity : 0.0;
}
