/* The references between the run's tables (dagpilot/native/pack.py) checked once read: every
 * index one table holds into another in range, so that the core never reads or writes outside
 * its arrays; each failure a ValueError naming the table, column and row. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
