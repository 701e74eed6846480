/* dagpilot.native._core: one run of the native simulator with kube-default, from the flat
 * arrays of dagpilot/native/pack.py to the columns dagpilot/native/run.py turns into a RunRecord.
 * Input columns are read with the buffer protocol and checked for type and length, so a packing
 * mistake is an error naming the column, never a wrong run. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "kube.h"
#include "run.h"
#include "sim.h"

/* --- reading columns ------------------------------------------------------------------- */

typedef enum { F64, I64, I32, U8 } Kind;

typedef struct {
    const char *name;
    Kind kind;
    size_t offset;
} Field;

static size_t kind_size(Kind kind) {
    return kind == F64 || kind == I64 ? 8 : kind == I32 ? 4 : 1;
}

static int kind_matches(Kind kind, const Py_buffer *view) {
    char code = view->format ? view->format[strlen(view->format) - 1] : 'B';
    if ((size_t)view->itemsize != kind_size(kind)) return 0;
    switch (kind) {
    case F64: return code == 'd';
    case I64: return code == 'q' || code == 'l';
    case I32: return code == 'i' || (code == 'l' && view->itemsize == 4);
    case U8: return code == 'B' || code == '?';
    }
    return 0;
}

/* Copy column `name` of `table` (count items) into the field at `offset` of each record. */
static int read_column(PyObject *table, const char *table_name, const char *name, Kind kind,
                       void *base, size_t stride, size_t offset, Py_ssize_t count) {
    PyObject *column = PyDict_GetItemString(table, name);
    if (column == NULL) {
        PyErr_Format(PyExc_KeyError, "native run: %s has no column %s", table_name, name);
        return 0;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(column, &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) != 0) return 0;
    int ok = kind_matches(kind, &view) && view.len == count * (Py_ssize_t)kind_size(kind);
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "native run: column %s.%s has format %s and %zd bytes, "
                     "expected %zd items of %zu bytes", table_name, name,
                     view.format ? view.format : "B", view.len, count, kind_size(kind));
    } else {
        size_t size = kind_size(kind);
        for (Py_ssize_t i = 0; i < count; i++)
            memcpy((char *)base + (size_t)i * stride + offset, (char *)view.buf + (size_t)i * size,
                   size);
    }
    PyBuffer_Release(&view);
    return ok;
}

static int read_fields(PyObject *table, const char *table_name, const Field *fields, void *base,
                       size_t stride, Py_ssize_t count) {
    for (const Field *field = fields; field->name != NULL; field++)
        if (!read_column(table, table_name, field->name, field->kind, base, stride, field->offset,
                         count))
            return 0;
    return 1;
}

/* A whole column as a fresh array (the caller frees it). */
static void *read_array(PyObject *table, const char *name, Kind kind, Py_ssize_t *count) {
    PyObject *column = PyDict_GetItemString(table, name);
    if (column == NULL) {
        PyErr_Format(PyExc_KeyError, "native run: arrays has no column %s", name);
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(column, &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) != 0) return NULL;
    void *copy = NULL;
    if (!kind_matches(kind, &view)) {
        PyErr_Format(PyExc_TypeError, "native run: column %s has format %s", name,
                     view.format ? view.format : "B");
    } else {
        copy = malloc(view.len > 0 ? (size_t)view.len : 1);
        if (copy == NULL) PyErr_NoMemory();
        else memcpy(copy, view.buf, (size_t)view.len);
        *count = view.len / (Py_ssize_t)kind_size(kind);
    }
    PyBuffer_Release(&view);
    return copy;
}

#define TF(name, kind) {#name, kind, offsetof(TaskSpec, name)}
static const Field TASK_FIELDS[] = {
    TF(job, I32), TF(cpu, F64), TF(cpu_m, I64), TF(memory, I64), TF(gpus, I32),
    TF(gpu_model, I32), TF(priority, I32), TF(klass, I32), TF(tolerates_not_ready, U8),
    TF(instances, I32), TF(runtime_s, F64), TF(runtimes, I32), TF(cpu_used, F64),
    TF(membw_share, F64), TF(io_share, F64), TF(comm_share, F64), TF(comm_group, I32),
    TF(working, I64), TF(cache, I64), TF(membw, F64), TF(iops, F64), TF(over_limit, U8),
    TF(parents, I32), TF(children, I32), TF(child_count, I32), {NULL, F64, 0}};

#define NF(name, kind) {#name, kind, offsetof(NodeSpecC, name)}
static const Field NODE_FIELDS[] = {
    NF(cpu_cap_m, I64), NF(cpu, F64), NF(memory, I64), NF(gpus, I32), NF(gpu_model, I32),
    NF(root_complexes, I32), NF(speed, F64), NF(membw_capacity, F64), NF(mem_capacity, I64),
    NF(pool, I32), NF(zone, I32), NF(rack, I32), {NULL, F64, 0}};

#define JF(name, kind) {#name, kind, offsetof(Job, name)}
static const Field JOB_FIELDS[] = {
    JF(arrival_s, F64), JF(phase_s, F64), JF(first_task, I32), JF(task_count, I32),
    {NULL, F64, 0}};

#define PF(name, kind) {#name, kind, offsetof(Pool, name)}
static const Field POOL_FIELDS[] = {
    PF(nominal_iops, F64), PF(service_ms, F64), PF(shared, I32), PF(nodes, I32),
    PF(node_count, I32), {NULL, F64, 0}};

/* --- parameters ------------------------------------------------------------------------ */

static int read_double(PyObject *params, const char *name, double *out) {
    PyObject *value = PyDict_GetItemString(params, name);
    if (value == NULL) {
        PyErr_Format(PyExc_KeyError, "native run: params has no %s", name);
        return 0;
    }
    *out = PyFloat_AsDouble(value);
    return !(*out == -1.0 && PyErr_Occurred());
}

static int read_int(PyObject *params, const char *name, int32_t *out) {
    double value;
    if (!read_double(params, name, &value)) return 0;
    *out = (int32_t)value;
    return 1;
}

static int read_params(PyObject *d, Params *p) {
    return read_double(d, "horizon_s", &p->horizon_s)
        && read_double(d, "poll_interval_s", &p->poll_interval_s)
        && read_double(d, "submit_latency_s", &p->submit_latency_s)
        && read_double(d, "sample_interval_s", &p->sample_interval_s)
        && read_double(d, "startup_median_s", &p->startup_median_s)
        && read_double(d, "startup_sigma", &p->startup_sigma)
        && read_double(d, "retry_backoff_s", &p->retry_backoff_s)
        && read_double(d, "retry_backoff_max_s", &p->retry_backoff_max_s)
        && read_int(d, "release_at_poll", &p->release_at_poll)
        && read_int(d, "engine_queue_size", &p->engine_queue_size)
        && read_int(d, "oom_retry_limit", &p->oom_retry_limit)
        && read_int(d, "startup_slots", &p->startup_slots)
        && read_int(d, "on_membw", &p->on_membw) && read_int(d, "on_storage", &p->on_storage)
        && read_int(d, "on_network", &p->on_network) && read_int(d, "on_pcie", &p->on_pcie)
        && read_int(d, "on_memory", &p->on_memory) && read_int(d, "on_faults", &p->on_faults)
        && read_double(d, "membw_knee", &p->membw_knee)
        && read_double(d, "membw_saturation_mbpi", &p->membw_saturation_mbpi)
        && read_double(d, "membw_cache_miss_factor", &p->membw_cache_miss_factor)
        && read_double(d, "io_level1_ms", &p->io_level_ms[0])
        && read_double(d, "io_level2_ms", &p->io_level_ms[1])
        && read_double(d, "io_level3_ms", &p->io_level_ms[2])
        && read_double(d, "io_level1_factor", &p->io_level_factor[0])
        && read_double(d, "io_level2_factor", &p->io_level_factor[1])
        && read_double(d, "io_level3_factor", &p->io_level_factor[2])
        && read_double(d, "rtt_same_node_ms", &p->rtt_ms[0])
        && read_double(d, "rtt_same_rack_ms", &p->rtt_ms[1])
        && read_double(d, "rtt_cross_rack_ms", &p->rtt_ms[2])
        && read_double(d, "rtt_cross_zone_ms", &p->rtt_ms[3])
        && read_double(d, "network_latency_sensitivity", &p->network_latency_sensitivity)
        && read_double(d, "pcie_cross_complex_factor", &p->pcie_cross_complex_factor);
}

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
                     sim->samples.running};
    for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) free(owned[i]);
    for (int r = 0; r < 3; r++) {
        free(sim->amount_values[r]);
        free(sim->amount_counts[r]);
        free(sim->task_amount[r]);
    }
    Py_XDECREF(sim->normal_block);
}

static void *zeroed(size_t count, size_t size) {
    return calloc(count > 0 ? count : 1, size);
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

static int read_inputs(Sim *sim, PyObject *tables) {
    PyObject *tasks = PyDict_GetItemString(tables, "tasks");
    PyObject *nodes = PyDict_GetItemString(tables, "nodes");
    PyObject *jobs = PyDict_GetItemString(tables, "jobs");
    PyObject *pools = PyDict_GetItemString(tables, "pools");
    PyObject *arrays = PyDict_GetItemString(tables, "arrays");
    PyObject *counts = PyDict_GetItemString(tables, "counts");
    if (!tasks || !nodes || !jobs || !pools || !arrays || !counts) {
        PyErr_SetString(PyExc_KeyError, "native run: tables needs tasks, nodes, jobs, pools, "
                        "arrays and counts");
        return 0;
    }
    int32_t task_count, node_count, job_count, pool_count;
    if (!read_int(counts, "tasks", &task_count) || !read_int(counts, "nodes", &node_count)
            || !read_int(counts, "jobs", &job_count) || !read_int(counts, "pools", &pool_count)
            || !read_int(counts, "groups", &sim->group_count)
            || !read_int(counts, "racks", &sim->rack_count)
            || !read_int(counts, "zones", &sim->zone_count))
        return 0;
    sim->task_count = task_count, sim->node_count = node_count;
    sim->job_count = job_count, sim->pool_count = pool_count;
    sim->tasks = zeroed((size_t)task_count, sizeof(TaskSpec));
    sim->specs = zeroed((size_t)node_count, sizeof(NodeSpecC));
    sim->jobs = zeroed((size_t)job_count, sizeof(Job));
    sim->pools = zeroed((size_t)pool_count, sizeof(Pool));
    if (!sim->tasks || !sim->specs || !sim->jobs || !sim->pools) {
        PyErr_NoMemory();
        return 0;
    }
    Py_ssize_t ignored;
    return read_fields(tasks, "tasks", TASK_FIELDS, sim->tasks, sizeof(TaskSpec), task_count)
        && read_fields(nodes, "nodes", NODE_FIELDS, sim->specs, sizeof(NodeSpecC), node_count)
        && read_fields(jobs, "jobs", JOB_FIELDS, sim->jobs, sizeof(Job), job_count)
        && read_fields(pools, "pools", POOL_FIELDS, sim->pools, sizeof(Pool), pool_count)
        && (sim->children = read_array(arrays, "children", I32, &ignored))
        && (sim->instance_runtimes_s = read_array(arrays, "instance_runtimes_s", F64, &ignored))
        && (sim->instance_iops = read_array(arrays, "instance_iops", F64, &ignored))
        && (sim->gpu_root_complex = read_array(arrays, "gpu_root_complex", I32, &ignored))
        && (sim->pool_nodes = read_array(arrays, "pool_nodes", I32, &ignored));
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
            "s:L,s:L,s:L,s:L,s:L,s:d,s:d,s:i,s:i,s:i,s:d,s:L}",
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
            "stalled_pending", (long long)sim->stalled_pending);
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
    PyObject *out = NULL;
    BitGen *bitgen = bitgen_of(scheduler_rng);
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
    BitGen *bitgen = bitgen_of(generator);
    return bitgen == NULL ? NULL : PyLong_FromLongLong(draw_below(bitgen, n));
}

static PyMethodDef METHODS[] = {
    {"run", run, METH_VARARGS, "One native run of kube-default; see dagpilot.native.run."},
    {"draw_below", draw_below_py, METH_VARARGS, "Generator.integers(n), one draw, in C."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_core",
                                    "The native simulator core (C).", -1, METHODS,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void) {
    return PyModule_Create(&MODULE);
}
