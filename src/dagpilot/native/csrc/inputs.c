/* The run's inputs from Python: settings and the columns of dagpilot/native/pack.py, read with
 * the buffer protocol and checked for type and length, so a packing mistake is an error naming
 * the column, never a wrong run. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "inputs.h"

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

int read_int(PyObject *params, const char *name, int32_t *out) {
    double value;
    if (!read_double(params, name, &value)) return 0;
    *out = (int32_t)value;
    return 1;
}

int read_params(PyObject *d, Params *p) {
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

int read_inputs(Sim *sim, PyObject *tables) {
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
