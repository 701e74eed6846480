/* The run's inputs as flat C structs (packed by dagpilot/native/pack.py) and the live state of
 * the nodes that both the simulator core (run.c and the files it calls) and the kube-default
 * scheduler (kube*.c) read.
 *
 * Indices, not pointers, join the records: tasks are numbered over all jobs in input order,
 * pods by uid (1, 2, ... in creation order, as the Python engine numbers them). */
#ifndef DAGPILOT_MODEL_H
#define DAGPILOT_MODEL_H

#include <stdint.h>

#define NONE (-1)

/* One task of the workload (Task), with what the simulator derives from it once. */
typedef struct {
    int32_t job;             /* index of its job */
    double cpu;              /* requests.cpu, cores, as given */
    int64_t cpu_m;           /* requests.cpu in millicores, rounded up (sim.nodes.millicores) */
    int64_t memory;          /* requests.memory, bytes */
    int32_t gpus;            /* requests.gpus */
    int32_t klass;           /* kube-default's class (kube_statics.py): equal statics, equal class */
    uint8_t tolerates_not_ready;
    int32_t instances;
    double runtime_s;        /* Task.runtime_s */
    int32_t runtimes;        /* offset in Inputs.instance_runtimes_s, or NONE (no per-instance ones) */
    double cpu_used;         /* requests.cpu x cpu_intensity */
    double membw_share, io_share, comm_share;
    int32_t comm_group;      /* index of (job, comm_group) among the run's groups, or NONE */
    int64_t working, cache;  /* physics.memory_footprint */
    double membw;            /* physics.pod_membw_demand */
    double iops;             /* physics.pod_iops at runtime_s (per instance: Inputs.instance_iops) */
    uint8_t over_limit;      /* physics.over_own_limit(task, working, memory switch) */
    int32_t parents;         /* how many */
    int32_t children;        /* offset in Inputs.children (task indices), count in child_count */
    int32_t child_count;
} TaskSpec;

/* One node (NodeSpec) with the figures the simulator derives from it once. */
typedef struct {
    int64_t cpu_cap_m;       /* millicores(allocatable.cpu) */
    double cpu;              /* allocatable.cpu */
    int64_t memory;          /* allocatable.memory */
    int32_t gpus;            /* allocatable.gpus (len(spec.gpus)) */
    int32_t root_complexes;  /* offset in Inputs.gpu_root_complex (one per GPU) */
    double speed;            /* cpu_speed */
    double membw_capacity;   /* memory_bandwidth_bytes_s */
    int64_t mem_capacity;    /* physics.memory_capacity */
    int32_t pool;            /* index of its storage pool */
    int32_t zone, rack;      /* rack ids are unique over zones */
} NodeSpecC;

/* What schedulers read of the nodes at a decision (ClusterView.resource_arrays, ready_mask):
 * rows of (cpu cores, memory bytes, GPUs) as float64, exactly as the Python ClusterState keeps
 * them (allocated cpu = cpu_m / 1000.0). Written only by the core.
 *
 * The change log (ClusterView.changed_nodes) lets a scheduler's caches over the nodes follow
 * the few rows that change between decisions instead of comparing every row: each time a
 * node's allocated row or readiness changes the core appends its index. Positions count from
 * the start of the run: changed[i] is position changed_first + i, and the end
 * (changed_first + changed_count) never falls. The core drops the older entries now and then
 * (raising changed_first); a reader holding a position below changed_first must then
 * recompute from the rows. */
typedef struct {
    int32_t count;
    const double *allocatable;   /* [count * 3] */
    const double *allocated;     /* [count * 3] */
    const uint8_t *ready;        /* [count] */
    const int32_t *changed;      /* [changed_count] node indices, oldest first, maybe repeated */
    int64_t changed_first;       /* the position of changed[0] */
    int64_t changed_count;
} NodeView;

/* A pending pod as schedulers see it (PodRef). */
typedef struct {
    int64_t uid;
    int32_t task;            /* index of its TaskSpec */
    int32_t instance;
    int32_t attempt;
    double created_s;
} PendingPod;

/* A uniform integer in [0, n) from the scheduler's stream (numpy Generator.integers(n)). */
typedef int64_t (*DrawFn)(void *context, int64_t n);

#endif
