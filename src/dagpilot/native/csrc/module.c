/* dagpilot.native._core: one run of the native simulator with kube-default, from the flat
 * arrays of dagpilot/native/pack.py (read by inputs.c) to the columns dagpilot/native/run.py
 * turns into a RunRecord. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "inputs.h"
#include "kube.h"
#include "run.h"
#include "sim.h"
/* --- set-up and tear-down ---------------------------------------------------------------- */

static int64_t draw_integer(void *context, int64_t n) {
    return draw_below(context, n);
}

static void sim_free(Sim *sim) {
    if (sim->kube) kube_free(sim->kube);
    heap_free(&sim->heap);
    void *owned[] = {sim->jobs, sim->tasks, sim->specs, (void *)sim->children,
                     (void *)sim->instance_runtimes_s, (void *)sim->instance_iops,
                     (void *)sim->gpu_root_complex, sim->pool_nodes, sim->instance_base,
                     sim->missing, sim->instances_left, sim->oom_kills, sim->queue, sim->pods,
                     sim->nodes, sim->pools, sim->groups, sim->allocatable, sim->allocated,
                     sim->ready, sim->freed, sim->is_freed, sim->slot_free, sim->stamp_node,
                     sim->stamp_rack, sim->stamp_zone, sim->outage_end, sim->change_iops,
                     sim->change_collapsed, sim->scratch, sim->changes,
                     sim->records.uid, sim->records.node, sim->records.outcome,
                     sim->records.bound_s, sim->records.started_s, sim->records.finished_s,
                     sim->records.ended_s, sim->samples.time_s, sim->samples.cpu_allocated,
                     sim->samples.cpu_used, sim->samples.gpu_allocated, sim->samples.pending,
                     sim->samples.running, sim->normal_block, sim->arrivals};
    for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) free(owned[i]);
    for (int r = 0; r < 3; r++) {
        free(sim->amount_values[r]);
        free(sim->amount_counts[r]);
        free(sim->task_amount[r]);
    }
}

/* The engine's per-task and per-instance counters. */
static int init_engine(Sim *sim) {
    sim->missing = zeroed((size_t)sim->task_count, sizeof(int32_t));
    sim->instances_left = zeroed((size_t)sim->task_count, sizeof(int32_t));
    sim->instance_base = zeroed((size_t)sim->task_count, sizeof(int32_t));
    if (!sim->missing || !sim->instances_left || !sim->instance_base) return 0;
    int64_t instances = 0;
    for (int32_t t = 0; t < sim->task_count; t++) {
        sim->missing[t] = sim->tasks[t].parents;
        sim->instances_left[t] = sim->tasks[t].instances;
        sim->instance_base[t] = (int32_t)instances;
        instances += sim->tasks[t].instances;
    }
    sim->oom_kills = zeroed((size_t)instances, sizeof(int32_t));
    sim->queue_capacity = 1024;
    sim->queue = malloc(sizeof(QueueEntry) * 1024);
    sim->queue_free = NONE;
    return sim->oom_kills && sim->queue;
}

static int init_state(Sim *sim) {
    size_t nodes = (size_t)sim->node_count;
    sim->nodes = zeroed(nodes, sizeof(NodeLive));
    sim->allocatable = zeroed(nodes * 3, sizeof(double));
    sim->allocated = zeroed(nodes * 3, sizeof(double));
    sim->ready = zeroed(nodes, sizeof(uint8_t));
    sim->freed = zeroed(nodes, sizeof(int32_t));
    sim->is_freed = zeroed(nodes, sizeof(uint8_t));
    sim->slot_free = zeroed(nodes * (size_t)(sim->p.startup_slots > 0 ? sim->p.startup_slots : 1),
                            sizeof(double));
    sim->stamp_node = zeroed(nodes, sizeof(int32_t));
    sim->stamp_rack = zeroed((size_t)sim->rack_count, sizeof(int32_t));
    sim->stamp_zone = zeroed((size_t)sim->zone_count, sizeof(int32_t));
    sim->outage_end = zeroed(nodes, sizeof(double));
    sim->change_iops = zeroed((size_t)sim->pool_count, sizeof(double));
    sim->change_collapsed = zeroed((size_t)sim->pool_count, sizeof(int32_t));
    sim->groups = zeroed((size_t)sim->group_count, sizeof(Group));
    sim->pod_capacity = 1024;
    sim->pods = zeroed(1024, sizeof(Pod));
    sim->changes = zeroed(4 * nodes + 65, sizeof(int32_t));  /* log_change's most */
    if (!(sim->nodes && sim->allocatable && sim->allocated && sim->ready && sim->freed
          && sim->changes && sim->is_freed && sim->slot_free && sim->stamp_node && sim->stamp_rack
          && sim->stamp_zone && sim->outage_end && sim->change_iops && sim->change_collapsed
          && sim->groups && sim->pods && heap_init(&sim->heap, 4096)))
        return 0;
    for (int32_t g = 0; g < sim->group_count; g++) {
        sim->groups[g].multiplier = 1.0;
        sim->groups[g].members = EMPTY_LIST;
    }
    for (int32_t i = 0; i < sim->pool_count; i++) {
        Pool *pool = &sim->pools[i];
        pool->iops = pool->nominal_iops;
        pool->await_ms = pool->service_ms;
        pool->multiplier = 1.0;
    }
    sim->last_pending = -1;
    sim->view = (NodeView){.count = sim->node_count, .allocatable = sim->allocatable,
                           .allocated = sim->allocated, .ready = sim->ready,
                           .changed = sim->changes};
    return cluster_init(sim);
}

/* --- results ------------------------------------------------------------------------------ */

static PyObject *column(const void *data, int64_t count, size_t size) {
    return PyBytes_FromStringAndSize(data ? data : "", (Py_ssize_t)((size_t)count * size));
}

static PyObject *results(Sim *sim, int interrupted) {
    const PodRecords *r = &sim->records;
    const Samples *s = &sim->samples;
    double *finish = zeroed((size_t)sim->job_count, sizeof(double));
    uint8_t *failed = zeroed((size_t)sim->job_count, sizeof(uint8_t));
    if (!finish || !failed) {
        free(finish);
        free(failed);
        return PyErr_NoMemory();
    }
    for (int32_t j = 0; j < sim->job_count; j++) {
        finish[j] = sim->jobs[j].failed ? NAN : sim->jobs[j].finish_s;
        failed[j] = (uint8_t)sim->jobs[j].failed;
    }
    int64_t pods = sim->next_uid + 1;
    int32_t *task = zeroed((size_t)pods, sizeof(int32_t)), *instance = zeroed((size_t)pods, 4);
    int32_t *attempt = zeroed((size_t)pods, sizeof(int32_t));
    double *created = zeroed((size_t)pods, sizeof(double));
    for (int64_t uid = 1; task && instance && attempt && created && uid < pods; uid++) {
        task[uid] = sim->pods[uid].task;
        instance[uid] = sim->pods[uid].instance;
        attempt[uid] = sim->pods[uid].attempt;
        created[uid] = sim->pods[uid].created_s;
    }
    PyObject *out = NULL;
    if (task && instance && attempt && created)
        out = Py_BuildValue(
            "{s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,"
            "s:L,s:L,s:L,s:L,s:L,s:d,s:d,s:i,s:i,s:i,s:d,s:L,s:i}",
            "record_uid", column(r->uid, r->size, 8), "record_node", column(r->node, r->size, 4),
            "record_outcome", column(r->outcome, r->size, 4),
            "record_bound_s", column(r->bound_s, r->size, 8),
            "record_started_s", column(r->started_s, r->size, 8),
            "record_finished_s", column(r->finished_s, r->size, 8),
            "record_ended_s", column(r->ended_s, r->size, 8),
            "sample_time_s", column(s->time_s, s->size, 8),
            "sample_pending", column(s->pending, s->size, 8),
            "sample_running", column(s->running, s->size, 8),
            "sample_cpu_allocated", column(s->cpu_allocated, s->size, 8),
            "sample_cpu_used", column(s->cpu_used, s->size, 8),
            "sample_gpu_allocated", column(s->gpu_allocated, s->size, 8),
            "job_finish_s", column(finish, sim->job_count, 8),
            "job_failed", column(failed, sim->job_count, 1),
            "pod_task", column(task, pods, 4), "pod_instance", column(instance, pods, 4),
            "pod_attempt", column(attempt, pods, 4), "pod_created_s", column(created, pods, 8),
            "oom_kills", (long long)sim->oom_kill_count,
            "fault_kills", (long long)sim->fault_kill_count,
            "restarts", (long long)sim->restarts, "decisions", (long long)sim->decisions,
            "events", (long long)sim->processed, "decision_seconds", sim->decision_seconds,
            "end_s", sim->end_s, "interrupted", interrupted, "done", sim->done,
            "stalled", sim->stalled, "stalled_at_s", sim->stalled_at_s,
            "stalled_pending", (long long)sim->stalled_pending,
            "sample_limit", sim->sample_limit);
    else
        PyErr_NoMemory();
    free(finish), free(failed), free(task), free(instance), free(attempt), free(created);
    return out;
}

/* run(params, tables, statics, normals, next_outage, next_iops, scheduler_rng, progress) -> dict
 * scheduler_rng: the numpy Generator of the scheduler's stream (tie-breaks are drawn from its
 * bit generator in C). */
static PyObject *run(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *params, *tables, *statics, *scheduler_rng, *progress;
    Sim sim;
    memset(&sim, 0, sizeof(sim));
    if (!PyArg_ParseTuple(args, "O!O!OOOOOO", &PyDict_Type, &params, &PyDict_Type, &tables,
                          &statics, &sim.normals, &sim.next_outage, &sim.next_iops, &scheduler_rng,
                          &progress))
        return NULL;
    sim.progress = progress == Py_None ? NULL : progress;
    PyObject *out = NULL, *rng_owner;
    BitGen *bitgen = bitgen_of(scheduler_rng, &rng_owner);
    if (bitgen != NULL && read_params(params, &sim.p) && read_inputs(&sim, tables)) {
        if (!init_engine(&sim) || !init_state(&sim)) {
            PyErr_NoMemory();
        } else if ((sim.kube = kube_new(statics, sim.tasks, sim.task_count, sim.node_count,
                                        draw_integer, bitgen)) != NULL) {
            sim_start(&sim);
            if (!sim.error) sim_drive(&sim);
            int interrupted = 0;
            if (sim.error && PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
                PyErr_Clear();  /* Ctrl-C: the record of what ran comes back */
                sim.error = 0;
                interrupted = 1;
            }
            if (!sim.error) {
                sim_close(&sim);
                if (!sim.error) out = results(&sim, interrupted);
            }
        }
    }
    sim_free(&sim);
    Py_XDECREF(rng_owner);
    return out;
}

/* draw_below(generator, n): one tie-break draw, for the test that holds it to numpy's. */
static PyObject *draw_below_py(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *generator;
    long long n;
    if (!PyArg_ParseTuple(args, "OL", &generator, &n)) return NULL;
    if (n < 1 || n > 4294967296LL) {
        PyErr_SetString(PyExc_ValueError, "draw_below needs 1 <= n <= 2**32");
        return NULL;
    }
    PyObject *owner;
    BitGen *bitgen = bitgen_of(generator, &owner);
    PyObject *drawn = bitgen == NULL ? NULL : PyLong_FromLongLong(draw_below(bitgen, n));
    Py_XDECREF(owner);
    return drawn;
}

/* top_of(totals, generator) -> (position, best): kube-default's choice among candidates with
 * these totals (NaN: no score), as kube_choice.c makes it, for the test that holds it to
 * schedulers/top_nodes.py; position is None when there is no candidate. */
static PyObject *top_of_py(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *array, *generator, *owner = NULL, *out = NULL;
    if (!PyArg_ParseTuple(args, "OO", &array, &generator)) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(array, &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) return NULL;
    int32_t count = (int32_t)(view.len / (Py_ssize_t)sizeof(double));
    int32_t *winners = NULL;
    BitGen *bitgen = NULL;
    if (view.itemsize != sizeof(double) || view.format == NULL || strcmp(view.format, "d") != 0
            || view.len > (Py_ssize_t)INT32_MAX * (Py_ssize_t)sizeof(double))
        PyErr_SetString(PyExc_TypeError, "top_of needs a float64 array of totals");
    else if ((winners = zeroed((size_t)count, sizeof(int32_t))) == NULL)
        PyErr_NoMemory();
    else if ((bitgen = bitgen_of(generator, &owner)) != NULL) {
        double best;
        int32_t pick = kube_pick(kube_top(view.buf, count, winners, &best), draw_integer,
                                 bitgen);
        out = pick == NONE ? Py_BuildValue("(Od)", Py_None, best)
                           : Py_BuildValue("(id)", winners[pick], best);
    }
    free(winners);
    Py_XDECREF(owner);
    PyBuffer_Release(&view);
    return out;
}

static PyMethodDef METHODS[] = {
    {"run", run, METH_VARARGS, "One native run of kube-default; see dagpilot.native.run."},
    {"draw_below", draw_below_py, METH_VARARGS, "Generator.integers(n), one draw, in C."},
    {"top_of", top_of_py, METH_VARARGS, "kube-default's pick among candidates' totals."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_core",
                                    "The native simulator core (C).", -1, METHODS,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void) {
    return PyModule_Create(&MODULE);
}
