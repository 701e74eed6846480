/* The live state of one native run, shared by the files of the core: a port of the Python
 * simulator (src/dagpilot/sim) that must give the same RunRecord, bit for bit. Each part keeps
 * the Python module's names, and iterates in the same order (Python dicts keep insertion order:
 * here, intrusive lists in that order), so events are scheduled in the same sequence. */
#ifndef DAGPILOT_SIM_H
#define DAGPILOT_SIM_H

#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

#include "alloc.h"
#include "heap.h"
#include "list.h"
#include "model.h"

struct Kube;

/* sim.kernel.Order */
enum { O_COMPLETE, O_NODE_READY, O_NODE_FAULT, O_STORAGE, O_START, O_ARRIVAL, O_SUBMIT,
       O_SAMPLE };
/* What an event does (its handler in the Python simulator). */
enum { E_ARRIVAL, E_RETRY, E_SUBMIT, E_START, E_COMPLETE, E_RELEASE, E_FAULT, E_READY,
       E_STORAGE, E_SAMPLE };
/* sim.pod.Phase, plus PENDING for a pod not bound yet. */
enum { P_STARTING, P_RUNNING, P_SUCCEEDED, P_KILLED, P_PENDING };
/* PodRecord.outcome */
enum { R_SUCCEEDED, R_OOM, R_FAULT, R_UNFINISHED, R_CANCELLED };

typedef struct {
    double horizon_s, poll_interval_s, submit_latency_s, sample_interval_s;
    double startup_median_s, startup_sigma, retry_backoff_s, retry_backoff_max_s;
    int32_t release_at_poll, engine_queue_size, oom_retry_limit, startup_slots;
    int32_t max_samples;     /* sim/sampling.py MAX_SAMPLES: a busy run ends at so many */
    int32_t on_membw, on_storage, on_network, on_pcie, on_memory, on_faults;
    double membw_knee, membw_saturation_mbpi, membw_cache_miss_factor;
    double io_level_ms[3], io_level_factor[3];
    double rtt_ms[4];        /* same node, same rack, cross rack, cross zone */
    double network_latency_sensitivity, pcie_cross_complex_factor;
    double page_cache_miss_factor;
    double eviction_delay_s;  /* FaultSettings.eviction_delay_s */
} Params;

typedef struct {
    double arrival_s, phase_s;
    int32_t first_task, task_count;
    /* JobRun */
    int32_t tasks_left, in_flight, submit_scheduled, arrived, failed, ended;
    double finish_s;          /* NAN until it finishes */
    int64_t queue_head, queue_tail;   /* its engine's queue: entries of Sim.queue */
} Job;

typedef struct { int32_t task, instance, attempt; int64_t next; } QueueEntry;

typedef struct {
    int32_t task, instance, attempt, job;
    double created_s;
    PodLinks pending;
    int32_t phase, node, group;
    uint64_t gpus;            /* bit i: GPU i of its node */
    int32_t gpu_count;
    int64_t cpu_m;
    double bound_s, started_s, remaining, rate, since;
    int64_t version;
    double cpu_used, membw_share, io_share, comm_share;
    int64_t working, cache;
    double membw, iops, pcie;
    PodLinks bound, running, member, waiting;
} Pod;

typedef struct {
    int32_t ready, pods, gpus_used, running_count;
    int64_t cpu_m, memory, mem_working, mem_cache;
    uint64_t gpu_free;        /* bit i: GPU i is free */
    double membw_demand, membw_multiplier;
    double cache_multiplier;  /* I/O slowdown of the page cache reclaimed under pressure */
    PodList bound, running, waiting;
} NodeLive;

typedef struct {
    double nominal_iops, iops, service_ms, demand, await_ms, multiplier;
    int32_t collapsed, level, shared;
    int32_t nodes, node_count;  /* offset and count in Sim.pool_nodes */
} Pool;

typedef struct {
    double multiplier;
    PodList members;
    int32_t count;
} Group;

/* Growable output columns: one row per PodRecord, per Sample. */
typedef struct {
    int64_t size, capacity;
    int64_t *uid;
    int32_t *node, *outcome;
    double *bound_s, *started_s, *finished_s, *ended_s;
} PodRecords;

typedef struct {
    int64_t size, capacity;
    double *time_s, *cpu_allocated, *cpu_used, *gpu_allocated;
    int64_t *pending, *running;
} Samples;

typedef struct Sim {
    Params p;
    Heap heap;
    double now_s;
    int64_t processed;
    /* inputs */
    int32_t job_count, task_count, node_count, pool_count, group_count;
    Job *jobs;
    TaskSpec *tasks;
    NodeSpecC *specs;
    const int32_t *children;
    const double *instance_runtimes_s, *instance_iops;
    const int32_t *gpu_root_complex;
    int32_t *pool_nodes;
    int32_t *instance_base;   /* task -> offset of its instances in the per-instance arrays */
    /* engine */
    int32_t *missing, *instances_left, *oom_kills;
    QueueEntry *queue;
    int64_t queue_size, queue_capacity, queue_free;
    int64_t next_uid, in_system, ended, outstanding;
    /* pods, by uid (index 0 unused) */
    Pod *pods;
    int64_t pod_capacity;
    /* cluster state */
    NodeLive *nodes;
    Pool *pools;
    Group *groups;
    double *allocatable, *allocated;   /* NodeView rows */
    uint8_t *ready;
    PodList pending;
    int64_t pending_count, tolerating_not_ready;
    int32_t amount_kinds[3];           /* distinct pending amounts known per resource */
    int64_t *amount_values[3];         /* ascending */
    int64_t *amount_counts[3];
    int32_t *task_amount[3];           /* task -> index of its amount per resource */
    int32_t smallest_valid;
    int64_t smallest[3];
    int32_t witness;
    int32_t no_room_valid, no_room_anywhere;
    int64_t no_room[3];
    int32_t *freed, freed_count;      /* nodes freed since the no-room scan, insertion order */
    uint8_t *is_freed;
    int64_t bound_pods, nodes_down, cpu_allocated_m, gpus_allocated, gpu_capacity;
    double cpu_capacity;
    double *slot_free;                 /* [nodes * slots]: when each start-up slot frees */
    int32_t *stamp_node, *stamp_rack, *stamp_zone, stamp;
    int32_t rack_count, zone_count;
    double *outage_end;                /* per node: when its current outage ends */
    double *change_iops;               /* per pool: the IOPS of its next change */
    int32_t *change_collapsed;
    NodeView view;
    int32_t *changes;                  /* view.changed: [4 x nodes + 65], see log_change */
    int64_t *scratch;                  /* pods of one node: OOM victims, pods stopped by a fault */
    int64_t scratch_capacity;
    /* progress */
    int64_t running;
    double cpu_used;
    /* simulation */
    int32_t dirty, tick, idle, done, stalled;
    double stalled_at_s;
    int64_t stalled_pending;
    double end_s;
    int64_t last_pending;
    int64_t oom_kill_count, fault_kill_count, restarts, decisions;
    double decision_seconds;
    PodRecords records;
    Samples samples;
    int64_t sample_index;     /* the grid index of the next scrape (sampling.c) */
    int32_t sample_limit;     /* the run ended at its max_samples-th sample */
    double *arrivals;         /* every job's arrival event time, ascending */
    int32_t arrived;          /* jobs arrived so far (arrivals run in time order) */
    /* randomness and callbacks (Python) */
    PyObject *normals;        /* callable() -> list of standard normals (the next block) */
    double *normal_block;     /* the current block, copied: the list may change later */
    Py_ssize_t normal_count, normal_next, normal_capacity;
    PyObject *next_outage;    /* callable(after_s) -> (start, end) or None */
    PyObject *next_iops;      /* callable(now_s, nominal, collapsed) -> (time, iops, collapsed) or None */
    PyObject *progress;       /* callable(share) or None */
    struct Kube *kube;
    int error;                /* a Python exception is set */
} Sim;


/* heap */
void schedule(Sim *sim, double time_s, int32_t priority, int32_t kind, int64_t arg, int64_t aux);

/* cluster.c: allocation, pending pods, readiness (sim/cluster_state.py) */
int cluster_init(Sim *sim);
void add_pending(Sim *sim, int64_t uid);
void remove_pending(Sim *sim, int64_t uid);
void bind_pod(Sim *sim, int64_t uid, int32_t node);
void release_pod(Sim *sim, int64_t uid);
void set_ready(Sim *sim, int32_t node, int32_t ready);
int could_place_any(Sim *sim);

/* progress.c: running pods and their rates (sim/progress.py, sim/physics.py) */
int progress_start(Sim *sim, int64_t uid, int64_t *victims, int32_t *victim_count);
void progress_stop(Sim *sim, int64_t uid);
int32_t progress_stop_all(Sim *sim, int32_t node, int64_t *stopped);
void progress_set_iops(Sim *sim, int32_t pool, double iops, int32_t collapsed);

/* engine.c: the workflow engine (sim/engine.py) */
void engine_add(Sim *sim);
int engine_only_arrivals_ahead(const Sim *sim);  /* no pod to create or retry, only arrivals */
void engine_on_arrival(Sim *sim, int32_t job);
void engine_on_submit(Sim *sim, int32_t job);
void engine_on_retry(Sim *sim, int64_t uid);
void engine_succeeded(Sim *sim, int32_t job, int32_t task);
int engine_killed(Sim *sim, int64_t uid, int oom);
double next_poll(double now_s, double phase_s, double interval_s);

/* recorder.c: the record (sim/recorder.py) */
void record_pod(Sim *sim, int64_t uid, int32_t outcome, double now_s, int bound);
void record_sample(Sim *sim, int tick);

/* sampling.c: the scrape grid (sim/sampling.py); quiet_until_s: the next arrival when the run
 * is quiet, else +inf */
int64_t next_tick(int64_t index, double interval_s, double quiet_until_s);

/* startup.c: start-up delays and slots (sim/startup.py) */
double startup_time(Sim *sim, int32_t node);
void startup_clear(Sim *sim, int32_t node);

/* run.c: the simulation loop */
void on_pod_created(Sim *sim, int64_t uid);
void on_job_ended(Sim *sim, int32_t job);
int sim_reserve(Sim *sim, void **items, int64_t *capacity, int64_t wanted, size_t size);

#endif
