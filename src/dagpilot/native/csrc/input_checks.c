/* The run's inputs (dagpilot/native/pack.py) checked once read: every index one table holds
 * into another in range, so that the core never reads or writes outside its arrays, and every
 * float a number in its range (checks.h), so that no NaN or infinity reaches a rate, a score or
 * an event time; each failure a ValueError naming the table, column and row. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "inputs.h"

/* Amounts (millicores, bytes) stay below 2**53: exact as doubles, and what a node adds up of
 * them far from int64 overflow. */
#define MAX_AMOUNT 9007199254740992LL
#define MAX_GPUS 64   /* a node's GPUs are the bits of one 64-bit word */

#ifdef __GNUC__
#define PRINTF_LIKE(at, first) __attribute__((format(printf, at, first)))
#else
#define PRINTF_LIKE(at, first)
#endif

/* A ValueError naming the table, column and row of a bad value; returns 0. */
static int bad_value(const char *table, const char *column, int64_t row, const char *format,
                     ...) PRINTF_LIKE(4, 5);

static int bad_value(const char *table, const char *column, int64_t row, const char *format,
                     ...) {
    char detail[200];
    va_list args;
    va_start(args, format);
    vsnprintf(detail, sizeof(detail), format, args);
    va_end(args);
    PyErr_Format(PyExc_ValueError, "native run: %s.%s row %lld: %s", table, column,
                 (long long)row, detail);
    return 0;
}

/* Whether value lies in [low, high). */
static int in_range(int64_t value, int64_t low, int64_t high) {
    return value >= low && value < high;
}

/* A slice [offset, offset + count) of an array of `length` items. */
static int slice_fits(int64_t offset, int64_t count, int64_t length) {
    return offset >= 0 && count >= 0 && offset + count <= length;
}

static int check_amount(const char *table, const char *column, int64_t row, int64_t value) {
    return in_range(value, 0, MAX_AMOUNT)
        || bad_value(table, column, row, "%lld is negative or not below 2**53", (long long)value);
}

/* Each job's tasks are the rows [first_task, first_task + task_count), and name that job. */
static int check_jobs(const Sim *sim) {
    for (int32_t j = 0; j < sim->job_count; j++) {
        const Job *job = &sim->jobs[j];
        if (!slice_fits(job->first_task, job->task_count, sim->task_count))
            return bad_value("jobs", "first_task", j, "first_task %d with task_count %d is "
                             "not a range of rows of tasks (%d rows)", job->first_task,
                             job->task_count, sim->task_count);
        for (int32_t t = job->first_task; t < job->first_task + job->task_count; t++)
            if (sim->tasks[t].job != j)
                return bad_value("tasks", "job", t, "%d, but the row is in the tasks of job %d",
                                 sim->tasks[t].job, j);
    }
    return 1;
}

/* A task's edges: its children slice, each child a task of its own job; and its parents, the
 * number of tasks that list it as a child (counted into `parents`, one per task). */
static int check_children(const Sim *sim, int32_t t, Py_ssize_t length, int32_t *parents) {
    const TaskSpec *task = &sim->tasks[t];
    if (!slice_fits(task->children, task->child_count, length))
        return bad_value("tasks", "children", t, "offset %d with child_count %d is not a "
                         "range of arrays.children (%zd items)", task->children,
                         task->child_count, length);
    const Job *job = &sim->jobs[task->job];
    for (int32_t i = 0; i < task->child_count; i++) {
        int32_t child = sim->children[task->children + i];
        if (!in_range(child, job->first_task, (int64_t)job->first_task + job->task_count))
            return bad_value("arrays", "children", task->children + i, "child %d of task %d is "
                             "not a task of its job %d", child, t, task->job);
        parents[child]++;
    }
    return 1;
}

/* A task's own figures: job, GPUs, instances, per-instance runtimes, group, amounts. */
static int check_task(const Sim *sim, int32_t t, const ArrayLengths *lengths) {
    const TaskSpec *task = &sim->tasks[t];
    if (!in_range(task->job, 0, sim->job_count))
        return bad_value("tasks", "job", t, "%d is not a row of jobs (%d rows)", task->job,
                         sim->job_count);
    if (!in_range(task->gpus, 0, MAX_GPUS + 1))
        return bad_value("tasks", "gpus", t, "%d is not from 0 to %d", task->gpus, MAX_GPUS);
    if (task->instances < 1)
        return bad_value("tasks", "instances", t, "%d is below 1", task->instances);
    if (task->runtimes != NONE && !slice_fits(task->runtimes, task->instances, lengths->runtimes))
        return bad_value("tasks", "runtimes", t, "offset %d with %d instances is not -1 or a "
                         "range of arrays.instance_runtimes_s (%zd items)", task->runtimes,
                         task->instances, lengths->runtimes);
    if (task->comm_group != NONE && !in_range(task->comm_group, 0, sim->group_count))
        return bad_value("tasks", "comm_group", t, "%d is not -1 or a group below counts.groups "
                         "(%d)", task->comm_group, sim->group_count);
    if (task->parents < 0)
        return bad_value("tasks", "parents", t, "%d is negative", task->parents);
    return check_amount("tasks", "cpu_m", t, task->cpu_m)
        && check_amount("tasks", "memory", t, task->memory)
        && check_amount("tasks", "working", t, task->working)
        && check_amount("tasks", "cache", t, task->cache);
}

static int check_tasks(const Sim *sim, const ArrayLengths *lengths) {
    if (lengths->iops != lengths->runtimes) {
        PyErr_Format(PyExc_ValueError, "native run: arrays.instance_iops has %zd items, "
                     "arrays.instance_runtimes_s %zd: one per instance each", lengths->iops,
                     lengths->runtimes);
        return 0;
    }
    int64_t instances = 0;
    for (int32_t t = 0; t < sim->task_count; t++) {
        if (!check_task(sim, t, lengths)) return 0;
        instances += sim->tasks[t].instances;
        if (instances > INT32_MAX)
            return bad_value("tasks", "instances", t, "the run's instances pass 2**31 - 1");
    }
    int32_t *parents = zeroed((size_t)sim->task_count, sizeof(int32_t));
    if (parents == NULL) {
        PyErr_NoMemory();
        return 0;
    }
    int ok = check_jobs(sim);
    for (int32_t t = 0; ok && t < sim->task_count; t++)
        ok = check_children(sim, t, lengths->children, parents);
    for (int32_t t = 0; ok && t < sim->task_count; t++)
        if (parents[t] != sim->tasks[t].parents)
            ok = bad_value("tasks", "parents", t, "%d, but %d tasks list it as a child",
                           sim->tasks[t].parents, parents[t]);
    free(parents);
    return ok;
}

static int check_node(const Sim *sim, int32_t n, const ArrayLengths *lengths) {
    const NodeSpecC *node = &sim->specs[n];
    if (!in_range(node->gpus, 0, MAX_GPUS + 1))
        return bad_value("nodes", "gpus", n, "%d is not from 0 to %d", node->gpus, MAX_GPUS);
    if (!slice_fits(node->root_complexes, node->gpus, lengths->root_complexes))
        return bad_value("nodes", "root_complexes", n, "offset %d with %d GPUs is not a "
                         "range of arrays.gpu_root_complex (%zd items)", node->root_complexes,
                         node->gpus, lengths->root_complexes);
    if (!in_range(node->pool, 0, sim->pool_count))
        return bad_value("nodes", "pool", n, "%d is not a row of pools (%d rows)", node->pool,
                         sim->pool_count);
    if (!in_range(node->zone, 0, sim->zone_count))
        return bad_value("nodes", "zone", n, "%d is not below counts.zones (%d)", node->zone,
                         sim->zone_count);
    if (!in_range(node->rack, 0, sim->rack_count))
        return bad_value("nodes", "rack", n, "%d is not below counts.racks (%d)", node->rack,
                         sim->rack_count);
    return check_amount("nodes", "cpu_cap_m", n, node->cpu_cap_m)
        && check_amount("nodes", "memory", n, node->memory)
        && check_amount("nodes", "mem_capacity", n, node->mem_capacity);
}

/* Each pool's slice of arrays.pool_nodes lists nodes of that pool. */
static int check_pool(const Sim *sim, int32_t p, Py_ssize_t length) {
    const Pool *pool = &sim->pools[p];
    if (!slice_fits(pool->nodes, pool->node_count, length))
        return bad_value("pools", "nodes", p, "offset %d with node_count %d is not a range "
                         "of arrays.pool_nodes (%zd items)", pool->nodes, pool->node_count,
                         length);
    for (int32_t i = 0; i < pool->node_count; i++) {
        int32_t n = sim->pool_nodes[pool->nodes + i];
        if (!in_range(n, 0, sim->node_count) || sim->specs[n].pool != p)
            return bad_value("arrays", "pool_nodes", pool->nodes + i, "%d is not a node of "
                             "pool %d", n, p);
    }
    return 1;
}

int check_references(const Sim *sim, const ArrayLengths *lengths) {
    if (!check_tasks(sim, lengths)) return 0;
    for (int32_t n = 0; n < sim->node_count; n++)
        if (!check_node(sim, n, lengths)) return 0;
    for (int32_t p = 0; p < sim->pool_count; p++)
        if (!check_pool(sim, p, lengths->pool_nodes)) return 0;
    return 1;
}

/* --- numbers ------------------------------------------------------------------------------ */

int follows(double value, const NumberRule *rule) {
    if (isnan(value)) return (rule->flags & NAN_MEANS_NONE) != 0;
    if (value == -INFINITY && (rule->flags & MINUS_INF_OK)) return 1;
    int above = (rule->flags & ABOVE_LOW) ? value > rule->low : value >= rule->low;
    return above && value <= rule->high && (!(rule->flags & WHOLE) || value == floor(value));
}

/* "a number from 0 to 1e+12" and the like, into text. */
static void describe(const NumberRule *rule, char *text, size_t size) {
    int above = (rule->flags & ABOVE_LOW) != 0;
    snprintf(text, size, "a %s %s %.9g %s %.9g%s%s", rule->flags & WHOLE ? "whole number"
             : "number", above ? "above" : "from", rule->low, above ? "and at most" : "to",
             rule->high, rule->flags & NAN_MEANS_NONE ? ", or NaN (none)" : "",
             rule->flags & MINUS_INF_OK ? ", or -inf" : "");
}

int check_numbers(const char *table, const char *column, const void *first, size_t stride,
                  int64_t count, const NumberRule *rule) {
    for (int64_t i = 0; i < count; i++) {
        double value;
        memcpy(&value, (const char *)first + (size_t)i * stride, sizeof(double));
        if (!follows(value, rule)) {
            char wanted[160];
            describe(rule, wanted, sizeof(wanted));
            return bad_value(table, column, i, "%.17g is not %s", value, wanted);
        }
    }
    return 1;
}

static const NumberRule TIME = {0.0, MAX_TIME_S, 0};
static const NumberRule SHARE = {0.0, 1.0, 0};
static const NumberRule CORES = {0.0, MAX_CORES, 0};
static const NumberRule FIGURE = {0.0, MAX_FIGURE, 0};
static const NumberRule SPEED = {0.0, MAX_CORES, ABOVE_LOW};

typedef struct {
    const char *column;
    size_t offset;
    const NumberRule *rule;
} FloatField;

#define TASK_FLOAT(name, rule) {#name, offsetof(TaskSpec, name), &rule}
static const FloatField TASK_FLOATS[] = {
    TASK_FLOAT(cpu, CORES), TASK_FLOAT(runtime_s, TIME), TASK_FLOAT(cpu_used, CORES),
    TASK_FLOAT(membw_share, SHARE), TASK_FLOAT(io_share, SHARE), TASK_FLOAT(comm_share, SHARE),
    TASK_FLOAT(membw, FIGURE), TASK_FLOAT(iops, FIGURE), {NULL, 0, NULL}};

#define NODE_FLOAT(name, rule) {#name, offsetof(NodeSpecC, name), &rule}
static const FloatField NODE_FLOATS[] = {
    NODE_FLOAT(cpu, CORES), NODE_FLOAT(speed, SPEED), NODE_FLOAT(membw_capacity, FIGURE),
    {NULL, 0, NULL}};

static const FloatField JOB_FLOATS[] = {
    {"arrival_s", offsetof(Job, arrival_s), &TIME}, {"phase_s", offsetof(Job, phase_s), &TIME},
    {NULL, 0, NULL}};

static const FloatField POOL_FLOATS[] = {
    {"nominal_iops", offsetof(Pool, nominal_iops), &FIGURE},
    {"service_ms", offsetof(Pool, service_ms), &FIGURE}, {NULL, 0, NULL}};

static int check_fields(const char *table, const FloatField *fields, const void *rows,
                        size_t stride, int64_t count) {
    for (const FloatField *f = fields; f->column != NULL; f++)
        if (!check_numbers(table, f->column, (const char *)rows + f->offset, stride, count,
                           f->rule))
            return 0;
    return 1;
}

int check_figures(const Sim *sim, const ArrayLengths *lengths) {
    return check_fields("tasks", TASK_FLOATS, sim->tasks, sizeof(TaskSpec), sim->task_count)
        && check_fields("nodes", NODE_FLOATS, sim->specs, sizeof(NodeSpecC), sim->node_count)
        && check_fields("jobs", JOB_FLOATS, sim->jobs, sizeof(Job), sim->job_count)
        && check_fields("pools", POOL_FLOATS, sim->pools, sizeof(Pool), sim->pool_count)
        && check_numbers("arrays", "instance_runtimes_s", sim->instance_runtimes_s,
                         sizeof(double), lengths->runtimes, &TIME)
        && check_numbers("arrays", "instance_iops", sim->instance_iops, sizeof(double),
                         lengths->iops, &FIGURE);
}

/* --- settings ------------------------------------------------------------------------------ */

static const NumberRule HORIZON = {0.0, INFINITY, ABOVE_LOW};
static const NumberRule SAMPLE_INTERVAL = {MIN_SAMPLE_INTERVAL_S, MAX_TIME_S, 0};
static const NumberRule SIGMA = {0.0, 5.0, 0};
static const NumberRule PARAMETER = {0.0, 1e6, 0};
static const NumberRule POSITIVE_PARAMETER = {0.0, 1e6, ABOVE_LOW};

static const FloatField PARAM_FLOATS[] = {
    {"horizon_s", offsetof(Params, horizon_s), &HORIZON},
    {"poll_interval_s", offsetof(Params, poll_interval_s), &TIME},
    {"submit_latency_s", offsetof(Params, submit_latency_s), &TIME},
    {"sample_interval_s", offsetof(Params, sample_interval_s), &SAMPLE_INTERVAL},
    {"startup_median_s", offsetof(Params, startup_median_s), &TIME},
    {"startup_sigma", offsetof(Params, startup_sigma), &SIGMA},
    {"retry_backoff_s", offsetof(Params, retry_backoff_s), &TIME},
    {"retry_backoff_max_s", offsetof(Params, retry_backoff_max_s), &TIME},
    {"eviction_delay_s", offsetof(Params, eviction_delay_s), &TIME},
    {"membw_knee", offsetof(Params, membw_knee), &PARAMETER},
    {"membw_saturation_mbpi", offsetof(Params, membw_saturation_mbpi), &PARAMETER},
    {"membw_cache_miss_factor", offsetof(Params, membw_cache_miss_factor), &PARAMETER},
    {"io_level1_ms", offsetof(Params, io_level_ms[0]), &PARAMETER},
    {"io_level2_ms", offsetof(Params, io_level_ms[1]), &PARAMETER},
    {"io_level3_ms", offsetof(Params, io_level_ms[2]), &PARAMETER},
    {"io_level1_factor", offsetof(Params, io_level_factor[0]), &PARAMETER},
    {"io_level2_factor", offsetof(Params, io_level_factor[1]), &PARAMETER},
    {"io_level3_factor", offsetof(Params, io_level_factor[2]), &PARAMETER},
    {"rtt_same_node_ms", offsetof(Params, rtt_ms[0]), &PARAMETER},
    {"rtt_same_rack_ms", offsetof(Params, rtt_ms[1]), &POSITIVE_PARAMETER},  /* a divisor */
    {"rtt_cross_rack_ms", offsetof(Params, rtt_ms[2]), &PARAMETER},
    {"rtt_cross_zone_ms", offsetof(Params, rtt_ms[3]), &PARAMETER},
    {"network_latency_sensitivity", offsetof(Params, network_latency_sensitivity), &PARAMETER},
    {"pcie_cross_complex_factor", offsetof(Params, pcie_cross_complex_factor), &PARAMETER},
    {"page_cache_miss_factor", offsetof(Params, page_cache_miss_factor), &PARAMETER},
    {NULL, 0, NULL}};

int check_params(const Params *p) {
    for (const FloatField *f = PARAM_FLOATS; f->column != NULL; f++) {
        double value;
        memcpy(&value, (const char *)p + f->offset, sizeof(double));
        if (!follows(value, f->rule)) {
            char wanted[160], shown[32];
            describe(f->rule, wanted, sizeof(wanted));
            snprintf(shown, sizeof(shown), "%.17g", value);
            PyErr_Format(PyExc_ValueError, "native run: params.%s is %s, not %s", f->column,
                         shown, wanted);
            return 0;
        }
    }
    return 1;
}
