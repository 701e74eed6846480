/* What the parts of the native kube-default share (not for the core, which includes kube.h):
 * the Kube struct, and each part's functions, by file:
 *   kube.c             the Kube's life and kube_decide (schedulers/list_scheduler.py);
 *   kube_statics.c     reading the statics dict (native/kube_statics.py);
 *   kube_pending.c     view.pending as notified (schedulers/pending_sync.py);
 *   kube_queue.c       pod groups in PrioritySort order (schedulers/pod_queue.py, ordering.py);
 *   kube_node_log.c    changed and freed nodes, most free amounts (decide/node_log.py,
 *                      node_arrays.py);
 *   kube_feasibility.c per-class feasibility masks (decide/feasibility.py);
 *   kube_scores.c      the score plugins (decide/scores/);
 *   kube_choice.c      totals and node choice (decide/scoring.py, schedulers/framework_choice.py,
 *                      top_nodes.py, node_sampling.py).
 *
 * Every float expression keeps the order of operations of the Python (numpy) code it mirrors,
 * so the doubles, and therefore the ties and the draws, are the same. Build without
 * -ffast-math, and with -ffp-contract=off where FMA is in the base instruction set (arm64):
 * no product here feeds a sum except of small integers, but nothing should depend on that. */
#ifndef DAGPILOT_KUBE_INTERNAL_H
#define DAGPILOT_KUBE_INTERNAL_H

#include "alloc.h"
#include "kube.h"

#include <stddef.h>

#ifdef __GNUC__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

/* The statics dict, copied (kube_statics.py). T tasks, C classes, K constraints, P static
 * plugins, N nodes. */
typedef struct {
    int32_t limit;              /* numFeasibleNodesToFind */
    double *capacity_milli;     /* [N * 2] */
    uint8_t capacity_positive;
    int64_t *priority;          /* [T] pod priority */
    int32_t *constraint;        /* [C] */
    double *need;               /* [C * 3], -inf: not asked */
    double *request_least;      /* [C * 2] */
    double *request_balanced;   /* [C * 2] */
    uint8_t *clip;              /* [C] */
    uint8_t *tolerates_not_ready; /* [C] */
    uint8_t *static_mask;       /* [K * N] */
    double *static_raw;         /* [P * K * N] */
    double *static_constant;    /* [P * K], NaN: not equal on every node */
    double *static_weight;      /* [P] */
    uint8_t *static_reverse;    /* [P] */
    double *separable_constant; /* [K], NaN: Scoring.node_totals gives None */
} Statics;

typedef struct {
    double created_s;
    int64_t uid;
} Entry;

/* One (class, priority) key of the GroupedQueue. A slot outlives the Python PodGroup: `exists`
 * says whether the queue holds a group under the key now, `has_stamp` whether
 * GroupedQueue._stamps holds a blocked time for it. */
typedef struct {
    int32_t klass;
    int64_t priority;
    int32_t next;               /* next slot of the same class, or NONE */
    uint8_t exists, blocked, has_stamp;
    double blocked_at, stamp;
    Entry *heap;                /* min-heap on (created_s, uid) */
    int32_t count, capacity;
} Group;

enum { ABSENT = 0, JOINED = 1, KNOWN = 2 };

/* A pending pod by uid: JOINED since the last decide, or KNOWN to the queue (PendingSync). */
typedef struct {
    PendingPod pod;
    uint8_t state;
    int64_t position;           /* in Kube.pending */
} Slot;

/* Feasibility.live: a class's feasibility mask and count, current as of log position
 * `position` (-1: never computed), brought up to date on the rows changed since. */
typedef struct {
    uint8_t *mask;              /* [N] */
    int32_t count;
    int64_t position;
} LiveMask;

/* A class's allocation total on one node, valid while the node's row_version is `version`
 * (0: never computed): only the nodes whose allocation changed are scored again. Side by side,
 * so that a candidate's check and total share a cache line. */
typedef struct {
    double total;
    uint64_t version;
} Scored;

struct Kube {
    int32_t node_count, class_count, constraint_count, plugin_count, task_count;
    const TaskSpec *tasks;
    DrawFn draw;
    void *draw_context;
    Statics s;
    int failed;                 /* out of memory in a void call: kube_decide reports it */
    /* kube_pending.c */
    Slot *slots;                /* by uid */
    int64_t slot_count;
    int64_t *pending, pending_count, pending_capacity;  /* uids in view.pending */
    int64_t *joined, joined_count, joined_capacity;     /* uids added since the last decide */
    uint8_t rebuild;            /* a known pod left without being taken */
    /* kube_queue.c */
    Group *groups;
    int32_t group_count, group_capacity;
    int32_t *class_groups;      /* [C] first slot of each class */
    /* kube_node_log.c */
    int observed;               /* NodeLog: the rows below are those of the previous decide */
    int64_t position;           /* the end of the change log at the previous decide */
    double *last_allocated;     /* [N * 3] */
    uint8_t *last_ready;        /* [N] */
    uint64_t *row_version;      /* [N] bumped when the node's allocated row changes */
    int32_t leaves;             /* of the max-tree: a power of two, at least N */
    double *most;               /* [2 * leaves * 3] max-tree of free rows; 1 is the root */
    /* kube_feasibility.c */
    LiveMask *masks;            /* [C] made on first use */
    int64_t mask_budget;        /* bytes the masks may still take */
    uint8_t *feasible;          /* scratch, [N]: the mask when none is kept */
    /* kube_scores.c */
    uint8_t *exact;             /* [C] exact_total serves the class (find_exact_classes) */
    /* kube_choice.c */
    int32_t start;              /* FrameworkChoice._start: nextStartNodeIndex */
    Scored **caches;            /* [C] each [N]: allocation totals per class, made on use */
    int64_t cache_budget;       /* node entries the caches may still take */
    int32_t *candidates, *winners;  /* scratch, [N] each */
    double *totals, *normalised;    /* scratch, [N] each */
};

/* kube_statics.c */
int kube_read_statics(Kube *k, PyObject *statics);
void kube_statics_free(Statics *s);

/* kube_pending.c */
int kube_pending_follow(Kube *k);
void kube_pending_taken(Kube *k, int64_t uid);
void kube_pending_free(Kube *k);

/* kube_queue.c */
int kube_queue_init(Kube *k);
void kube_queue_free(Kube *k);
int kube_queue_add(Kube *k, const PendingPod *pod);
void kube_queue_clear(Kube *k);
int kube_could_fit(const Kube *k, const Group *g, const double most[3]);
void kube_queue_unblock(Kube *k, const double most[3], double now_s);
int32_t kube_queue_best(const Kube *k);
int64_t kube_queue_take(Group *g);

/* kube_node_log.c */
int kube_node_log_init(Kube *k);
void kube_node_log_free(Kube *k);
int kube_observe(Kube *k, const NodeView *nodes);
const int32_t *kube_changed_since(const Kube *k, const NodeView *nodes, int64_t position,
                                  int64_t *count);
int64_t kube_log_end(const NodeView *nodes);
void kube_most_free(const Kube *k, double most[3]);

/* kube_feasibility.c */
int kube_feasibility_init(Kube *k);
void kube_feasibility_free(Kube *k);
const uint8_t *kube_feasible_nodes(Kube *k, int32_t klass, const NodeView *nodes,
                                   int32_t *count);

/* kube_scores.c */
int kube_scores_init(Kube *k);
void kube_scores_free(Kube *k);
double kube_allocation_total(const Kube *k, int32_t klass, int32_t node, const NodeView *nodes);
void kube_normalise(const Kube *k, int32_t plugin, int32_t constraint, const int32_t *nodes,
                    int32_t count, double *part);

/* kube_choice.c */
int kube_choice_init(Kube *k);
void kube_choice_free(Kube *k);
int32_t kube_choose(Kube *k, int32_t klass, const uint8_t *feasible, int32_t feasible_count,
                    const NodeView *nodes, double *score);

#endif
