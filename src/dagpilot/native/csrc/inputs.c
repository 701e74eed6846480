/* The run's inputs from Python: settings and the columns of dagpilot/native/pack.py, read with
 * the buffer protocol and checked for type and length (their indices by input_checks.c), so a
 * packing mistake is an error naming the column, never a wrong run. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
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

/* Whether a buffer holds items of `kind` in this machine's byte order: one format code, maybe
 * after a native byte-order prefix (a byte-swapped column would be read as other numbers). */
static int kind_matches(Kind kind, const Py_buffer *view) {
    const char *format = view->format ? view->format : "B";
    char native = PY_LITTLE_ENDIAN ? '<' : '>';
    if (*format == '@' || *format == '=' || *format == native) format++;
    if (format[0] == '\0' || format[1] != '\0') return 0;
    char code = format[0];
    if ((size_t)view->itemsize != kind_size(kind)) return 0;
    switch (kind) {
    case F64: return code == 'd';
    case I64: return code == 'q' || code == 'l';
    case I32: return code == 'i' || (code == 'l' && view->itemsize == 4);
    case U8: return code == 'B' || code == '?';
    }
    return 0;
}

/* The column's C-contiguous buffer; 0 with a TypeError naming the column when it has none
 * (a list, a strided view). */
static int get_buffer(PyObject *column, const char *table_name, const char *name,
                      Py_buffer *view) {
    if (PyObject_GetBuffer(column, view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) == 0) return 1;
    if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_ValueError)
            || PyErr_ExceptionMatches(PyExc_BufferError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "native run: column %s.%s is a %s without a C-contiguous "
                     "buffer", table_name, name, Py_TYPE(column)->tp_name);
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
    if (!get_buffer(column, table_name, name, &view)) return 0;
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
    if (!get_buffer(column, "arrays", name, &view)) return NULL;
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
    TF(klass, I32), TF(tolerates_not_ready, U8),
    TF(instances, I32), TF(runtime_s, F64), TF(runtimes, I32), TF(cpu_used, F64),
    TF(membw_share, F64), TF(io_share, F64), TF(comm_share, F64), TF(comm_group, I32),
    TF(working, I64), TF(cache, I64), TF(membw, F64), TF(iops, F64), TF(over_limit, U8),
    TF(parents, I32), TF(children, I32), TF(child_count, I32), {NULL, F64, 0}};

#define NF(name, kind) {#name, kind, offsetof(NodeSpecC, name)}
static const Field NODE_FIELDS[] = {
    NF(cpu_cap_m, I64), NF(cpu, F64), NF(memory, I64), NF(gpus, I32), NF(root_complexes, I32), NF(speed, F64), NF(membw_capacity, F64), NF(mem_capacity, I64),
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

static int read_double(PyObject *dict, const char *dict_name, const char *name, double *out) {
    PyObject *value = PyDict_GetItemString(dict, name);
    if (value == NULL) {
        PyErr_Format(PyExc_KeyError, "native run: %s has no %s", dict_name, name);
        return 0;
    }
    *out = PyFloat_AsDouble(value);
    return !(*out == -1.0 && PyErr_Occurred());
}

/* A whole number from `least` to INT32_MAX (converting anything else to int32 is undefined). */
int read_int(PyObject *dict, const char *dict_name, const char *name, int32_t least,
             int32_t *out) {
    double value;
    if (!read_double(dict, dict_name, name, &value)) return 0;
    if (!(value >= (double)least && value <= (double)INT32_MAX && value == floor(value))) {
        char shown[32];
        snprintf(shown, sizeof(shown), "%.17g", value);
        PyErr_Format(PyExc_ValueError, "native run: %s.%s is %s, expected a whole number from "
                     "%d to %d", dict_name, name, shown, (int)least, (int)INT32_MAX);
        return 0;
    }
    *out = (int32_t)value;
    return 1;
}

#define PARAM_DOUBLE(name, field) read_double(d, "params", name, field)
#define PARAM_INT(name, field) read_int(d, "params", name, INT32_MIN, field)

int read_params(PyObject *d, Params *p) {
    return PARAM_DOUBLE("horizon_s", &p->horizon_s)
        && PARAM_DOUBLE("poll_interval_s", &p->poll_interval_s)
        && PARAM_DOUBLE("submit_latency_s", &p->submit_latency_s)
        && PARAM_DOUBLE("sample_interval_s", &p->sample_interval_s)
        && PARAM_DOUBLE("startup_median_s", &p->startup_median_s)
        && PARAM_DOUBLE("startup_sigma", &p->startup_sigma)
        && PARAM_DOUBLE("retry_backoff_s", &p->retry_backoff_s)
        && PARAM_DOUBLE("retry_backoff_max_s", &p->retry_backoff_max_s)
        && PARAM_INT("release_at_poll", &p->release_at_poll)
        && read_int(d, "params", "engine_queue_size", 0, &p->engine_queue_size)
        && read_int(d, "params", "oom_retry_limit", 0, &p->oom_retry_limit)
        && read_int(d, "params", "startup_slots", 0, &p->startup_slots)
        && read_int(d, "params", "max_samples", 1, &p->max_samples)
        && PARAM_INT("on_membw", &p->on_membw) && PARAM_INT("on_storage", &p->on_storage)
        && PARAM_INT("on_network", &p->on_network) && PARAM_INT("on_pcie", &p->on_pcie)
        && PARAM_INT("on_memory", &p->on_memory) && PARAM_INT("on_faults", &p->on_faults)
        && PARAM_DOUBLE("membw_knee", &p->membw_knee)
        && PARAM_DOUBLE("membw_saturation_mbpi", &p->membw_saturation_mbpi)
        && PARAM_DOUBLE("membw_cache_miss_factor", &p->membw_cache_miss_factor)
        && PARAM_DOUBLE("io_level1_ms", &p->io_level_ms[0])
        && PARAM_DOUBLE("io_level2_ms", &p->io_level_ms[1])
        && PARAM_DOUBLE("io_level3_ms", &p->io_level_ms[2])
        && PARAM_DOUBLE("io_level1_factor", &p->io_level_factor[0])
        && PARAM_DOUBLE("io_level2_factor", &p->io_level_factor[1])
        && PARAM_DOUBLE("io_level3_factor", &p->io_level_factor[2])
        && PARAM_DOUBLE("rtt_same_node_ms", &p->rtt_ms[0])
        && PARAM_DOUBLE("rtt_same_rack_ms", &p->rtt_ms[1])
        && PARAM_DOUBLE("rtt_cross_rack_ms", &p->rtt_ms[2])
        && PARAM_DOUBLE("rtt_cross_zone_ms", &p->rtt_ms[3])
        && PARAM_DOUBLE("network_latency_sensitivity", &p->network_latency_sensitivity)
        && PARAM_DOUBLE("pcie_cross_complex_factor", &p->pcie_cross_complex_factor)
        && PARAM_DOUBLE("page_cache_miss_factor", &p->page_cache_miss_factor)
        && PARAM_DOUBLE("eviction_delay_s", &p->eviction_delay_s)
        && check_params(p);
}

/* --- the tables ------------------------------------------------------------------------- */

static PyObject *table_of(PyObject *tables, const char *name) {
    PyObject *table = PyDict_GetItemString(tables, name);
    if (table == NULL)
        PyErr_Format(PyExc_KeyError, "native run: tables has no %s (it needs tasks, nodes, "
                     "jobs, pools, arrays and counts)", name);
    else if (!PyDict_Check(table))
        PyErr_Format(PyExc_TypeError, "native run: tables.%s is a %s, not a dict of columns",
                     name, Py_TYPE(table)->tp_name);
    else
        return table;
    return NULL;
}

static int read_counts(Sim *sim, PyObject *counts) {
    return read_int(counts, "counts", "tasks", 0, &sim->task_count)
        && read_int(counts, "counts", "nodes", 0, &sim->node_count)
        && read_int(counts, "counts", "jobs", 0, &sim->job_count)
        && read_int(counts, "counts", "pools", 0, &sim->pool_count)
        && read_int(counts, "counts", "groups", 0, &sim->group_count)
        && read_int(counts, "counts", "racks", 0, &sim->rack_count)
        && read_int(counts, "counts", "zones", 0, &sim->zone_count);
}

static int read_arrays(Sim *sim, PyObject *arrays, ArrayLengths *lengths) {
    return (sim->children = read_array(arrays, "children", I32, &lengths->children))
        && (sim->instance_runtimes_s = read_array(arrays, "instance_runtimes_s", F64,
                                                  &lengths->runtimes))
        && (sim->instance_iops = read_array(arrays, "instance_iops", F64, &lengths->iops))
        && (sim->gpu_root_complex = read_array(arrays, "gpu_root_complex", I32,
                                               &lengths->root_complexes))
        && (sim->pool_nodes = read_array(arrays, "pool_nodes", I32, &lengths->pool_nodes));
}

int read_inputs(Sim *sim, PyObject *tables) {
    PyObject *tasks, *nodes, *jobs, *pools, *arrays, *counts;
    if (!(tasks = table_of(tables, "tasks")) || !(nodes = table_of(tables, "nodes"))
            || !(jobs = table_of(tables, "jobs")) || !(pools = table_of(tables, "pools"))
            || !(arrays = table_of(tables, "arrays")) || !(counts = table_of(tables, "counts"))
            || !read_counts(sim, counts))
        return 0;
    sim->tasks = zeroed((size_t)sim->task_count, sizeof(TaskSpec));
    sim->specs = zeroed((size_t)sim->node_count, sizeof(NodeSpecC));
    sim->jobs = zeroed((size_t)sim->job_count, sizeof(Job));
    sim->pools = zeroed((size_t)sim->pool_count, sizeof(Pool));
    if (!sim->tasks || !sim->specs || !sim->jobs || !sim->pools) {
        PyErr_NoMemory();
        return 0;
    }
    ArrayLengths lengths;
    return read_fields(tasks, "tasks", TASK_FIELDS, sim->tasks, sizeof(TaskSpec),
                       sim->task_count)
        && read_fields(nodes, "nodes", NODE_FIELDS, sim->specs, sizeof(NodeSpecC),
                       sim->node_count)
        && read_fields(jobs, "jobs", JOB_FIELDS, sim->jobs, sizeof(Job), sim->job_count)
        && read_fields(pools, "pools", POOL_FIELDS, sim->pools, sizeof(Pool), sim->pool_count)
        && read_arrays(sim, arrays, &lengths) && check_references(sim, &lengths)
        && check_figures(sim, &lengths);
}
