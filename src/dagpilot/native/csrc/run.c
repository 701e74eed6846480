/* The simulation loop: event handlers, decision points and the scheduler's turns
 * (sim/simulation.py, sim/env.py, sim/run.py). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checks.h"
#include "kube.h"
#include "run.h"
#include "sim.h"

#define IDLE_ROUNDS 2
#define SIGNAL_CHECK_EVENTS 4096

/* Kernel.schedule. An event in the past (or at NaN, from a bad callback or input) is an error,
 * as in the Python kernel: the loop would otherwise run back in time, or never end. */
void schedule(Sim *sim, double time_s, int32_t priority, int32_t kind, int64_t arg, int64_t aux) {
    if (sim->error) return;  /* the run is ending: keep the exception that ends it */
    if (!(time_s >= sim->now_s)) {
        char shown[128];
        snprintf(shown, sizeof(shown), "%.17g s scheduled in the past (now %.17g s)", time_s,
                 sim->now_s);
        PyErr_Format(PyExc_ValueError, "native run: event at %s", shown);
        sim->error = 1;
        return;
    }
    if (!heap_push(&sim->heap, time_s, priority, kind, arg, aux)) {
        sim->error = 1;
        PyErr_NoMemory();
    }
}

/* reserve() for the core: running out of memory stops the run with a MemoryError. */
int sim_reserve(Sim *sim, void **items, int64_t *capacity, int64_t wanted, size_t size) {
    if (reserve(items, capacity, wanted, size) == 0) return 1;
    sim->error = 1;
    PyErr_NoMemory();
    return 0;
}

/* --- draws from the Python streams: node faults and storage changes ----------------------- */

/* A callback's (float, float) or (float, float, bool) tuple, or 0 for None; 0 with sim->error
 * and a TypeError naming the callback (`signature`) for anything else. */
static int unpack_change(Sim *sim, PyObject *result, const char *signature, double *first,
                         double *second, int *flag) {
    if (result == NULL) {
        sim->error = 1;
        return 0;
    }
    int ok = 0;
    if (result != Py_None) {
        Py_ssize_t size = flag ? 3 : 2;
        ok = PyTuple_Check(result) && PyTuple_GET_SIZE(result) == size;
        if (ok) {
            *first = PyFloat_AsDouble(PyTuple_GET_ITEM(result, 0));
            if (!PyErr_Occurred()) *second = PyFloat_AsDouble(PyTuple_GET_ITEM(result, 1));
            if (flag && !PyErr_Occurred()) *flag = PyObject_IsTrue(PyTuple_GET_ITEM(result, 2));
            ok = !PyErr_Occurred();
        }
        if (!ok && (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError))) {
            PyErr_Clear();  /* a conversion's TypeError: say which callback gave what */
            PyErr_Format(PyExc_TypeError, "native run: %s must return None or a tuple of %s, "
                         "got %R", signature, flag ? "two floats and a bool" : "two floats",
                         result);
        }
        if (!ok) sim->error = 1;
    }
    Py_DECREF(result);
    return ok;
}

/* A ValueError for a callback's result that would stop time or run it back; returns 0. */
static int refuse_change(Sim *sim, const char *signature, double first, double second,
                         double now_s, const char *rule) {
    char shown[160];
    snprintf(shown, sizeof(shown), "(%.17g, %.17g) at %.17g s", first, second, now_s);
    PyErr_Format(PyExc_ValueError, "native run: %s returned %s: %s", signature, shown, rule);
    sim->error = 1;
    return 0;
}

/* An outage from next_outage(after_s): it starts at or after after_s (+inf: never) and ends
 * after it, so that the fault process moves time on (sim/faults.py guarantees it). */
static void schedule_outage(Sim *sim, int32_t n, double after_s) {
    if (sim->error) return;  /* no Python call with an exception set */
    double start, end;
    const char *signature = "next_outage(after_s)";
    PyObject *result = PyObject_CallFunction(sim->next_outage, "d", after_s);
    if (!unpack_change(sim, result, signature, &start, &end, NULL) || start == INFINITY)
        return;
    if (!(start >= after_s && end >= start && end > after_s && end <= MAX_FIGURE))
        refuse_change(sim, signature, start, end, after_s, "an outage must start at or after "
                      "after_s, and end after its start and after after_s");
    else {
        sim->outage_end[n] = end;
        schedule(sim, start, O_NODE_FAULT, E_FAULT, n, 0);
    }
}

/* A change from next_iops: after now_s (+inf: never), to IOPS that are a number >= 0, so that
 * the storage process moves time on (sim/faults.py guarantees it). */
static void schedule_iops_change(Sim *sim, int32_t index, double now_s, int collapsed) {
    if (sim->error) return;
    double time_s, iops;
    int next_collapsed;
    const char *signature = "next_iops(now_s, nominal, collapsed)";
    PyObject *result = PyObject_CallFunction(sim->next_iops, "ddi", now_s,
                                             sim->pools[index].nominal_iops, collapsed);
    if (!unpack_change(sim, result, signature, &time_s, &iops, &next_collapsed)
            || time_s == INFINITY)
        return;
    if (!(time_s > now_s && iops >= 0.0 && iops <= MAX_FIGURE))
        refuse_change(sim, signature, time_s, iops, now_s, "a change must come after now_s, "
                      "to IOPS from 0 to 1e290");
    else {
        sim->change_iops[index] = iops;
        sim->change_collapsed[index] = next_collapsed;
        schedule(sim, time_s, O_STORAGE, E_STORAGE, index, 0);
    }
}

/* --- pods ------------------------------------------------------------------------------- */

void on_pod_created(Sim *sim, int64_t uid) {
    add_pending(sim, uid);
    sim->dirty = 1;
}

static void unlink_bound(Sim *sim, int64_t uid) {
    REMOVE(sim, &sim->nodes[sim->pods[uid].node].bound, bound, uid);
}

/* Simulation.bind: the pod starts after its start-up delay, on one of the node's slots. */
static void bind(Sim *sim, int64_t uid, int32_t n) {
    bind_pod(sim, uid, n);
    Pod *pod = &sim->pods[uid];
    const TaskSpec *task = &sim->tasks[pod->task];
    NodeLive *node = &sim->nodes[n];
    pod->phase = P_STARTING;
    pod->bound_s = pod->since = sim->now_s;
    pod->started_s = -1.0;
    pod->remaining = task->runtimes != NONE
        ? sim->instance_runtimes_s[task->runtimes + pod->instance] : task->runtime_s;
    pod->rate = 0.0;
    pod->version = 0;
    pod->cpu_used = task->cpu_used;
    pod->membw_share = task->membw_share;
    pod->io_share = task->io_share;
    pod->comm_share = task->comm_share;
    pod->working = pod->cache = 0;
    pod->membw = pod->iops = 0.0;
    pod->pcie = 1.0;
    pod->group = NONE;
    APPEND(sim, &node->bound, bound, uid);
    schedule(sim, startup_time(sim, n), O_START, E_START, uid, pod->version);
    sim->idle = 0;
}

/* A pod already off the progress model (or never started) is lost. */
static void killed(Sim *sim, int64_t uid, int32_t outcome) {
    Pod *pod = &sim->pods[uid];
    pod->phase = P_KILLED;
    pod->version++;
    unlink_bound(sim, uid);
    release_pod(sim, uid);
    record_pod(sim, uid, outcome, sim->now_s, 1);
    int oom = outcome == R_OOM;
    if (oom) sim->oom_kill_count++;
    else sim->fault_kill_count++;
    if (engine_killed(sim, uid, oom)) sim->restarts++;
    sim->dirty = 1;
}

static void on_start(Sim *sim, int64_t uid, int64_t version) {
    Pod *pod = &sim->pods[uid];
    if (pod->phase != P_STARTING || version != pod->version) return;
    NodeLive *node = &sim->nodes[pod->node];
    if (!node->ready) {  /* bound to a NotReady node: it starts when the node is back */
        APPEND(sim, &node->waiting, waiting, uid);
        return;
    }
    int32_t count = 0;
    if (!sim_reserve(sim, (void **)&sim->scratch, &sim->scratch_capacity,
                     node->running_count + 1, sizeof(int64_t)))
        return;
    progress_start(sim, uid, sim->scratch, &count);
    for (int32_t i = 0; i < count; i++) killed(sim, sim->scratch[i], R_OOM);
}

static void on_complete(Sim *sim, int64_t uid, int64_t version) {
    Pod *pod = &sim->pods[uid];
    if (version != pod->version || pod->phase != P_RUNNING) return;
    progress_stop(sim, uid);
    pod->phase = P_SUCCEEDED;
    double now = sim->now_s;
    unlink_bound(sim, uid);
    double release_s = sim->p.release_at_poll
        ? next_poll(now, sim->jobs[pod->job].phase_s, sim->p.poll_interval_s) : now;
    if (release_s > now) schedule(sim, release_s, O_COMPLETE, E_RELEASE, uid, 0);
    else release_pod(sim, uid);
    record_pod(sim, uid, R_SUCCEEDED, now, 1);
    engine_succeeded(sim, pod->job, pod->task);
    sim->dirty = 1;
}

void on_job_ended(Sim *sim, int32_t index) {
    if (!sim->jobs[index].failed) return;
    int64_t uid = sim->pending.head;
    while (uid != NONE) {  /* its pending pods are cancelled, oldest first */
        int64_t next = sim->pods[uid].pending.next;
        if (sim->pods[uid].job == index) {
            remove_pending(sim, uid);
            record_pod(sim, uid, R_CANCELLED, sim->now_s, 0);
        }
        uid = next;
    }
}

/* --- background processes ---------------------------------------------------------------- */

/* The scrape: the next one at the next tick of the grid, or, when the run is quiet (nothing
 * pending or bound, only arrivals ahead), at the last tick before the next arrival. */
static void on_sample(Sim *sim) {
    sim->tick = sim->dirty = 1;
    int quiet = sim->pending_count == 0 && sim->bound_pods == 0
        && engine_only_arrivals_ahead(sim);
    double until = quiet && sim->arrived < sim->job_count ? sim->arrivals[sim->arrived]
                                                          : INFINITY;
    double interval = sim->p.sample_interval_s;
    sim->sample_index = next_tick(sim->sample_index, interval, until);
    schedule(sim, (double)sim->sample_index * interval, O_SAMPLE, E_SAMPLE, 0, 0);
}

static void on_node_fault(Sim *sim, int32_t n) {
    set_ready(sim, n, 0);
    startup_clear(sim, n);
    if (!sim_reserve(sim, (void **)&sim->scratch, &sim->scratch_capacity,
                     sim->nodes[n].running_count, sizeof(int64_t)))
        return;
    progress_stop_all(sim, n, sim->scratch);
    while (sim->nodes[n].bound.head != NONE && !sim->error)
        killed(sim, sim->nodes[n].bound.head, R_FAULT);
    schedule(sim, sim->outage_end[n], O_NODE_READY, E_READY, n, 0);
}

static void on_node_ready(Sim *sim, int32_t n) {
    set_ready(sim, n, 1);
    sim->dirty = 1;
    startup_clear(sim, n);
    NodeLive *node = &sim->nodes[n];
    for (int64_t uid = node->waiting.head; uid != NONE; uid = sim->pods[uid].waiting.next)
        schedule(sim, startup_time(sim, n), O_START, E_START, uid, sim->pods[uid].version);
    node->waiting = EMPTY_LIST;
    schedule_outage(sim, n, sim->outage_end[n]);
}

static void handle(Sim *sim, const Event *event) {
    switch (event->kind) {
    case E_ARRIVAL: engine_on_arrival(sim, (int32_t)event->arg); break;
    case E_RETRY: engine_on_retry(sim, event->arg); break;
    case E_SUBMIT: engine_on_submit(sim, (int32_t)event->arg); break;
    case E_START: on_start(sim, event->arg, event->aux); break;
    case E_COMPLETE: on_complete(sim, event->arg, event->aux); break;
    case E_RELEASE:
        release_pod(sim, event->arg);
        sim->dirty = 1;
        break;
    case E_FAULT: on_node_fault(sim, (int32_t)event->arg); break;
    case E_READY: on_node_ready(sim, (int32_t)event->arg); break;
    case E_STORAGE: {
        int32_t index = (int32_t)event->arg;
        progress_set_iops(sim, index, sim->change_iops[index], sim->change_collapsed[index]);
        schedule_iops_change(sim, index, sim->now_s, sim->change_collapsed[index]);
        break;
    }
    case E_SAMPLE: on_sample(sim); break;
    default: break;
    }
}

/* Kernel.run_instant: every event at the time of the next one. */
static void run_instant(Sim *sim) {
    Heap *heap = &sim->heap;
    double time_s = heap->items[0].time_s;
    sim->now_s = time_s;
    while (heap->size > 0 && heap->items[0].time_s <= time_s && !sim->error) {
        Event event = heap_pop(heap);
        sim->processed++;
        handle(sim, &event);
        if (sim->processed % SIGNAL_CHECK_EVENTS == 0 && PyErr_CheckSignals() != 0) {
            sim->error = 1;
            return;
        }
    }
}

/* --- the loop ---------------------------------------------------------------------------- */

static int in_flight(const Sim *sim) {
    return sim->bound_pods || sim->outstanding || sim->nodes_down;
}

static int stalled(Sim *sim) {
    if (in_flight(sim)) return 0;
    if (sim->pending_count == 0) return 1;
    if (sim->idle > IDLE_ROUNDS || !could_place_any(sim)) {
        sim->stalled = 1;
        sim->stalled_at_s = sim->now_s;
        sim->stalled_pending = sim->pending_count;
        return 1;
    }
    return 0;
}

static void finish_run(Sim *sim, double end_s) {
    sim->done = 1;
    sim->end_s = end_s;
}

/* Simulation.advance: run to the next decision point or to the end of the run. */
static void advance(Sim *sim) {
    if (!in_flight(sim) && sim->pending_count) sim->idle++;
    while (!sim->error) {
        if (sim->tick || sim->pending_count != sim->last_pending) {
            record_sample(sim, sim->tick);
            sim->tick = 0;
        }
        if (sim->ended == sim->job_count || (!in_flight(sim) && stalled(sim))) {
            finish_run(sim, sim->now_s);
            return;
        }
        if (sim->samples.size >= sim->p.max_samples) {  /* the record's bound (sampling.py) */
            sim->sample_limit = 1;
            finish_run(sim, sim->now_s);
            return;
        }
        double next_s = sim->heap.size ? sim->heap.items[0].time_s : INFINITY;
        if (next_s > sim->p.horizon_s) {
            finish_run(sim, sim->p.horizon_s > sim->now_s ? sim->p.horizon_s : sim->now_s);
            return;
        }
        if (sim->heap.size) run_instant(sim);
        if (sim->dirty) {
            sim->dirty = 0;
            if (could_place_any(sim)) return;
        }
    }
}

static double seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

static void report_progress(Sim *sim, int64_t *reported) {
    if (sim->progress == NULL || sim->ended == *reported || sim->error) return;
    *reported = sim->ended;
    double share = sim->job_count ? (double)sim->ended / (double)sim->job_count : 1.0;
    PyObject *result = PyObject_CallFunction(sim->progress, "d", share);
    if (result == NULL) sim->error = 1;
    Py_XDECREF(result);
}

/* run._drive over SimEnv.step: decide, bind, go on at the same decision point while some pod
 * could be placed, else advance. */
void sim_drive(Sim *sim) {
    int64_t reported = -1;
    advance(sim);
    while (!sim->done && !sim->error) {
        int64_t uid;
        int32_t node;
        double score, before = seconds();
        int placed = kube_decide(sim->kube, &sim->view, sim->now_s, &uid, &node, &score);
        sim->decision_seconds += seconds() - before;
        if (placed < 0 || sim->error) {
            sim->error = 1;
            return;
        }
        sim->decisions++;
        if (placed) {
            bind(sim, uid, node);
            if (could_place_any(sim)) {
                report_progress(sim, &reported);
                continue;
            }
        }
        advance(sim);
        report_progress(sim, &reported);
    }
}

/* Simulation.close: the last sample, then what was still under way. */
void sim_close(Sim *sim) {
    record_sample(sim, 0);
    for (int64_t uid = sim->pending.head; uid != NONE; uid = sim->pods[uid].pending.next) {
        record_pod(sim, uid, R_UNFINISHED, NAN, 0);
    }
    for (int32_t n = 0; n < sim->node_count; n++) {
        for (int64_t uid = sim->nodes[n].bound.head; uid != NONE; uid = sim->pods[uid].bound.next) {
            int32_t phase = sim->pods[uid].phase;
            if (phase == P_STARTING || phase == P_RUNNING)
                record_pod(sim, uid, R_UNFINISHED, sim->now_s, 1);
        }
    }
    if (!sim->done) sim->end_s = sim->now_s;
}

/* Simulation.__init__ and SimEnv.reset: arrivals, the first scrape, the background processes. */
void sim_start(Sim *sim) {
    engine_add(sim);
    schedule(sim, 0.0, O_SAMPLE, E_SAMPLE, 0, 0);
    if (sim->p.on_faults)
        for (int32_t n = 0; n < sim->node_count && !sim->error; n++) schedule_outage(sim, n, 0.0);
    if (sim->p.on_storage)
        for (int32_t i = 0; i < sim->pool_count && !sim->error; i++)
            if (sim->pools[i].shared) schedule_iops_change(sim, i, 0.0, 0);
}
