/* kube-default's decisions in C: the results of the Python scheduler's incremental caches
 * (NodeLog, LiveMask, live totals), kept current the same way, on the nodes the core's change
 * log (NodeView.changed) names, so that a decision costs about the nodes it scores
 * (nodes_to_find) rather than the cluster's size. The most free amounts live in a max-tree.
 *
 * Every float expression keeps the order of operations of the Python (numpy) code it mirrors,
 * so the doubles, and therefore the ties and the draws, are the same. Build without
 * -ffast-math, and with -ffp-contract=off where FMA is in the base instruction set (arm64):
 * no product here feeds a sum except of small integers, but nothing should depend on that. */
#include "kube.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SLACK 1e-9             /* node_log.SLACK: an allocation must fall by more to be freed */
#define MAX_NODE_SCORE 100.0

/* ---- statics ----------------------------------------------------------------------------- */

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

/* ---- queue ------------------------------------------------------------------------------- */

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

/* A class's allocation total on one node, valid while the node's row_version is `version`
 * (0: never computed): only the nodes whose allocation changed are scored again. Side by side,
 * so that a candidate's check and total share a cache line. */
typedef struct {
    double total;
    uint64_t version;
} Scored;

#define CACHE_ENTRIES (1 << 22) /* node entries over all classes' caches (64 MiB at most) */

/* Feasibility.live: a class's feasibility mask and count, current as of log position
 * `position` (-1: never computed), brought up to date on the rows changed since. */
typedef struct {
    uint8_t *mask;              /* [N] */
    int32_t count;
    int64_t position;
} LiveMask;

#define MASK_BYTES (1 << 26)    /* over all classes' masks */

/* A pending pod by uid: JOINED since the last decide, or KNOWN to the queue (PendingSync). */
typedef struct {
    PendingPod pod;
    uint8_t state;
    int64_t position;           /* in Kube.pending */
} Slot;

struct Kube {
    int32_t node_count, class_count, constraint_count, plugin_count, task_count;
    const TaskSpec *tasks;
    DrawFn draw;
    void *draw_context;
    Statics s;
    int32_t start;              /* FrameworkChoice._start: nextStartNodeIndex */
    int observed;               /* NodeLog: the rows below are those of the previous decide */
    int64_t position;           /* the end of the change log at the previous decide */
    double *last_allocated;     /* [N * 3] */
    uint8_t *last_ready;        /* [N] */
    int32_t leaves;             /* of the max-tree: a power of two, at least N */
    double *most;               /* [2 * leaves * 3] max-tree of free rows; 1 is the root */
    LiveMask *masks;            /* [C] made on first use */
    int64_t mask_budget;        /* bytes the masks may still take */
    uint64_t *row_version;      /* [N] bumped when the node's allocated row changes */
    Scored **caches;            /* [C] each [N]: allocation totals per class, made on use */
    int64_t cache_budget;       /* node entries the caches may still take */
    Slot *slots;                /* by uid */
    int64_t slot_count;
    int64_t *pending, pending_count, pending_capacity;  /* uids in view.pending */
    int64_t *joined, joined_count, joined_capacity;     /* uids added since the last decide */
    uint8_t rebuild;            /* a known pod left without being taken */
    Group *groups;
    int32_t group_count, group_capacity;
    int32_t *class_groups;      /* [C] first slot of each class */
    uint8_t *exact;             /* [C] exact_total serves the class (find_exact_classes) */
    uint8_t *feasible;          /* scratch, [N] each: the mask when none is kept */
    int32_t *candidates, *winners;
    double *totals, *normalised;
    int failed;                 /* out of memory in a void call: kube_decide reports it */
};

static void find_exact_classes(Kube *k);

/* ---- reading the statics ----------------------------------------------------------------- */

/* Whether a buffer format names the element kind ('d', 'B', 'i', 'q') for this platform. */
static int format_is(const char *format, char kind)
{
    if (format == NULL)
        return kind == 'B';
    if (*format == '@' || *format == '=' || *format == '<')
        format++;
    if (format[0] == '\0' || format[1] != '\0')
        return 0;
    if (kind == 'B')
        return format[0] == 'B' || format[0] == '?';
    if (kind == 'q')
        return format[0] == 'q' || (format[0] == 'l' && sizeof(long) == 8);
    if (kind == 'i')
        return format[0] == 'i' || (format[0] == 'l' && sizeof(long) == 4);
    return format[0] == kind;
}

/* A copy of statics[key], checked for its kind and shape; dims[i] < 0 is read from the array. */
static void *read_array(PyObject *statics, const char *key, char kind, Py_ssize_t itemsize,
                        int ndim, Py_ssize_t *dims)
{
    PyObject *value = PyDict_GetItemString(statics, key);
    if (value == NULL) {
        PyErr_Format(PyExc_KeyError, "kube statics: missing %s", key);
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(value, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    void *copy = NULL;
    int good = view.itemsize == itemsize && format_is(view.format, kind) && view.ndim == ndim;
    for (int i = 0; good && i < ndim; i++) {
        if (dims[i] < 0)
            dims[i] = view.shape[i];
        good = view.shape[i] == dims[i];
    }
    if (!good)
        PyErr_Format(PyExc_ValueError, "kube statics: %s has the wrong kind or shape", key);
    else if ((copy = malloc(view.len > 0 ? (size_t)view.len : 1)) == NULL)
        PyErr_NoMemory();
    else
        memcpy(copy, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return copy;
}

/* Every class, constraint and task index in range. */
static int check_indices(const Kube *k)
{
    for (int32_t c = 0; c < k->class_count; c++)
        if (k->s.constraint[c] < 0 || k->s.constraint[c] >= k->constraint_count) {
            PyErr_SetString(PyExc_ValueError, "kube statics: constraint index out of range");
            return -1;
        }
    for (int32_t t = 0; t < k->task_count; t++)
        if (k->tasks[t].klass < 0 || k->tasks[t].klass >= k->class_count) {
            PyErr_Format(PyExc_ValueError, "kube: task %d has class %d, not below %d", t,
                         k->tasks[t].klass, k->class_count);
            return -1;
        }
    return 0;
}

static int read_statics(Kube *k, PyObject *statics)
{
    Statics *s = &k->s;
    Py_ssize_t n = k->node_count, t = k->task_count, c = -1, kc = -1, p = -1, one = 1;
    Py_ssize_t d_one[1] = {one}, d_t[1] = {t}, d_c[1] = {c}, d_k[1] = {kc}, d_p[1] = {p};
    int32_t *limit = read_array(statics, "nodes_to_find", 'i', 4, 1, d_one);
    uint8_t *positive = limit ? read_array(statics, "capacity_positive", 'B', 1, 1, d_one) : NULL;
    if (positive == NULL) {
        free(limit);
        return -1;
    }
    s->limit = *limit;
    s->capacity_positive = *positive;
    free(limit);
    free(positive);
    if (s->limit < 1 && k->node_count > 0) {
        PyErr_SetString(PyExc_ValueError, "kube statics: nodes_to_find must be positive");
        return -1;
    }
    Py_ssize_t d_n2[2] = {n, 2};
    if (!(s->capacity_milli = read_array(statics, "capacity_milli", 'd', 8, 2, d_n2)) ||
        !(s->priority = read_array(statics, "priority", 'q', 8, 1, d_t)) ||
        !(s->constraint = read_array(statics, "constraint", 'i', 4, 1, d_c)))
        return -1;
    c = d_c[0];
    Py_ssize_t d_c3[2] = {c, 3}, d_c2[2] = {c, 2}, d_cc[1] = {c}, d_kn[2] = {-1, n};
    if (!(s->need = read_array(statics, "need", 'd', 8, 2, d_c3)) ||
        !(s->request_least = read_array(statics, "request_least", 'd', 8, 2, d_c2)) ||
        !(s->request_balanced = read_array(statics, "request_balanced", 'd', 8, 2, d_c2)) ||
        !(s->clip = read_array(statics, "clip", 'B', 1, 1, d_cc)) ||
        !(s->tolerates_not_ready = read_array(statics, "tolerates_not_ready", 'B', 1, 1, d_cc)) ||
        !(s->static_mask = read_array(statics, "static_mask", 'B', 1, 2, d_kn)) ||
        !(s->static_weight = read_array(statics, "static_weight", 'd', 8, 1, d_p)))
        return -1;
    kc = d_kn[0];
    p = d_p[0];
    d_k[0] = kc;
    Py_ssize_t d_pkn[3] = {p, kc, n}, d_pk[2] = {p, kc}, d_pp[1] = {p};
    if (!(s->static_raw = read_array(statics, "static_raw", 'd', 8, 3, d_pkn)) ||
        !(s->static_constant = read_array(statics, "static_constant", 'd', 8, 2, d_pk)) ||
        !(s->static_reverse = read_array(statics, "static_reverse", 'B', 1, 1, d_pp)) ||
        !(s->separable_constant = read_array(statics, "separable_constant", 'd', 8, 1, d_k)))
        return -1;
    k->class_count = (int32_t)c;
    k->constraint_count = (int32_t)kc;
    k->plugin_count = (int32_t)p;
    return check_indices(k);
}

static void *zeroed(size_t count, size_t size)
{
    return calloc(count > 0 ? count : 1, size);
}

Kube *kube_new(PyObject *statics, const TaskSpec *tasks, int32_t task_count, int32_t node_count,
               DrawFn draw, void *draw_context)
{
    if (!PyDict_Check(statics) || task_count < 0 || node_count < 0 || draw == NULL) {
        PyErr_SetString(PyExc_ValueError, "kube_new: statics must be a dict, counts >= 0");
        return NULL;
    }
    Kube *k = zeroed(1, sizeof(Kube));
    if (k == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    k->tasks = tasks;
    k->task_count = task_count;
    k->node_count = node_count;
    k->draw = draw;
    k->draw_context = draw_context;
    if (read_statics(k, statics) < 0) {
        kube_free(k);
        return NULL;
    }
    size_t n = (size_t)node_count;
    k->last_allocated = zeroed(n * 3, sizeof(double));
    k->last_ready = zeroed(n, 1);
    k->feasible = zeroed(n, 1);
    k->candidates = zeroed(n, sizeof(int32_t));
    k->winners = zeroed(n, sizeof(int32_t));
    k->totals = zeroed(n, sizeof(double));
    k->normalised = zeroed(n, sizeof(double));
    k->class_groups = zeroed((size_t)k->class_count, sizeof(int32_t));
    k->exact = zeroed((size_t)k->class_count, 1);
    k->row_version = zeroed(n, sizeof(uint64_t));
    k->caches = zeroed((size_t)k->class_count, sizeof(Scored *));
    k->cache_budget = CACHE_ENTRIES;
    k->masks = zeroed((size_t)k->class_count, sizeof(LiveMask));
    k->mask_budget = MASK_BYTES;
    for (k->leaves = 1; k->leaves < node_count; k->leaves *= 2)
        ;
    k->most = zeroed((size_t)k->leaves * 6, sizeof(double));
    if (!k->masks || !k->most || !k->exact || !k->row_version || !k->caches ||
        !k->last_allocated || !k->last_ready || !k->feasible || !k->candidates || !k->winners ||
        !k->totals || !k->normalised || !k->class_groups) {
        kube_free(k);
        PyErr_NoMemory();
        return NULL;
    }
    for (int32_t c = 0; c < k->class_count; c++)
        k->class_groups[c] = NONE;
    for (size_t i = 0; i < n; i++)
        k->row_version[i] = 1;
    find_exact_classes(k);
    return k;
}

void kube_free(Kube *k)
{
    if (k == NULL)
        return;
    Statics *s = &k->s;
    void *owned[] = {s->capacity_milli, s->priority, s->constraint, s->need, s->request_least,
                     s->request_balanced, s->clip, s->tolerates_not_ready, s->static_mask,
                     s->static_raw, s->static_constant, s->static_weight, s->static_reverse,
                     s->separable_constant, k->last_allocated, k->last_ready, k->slots,
                     k->pending, k->joined, k->class_groups, k->feasible, k->candidates,
                     k->winners, k->totals, k->normalised, k->exact, k->row_version,
                     k->most};
    for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
        free(owned[i]);
    for (int32_t c = 0; k->caches != NULL && c < k->class_count; c++)
        free(k->caches[c]);
    free(k->caches);
    for (int32_t c = 0; k->masks != NULL && c < k->class_count; c++)
        free(k->masks[c].mask);
    free(k->masks);
    for (int32_t g = 0; g < k->group_count; g++)
        free(k->groups[g].heap);
    free(k->groups);
    free(k);
}

/* ---- growable arrays --------------------------------------------------------------------- */

/* Room for `wanted` items of `size` in *items (capacity doubled); 0, or -1 out of memory. */
static int reserve(void **items, int64_t *capacity, int64_t wanted, size_t size)
{
    if (wanted <= *capacity)
        return 0;
    int64_t grown = *capacity > 0 ? *capacity : 16;
    while (grown < wanted)
        grown *= 2;
    void *moved = realloc(*items, (size_t)grown * size);
    if (moved == NULL)
        return -1;
    *items = moved;
    *capacity = grown;
    return 0;
}

/* ---- PendingSync: view.pending as notified ----------------------------------------------- */

static Slot *slot_of(Kube *k, int64_t uid)
{
    return uid >= 0 && uid < k->slot_count ? &k->slots[uid] : NULL;
}

void kube_pending_added(Kube *k, const PendingPod *pod)
{
    if (pod->uid < 0 || pod->task < 0 || pod->task >= k->task_count) {
        k->failed = 1;  /* not a pod of this run: reported by the next decide */
        return;
    }
    if (pod->uid >= k->slot_count) {
        int64_t capacity = k->slot_count;
        if (reserve((void **)&k->slots, &capacity, pod->uid + 1, sizeof(Slot)) < 0) {
            k->failed = 1;
            return;
        }
        memset(k->slots + k->slot_count, 0, (size_t)(capacity - k->slot_count) * sizeof(Slot));
        k->slot_count = capacity;
    }
    Slot *slot = &k->slots[pod->uid];
    if (slot->state != ABSENT)
        return;
    if (reserve((void **)&k->pending, &k->pending_capacity, k->pending_count + 1,
                sizeof(int64_t)) < 0 ||
        reserve((void **)&k->joined, &k->joined_capacity, k->joined_count + 1,
                sizeof(int64_t)) < 0) {
        k->failed = 1;
        return;
    }
    slot->pod = *pod;
    slot->state = JOINED;
    slot->position = k->pending_count;
    k->pending[k->pending_count++] = pod->uid;
    k->joined[k->joined_count++] = pod->uid;
}

/* Take the pod out of the pending list (order is not kept: the queue orders by key). */
static void forget(Kube *k, Slot *slot)
{
    int64_t last = k->pending[--k->pending_count];
    k->pending[slot->position] = last;
    k->slots[last].position = slot->position;
    slot->state = ABSENT;
}

void kube_pending_removed(Kube *k, int64_t uid)
{
    Slot *slot = slot_of(k, uid);
    if (slot == NULL || slot->state == ABSENT)
        return;
    /* PendingSync's counts disagree at the next decide only when the queue knew the pod; one
     * that joined and left in between is never seen. */
    if (slot->state == KNOWN)
        k->rebuild = 1;
    forget(k, slot);
}

/* ---- GroupedQueue ------------------------------------------------------------------------ */

static int entry_before(const Entry *a, const Entry *b)
{
    return a->created_s < b->created_s || (a->created_s == b->created_s && a->uid < b->uid);
}

static int heap_push(Group *g, Entry entry)
{
    int64_t capacity = g->capacity;
    if (reserve((void **)&g->heap, &capacity, (int64_t)g->count + 1, sizeof(Entry)) < 0)
        return -1;
    g->capacity = (int32_t)capacity;
    int32_t i = g->count++;
    while (i > 0) {
        int32_t parent = (i - 1) / 2;
        if (!entry_before(&entry, &g->heap[parent]))
            break;
        g->heap[i] = g->heap[parent];
        i = parent;
    }
    g->heap[i] = entry;
    return 0;
}

static Entry heap_pop(Group *g)
{
    Entry top = g->heap[0], last = g->heap[--g->count];
    int32_t i = 0;
    for (;;) {
        int32_t child = 2 * i + 1;
        if (child >= g->count)
            break;
        if (child + 1 < g->count && entry_before(&g->heap[child + 1], &g->heap[child]))
            child++;
        if (!entry_before(&g->heap[child], &last))
            break;
        g->heap[i] = g->heap[child];
        i = child;
    }
    if (g->count > 0)
        g->heap[i] = last;
    return top;
}

/* The slot of a (class, priority) key, made on first use; NONE out of memory. */
static int32_t group_slot(Kube *k, int32_t klass, int64_t priority)
{
    for (int32_t g = k->class_groups[klass]; g != NONE; g = k->groups[g].next)
        if (k->groups[g].priority == priority)
            return g;
    int64_t capacity = k->group_capacity;
    if (reserve((void **)&k->groups, &capacity, (int64_t)k->group_count + 1, sizeof(Group)) < 0)
        return NONE;
    k->group_capacity = (int32_t)capacity;
    Group *g = &k->groups[k->group_count];
    memset(g, 0, sizeof(Group));
    g->klass = klass;
    g->priority = priority;
    g->next = k->class_groups[klass];
    k->class_groups[klass] = k->group_count;
    return k->group_count++;
}

/* GroupedQueue.add: a new group takes the blocked time stamped by the last clear(), if any. */
static int queue_add(Kube *k, const PendingPod *pod)
{
    int32_t klass = k->tasks[pod->task].klass;
    int32_t index = group_slot(k, klass, k->s.priority[pod->task]);
    if (index == NONE)
        return -1;
    Group *g = &k->groups[index];
    if (!g->exists) {
        g->exists = 1;
        g->blocked = 0;
        g->blocked_at = g->has_stamp ? g->stamp : -INFINITY;
        g->has_stamp = 0;
        g->count = 0;
    }
    Entry entry = {pod->created_s, pod->uid};
    return heap_push(g, entry);
}

/* GroupedQueue.clear: forget every pod; the blocked times of the groups there now survive
 * (and only those: _stamps is replaced). */
static void queue_clear(Kube *k)
{
    for (int32_t i = 0; i < k->group_count; i++) {
        Group *g = &k->groups[i];
        g->has_stamp = g->exists;
        g->stamp = g->blocked_at;
        g->exists = g->blocked = 0;
        g->count = 0;
    }
}

/* PendingSync.changes + ListScheduler._follow. */
static int follow(Kube *k)
{
    if (k->rebuild) {
        queue_clear(k);
        for (int64_t i = 0; i < k->pending_count; i++) {
            Slot *slot = &k->slots[k->pending[i]];
            slot->state = KNOWN;
            if (queue_add(k, &slot->pod) < 0)
                return -1;
        }
        k->rebuild = 0;
    } else {
        for (int64_t i = 0; i < k->joined_count; i++) {
            Slot *slot = &k->slots[k->joined[i]];
            if (slot->state != JOINED)
                continue;
            slot->state = KNOWN;
            if (queue_add(k, &slot->pod) < 0)
                return -1;
        }
    }
    k->joined_count = 0;
    return 0;
}

static int could_fit(const Kube *k, const Group *g, const double most[3])
{
    const double *need = k->s.need + 3 * g->klass;
    return need[0] <= most[0] && need[1] <= most[1] && need[2] <= most[2];
}

/* GroupedQueue.unblock: reopen the blocked groups that might fit; re-stamp the others. */
static void queue_unblock(Kube *k, const double most[3], double now_s)
{
    for (int32_t i = 0; i < k->group_count; i++) {
        Group *g = &k->groups[i];
        if (!g->exists || !g->blocked)
            continue;
        if (could_fit(k, g, most))
            g->blocked = 0;
        else
            g->blocked_at = now_s;
    }
}

/* Whether group a's head comes before group b's in PrioritySort.head_key order:
 * (-priority, max(created_s, blocked_at), created_s, uid). */
static int head_before(const Group *a, const Group *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    const Entry *x = &a->heap[0], *y = &b->heap[0];
    double queued_x = x->created_s > a->blocked_at ? x->created_s : a->blocked_at;
    double queued_y = y->created_s > b->blocked_at ? y->created_s : b->blocked_at;
    if (queued_x != queued_y)
        return queued_x < queued_y;
    return entry_before(x, y);
}

/* GroupedQueue.best: the open group whose head comes first; NONE when none is open. */
static int32_t queue_best(const Kube *k)
{
    int32_t best = NONE;
    for (int32_t i = 0; i < k->group_count; i++) {
        const Group *g = &k->groups[i];
        if (g->exists && !g->blocked && g->count > 0 &&
            (best == NONE || head_before(g, &k->groups[best])))
            best = i;
    }
    return best;
}

/* ---- NodeLog ----------------------------------------------------------------------------- */

static int64_t log_end(const NodeView *nodes)
{
    return nodes->changed_first + nodes->changed_count;
}

/* NodeLog.since: the rows changed after log `position` (maybe repeated) and their number, or
 * NULL: the log no longer reaches back that far, or replaying it (rows scattered over memory)
 * would cost about as much as one pass over every row. */
static const int32_t *changed_since(const Kube *k, const NodeView *nodes, int64_t position,
                                    int64_t *count)
{
    int64_t offset = position - nodes->changed_first;
    if (position < 0 || offset < 0 || offset > nodes->changed_count)
        return NULL;
    *count = nodes->changed_count - offset;
    return *count > 16 + k->node_count / 4 ? NULL : nodes->changed + offset;
}

/* The node's free row into its leaf of the max-tree, and the maxima above it. A running
 * maximum would not do: placements often take room on the most free node. */
static void update_most(Kube *k, const NodeView *nodes, int32_t node)
{
    double *most = k->most;
    size_t at = (size_t)k->leaves + (size_t)node;
    for (int r = 0; r < 3; r++)
        most[3 * at + r] = nodes->allocatable[3 * node + r] - nodes->allocated[3 * node + r];
    for (at /= 2; at >= 1; at /= 2)
        for (int r = 0; r < 3; r++) {
            double left = most[6 * at + r], right = most[6 * at + 3 + r];
            most[3 * at + r] = right > left ? right : left;
        }
}

/* The max-tree over every node; the leaves past the last node hold -inf. */
static void build_most(Kube *k, const NodeView *nodes)
{
    double *most = k->most;
    for (size_t at = 3 * (size_t)k->leaves; at < 6 * (size_t)k->leaves; at++)
        most[at] = -INFINITY;
    for (int32_t i = 0; i < k->node_count; i++)
        for (int r = 0; r < 3; r++)
            most[3 * ((size_t)k->leaves + i) + r] =
                nodes->allocatable[3 * i + r] - nodes->allocated[3 * i + r];
    for (size_t at = (size_t)k->leaves - 1; at >= 1; at--)
        for (int r = 0; r < 3; r++) {
            double left = most[6 * at + r], right = most[6 * at + 3 + r];
            most[3 * at + r] = right > left ? right : left;
        }
}

/* NodeArrays.most_free: the largest free cpu, memory and GPUs of any node, each on its own. */
static void most_free(const Kube *k, double most[3])
{
    for (int r = 0; r < 3; r++)
        most[r] = k->most[3 + r];
}

/* NodeLog._update for one row: whether its allocation fell by more than SLACK or it became
 * Ready since the previous decide. A changed allocation bumps the row's version (for the
 * totals caches) and its leaf of the max-tree. */
static int observe_row(Kube *k, const NodeView *nodes, int32_t i)
{
    const double *now = nodes->allocated + 3 * (size_t)i;
    double *old = k->last_allocated + 3 * (size_t)i;
    int freed = 0;
    if (memcmp(now, old, 3 * sizeof(double)) != 0) {
        k->row_version[i]++;
        freed = now[0] < old[0] - SLACK || now[1] < old[1] - SLACK || now[2] < old[2] - SLACK;
        memcpy(old, now, 3 * sizeof(double));
        update_most(k, nodes, i);
    }
    if (nodes->ready[i] != k->last_ready[i]) {
        freed |= nodes->ready[i] && !k->last_ready[i];
        k->last_ready[i] = nodes->ready[i];
    }
    return freed;
}

/* NodeLog.observe: whether some node's allocation fell or a node became Ready since the
 * previous decide (the first decide counts as freed). Only the rows the change log names are
 * compared, unless the log does not reach back to the previous decide. */
static int observe(Kube *k, const NodeView *nodes)
{
    int freed = 0;
    int64_t count;
    const int32_t *rows;
    if (!k->observed) {
        memcpy(k->last_allocated, nodes->allocated, (size_t)k->node_count * 3 * sizeof(double));
        memcpy(k->last_ready, nodes->ready, (size_t)k->node_count);
        build_most(k, nodes);
        k->observed = freed = 1;
    } else if ((rows = changed_since(k, nodes, k->position, &count)) == NULL) {
        for (int32_t i = 0; i < k->node_count; i++)
            freed |= observe_row(k, nodes, i);
    } else {
        for (int64_t i = 0; i < count; i++)
            freed |= observe_row(k, nodes, rows[i]);
    }
    k->position = log_end(nodes);
    return freed;
}

/* ---- filters ----------------------------------------------------------------------------- */

/* Feasibility's filters for one node: static mask, NodeReady, NodeResourcesFit. */
static inline uint8_t node_fits(const Kube *k, int32_t klass, const NodeView *nodes, int32_t i)
{
    const uint8_t *allowed = k->s.static_mask + (size_t)k->s.constraint[klass] * k->node_count;
    const double *need = k->s.need + 3 * klass;
    const double *capacity = nodes->allocatable + 3 * i, *bound = nodes->allocated + 3 * i;
    return allowed[i] && (k->s.tolerates_not_ready[klass] || nodes->ready[i]) &&
           capacity[0] - bound[0] >= need[0] && capacity[1] - bound[1] >= need[1] &&
           capacity[2] - bound[2] >= need[2];
}

/* Feasibility.mask over every node into `mask`; the number of feasible nodes. */
static int32_t mask_all(const Kube *k, int32_t klass, const NodeView *nodes, uint8_t *mask)
{
    int32_t count = 0;
    for (int32_t i = 0; i < k->node_count; i++)
        count += mask[i] = node_fits(k, klass, nodes, i);
    return count;
}

/* The class's live mask, made on first use; NULL when the budget is spent or memory short. */
static LiveMask *live_mask_of(Kube *k, int32_t klass)
{
    LiveMask *live = &k->masks[klass];
    if (live->mask == NULL && k->mask_budget >= k->node_count) {
        if ((live->mask = zeroed((size_t)k->node_count, 1)) == NULL)
            return NULL;
        live->position = -1;
        k->mask_budget -= k->node_count;
    }
    return live->mask != NULL ? live : NULL;
}

/* Feasibility.live: the class's feasible nodes as a mask, and their number in *count; the
 * kept mask is brought up to date on the rows changed since its last use. */
static const uint8_t *feasible_nodes(Kube *k, int32_t klass, const NodeView *nodes,
                                     int32_t *count)
{
    LiveMask *live = live_mask_of(k, klass);
    if (live == NULL) {
        *count = mask_all(k, klass, nodes, k->feasible);
        return k->feasible;
    }
    int64_t changes;
    const int32_t *rows = changed_since(k, nodes, live->position, &changes);
    if (rows == NULL)
        live->count = mask_all(k, klass, nodes, live->mask);
    for (int64_t i = 0; rows != NULL && i < changes; i++) {
        int32_t row = rows[i];
        uint8_t fits = node_fits(k, klass, nodes, row);
        live->count += fits - live->mask[row];
        live->mask[row] = fits;
    }
    live->position = log_end(nodes);
    *count = live->count;
    return live->mask;
}

/* ---- scores ------------------------------------------------------------------------------ */

/* Whether x holds an integer of magnitude below 2**52. */
static int small_integer(double x)
{
    return fabs(x) < 0x1p52 && (double)(int64_t)x == x;
}

/* Python's float floor division (float_floor_div), which numpy's floor_divide also follows.
 * The scores divide integers held in doubles; for those below 2**52 the rounded quotient
 * cannot cross an integer, so floor(vx / wx) is the same number (zero's sign included) without
 * the slow fmod. */
static double floor_div(double vx, double wx)
{
    if (wx >= 1.0 && small_integer(vx) && small_integer(wx))
        return floor(vx / wx);
    double mod = fmod(vx, wx);
    double div = (vx - mod) / wx;
    if (mod != 0.0 && ((wx < 0) != (mod < 0)))
        div -= 1.0;
    if (div == 0.0)
        return copysign(0.0, vx / wx);
    double floordiv = floor(div);
    if (div - floordiv > 0.5)
        floordiv += 1.0;
    return floordiv;
}

/* The bound pods' requests plus the pod's, in milli-CPU and bytes (requested_milli + request). */
static void wanted_milli(const double *bound, const double *request, double wanted[2])
{
    wanted[0] = rint(bound[0] * 1000.0) + request[0];
    wanted[1] = rint(bound[1] * 1.0) + request[1];
}

/* LeastAllocated.scores for one node. */
static double least_allocated(const Kube *k, int32_t klass, int32_t node, const double *bound)
{
    const double *capacity = k->s.capacity_milli + 2 * node;
    double wanted[2];
    wanted_milli(bound, k->s.request_least + 2 * klass, wanted);
    if (k->s.capacity_positive) {
        double cpu = floor_div((capacity[0] - wanted[0]) * MAX_NODE_SCORE, capacity[0]);
        double memory = floor_div((capacity[1] - wanted[1]) * MAX_NODE_SCORE, capacity[1]);
        if (k->s.clip[klass]) {
            cpu = fmax(cpu, 0.0);
            memory = fmax(memory, 0.0);
        }
        return floor_div(cpu + memory, 2.0);
    }
    double per[2];
    int weights = 0;
    for (int r = 0; r < 2; r++) {
        int counted = capacity[r] > 0;
        double safe = counted ? capacity[r] : 1.0;
        per[r] = counted ? fmax(floor_div((safe - wanted[r]) * MAX_NODE_SCORE, safe), 0.0) : 0.0;
        weights += counted;
    }
    return weights > 0 ? floor_div(per[0] + per[1], (double)weights) : 0.0;
}

/* BalancedAllocation.scores for one node. */
static double balanced_allocation(const Kube *k, int32_t klass, int32_t node, const double *bound)
{
    const double *capacity = k->s.capacity_milli + 2 * node;
    double wanted[2], std;
    wanted_milli(bound, k->s.request_balanced + 2 * klass, wanted);
    if (k->s.capacity_positive) {
        std = fabs((wanted[0] / capacity[0] - wanted[1] / capacity[1]) / 2);
    } else {
        double cpu = fmin(wanted[0] / (capacity[0] > 0 ? capacity[0] : 1.0), 1.0);
        double memory = fmin(wanted[1] / (capacity[1] > 0 ? capacity[1] : 1.0), 1.0);
        std = capacity[0] > 0 && capacity[1] > 0 ? fabs((cpu - memory) / 2) : 0.0;
    }
    return floor((1 - std) * MAX_NODE_SCORE);
}

/* Below this, milli-CPU and byte amounts, added and times 100, stay integers below 2**52, where
 * the quotient of two of them rounds without crossing an integer: floor(a / b) is then exactly
 * Python's a // b, with neither fmod nor checks. */
#define EXACT_BOUND 0x1p44

static int exact_amount(double x)
{
    return x >= 0.0 && x < EXACT_BOUND && (double)(int64_t)x == x;
}

/* Whether the fast allocation total serves each class on every node (the bound rows are
 * checked as they come): positive integral capacities, integral requests, below EXACT_BOUND. */
static void find_exact_classes(Kube *k)
{
    int capacities = k->s.capacity_positive;
    for (int32_t i = 0; capacities && i < 2 * k->node_count; i++)
        capacities = exact_amount(k->s.capacity_milli[i]) && k->s.capacity_milli[i] >= 1.0;
    for (int32_t c = 0; c < k->class_count; c++) {
        const double *least = k->s.request_least + 2 * c;
        const double *balanced = k->s.request_balanced + 2 * c;
        k->exact[c] = (uint8_t)(capacities && exact_amount(least[0]) && exact_amount(least[1]) &&
                                exact_amount(balanced[0]) && exact_amount(balanced[1]));
    }
}

/* LeastAllocated + BalancedAllocation for an exact class, the same operations as the general
 * functions above with floor_div(a, b) as floor(a / b). */
static inline double exact_total(const Kube *k, int32_t klass, const double *capacity, double milli,
                          double bytes)
{
    const double *least = k->s.request_least + 2 * klass;
    const double *balanced = k->s.request_balanced + 2 * klass;
    double cpu = floor((capacity[0] - (milli + least[0])) * MAX_NODE_SCORE / capacity[0]);
    double memory = floor((capacity[1] - (bytes + least[1])) * MAX_NODE_SCORE / capacity[1]);
    if (k->s.clip[klass]) {
        cpu = cpu < 0.0 ? 0.0 : cpu;
        memory = memory < 0.0 ? 0.0 : memory;
    }
    double std = fabs(((milli + balanced[0]) / capacity[0] -
                       (bytes + balanced[1]) / capacity[1]) / 2);
    return floor((cpu + memory) / 2.0) + floor((1 - std) * MAX_NODE_SCORE);
}

/* The allocation scores' raw total on one node (Scoring's live totals). */
static inline double allocation_total(const Kube *k, int32_t klass, int32_t node, const NodeView *nodes)
{
    const double *bound = nodes->allocated + 3 * node;
    if (k->exact[klass]) {
        double milli = rint(bound[0] * 1000.0), bytes = rint(bound[1] * 1.0);
        if (milli >= 0.0 && milli < EXACT_BOUND && bytes >= 0.0 && bytes < EXACT_BOUND)
            return exact_total(k, klass, k->s.capacity_milli + 2 * node, milli, bytes);
    }
    return least_allocated(k, klass, node, bound) + balanced_allocation(k, klass, node, bound);
}

/* The class's totals cache, made on first use; NULL when the budget is spent or memory is short
 * (the totals are then computed afresh: the same numbers). */
static Scored *cache_of(Kube *k, int32_t klass)
{
    if (k->caches[klass] == NULL && k->cache_budget >= k->node_count) {
        k->caches[klass] = zeroed((size_t)k->node_count, sizeof(Scored));
        if (k->caches[klass] != NULL)
            k->cache_budget -= k->node_count;
    }
    return k->caches[klass];
}

/* cached_total's slow path, kept out of line: the total afresh, kept when there is a cache. */
static __attribute__((noinline)) double stale_total(const Kube *k, Scored *cache, int32_t klass,
                                                    int32_t node, const NodeView *nodes)
{
    double total = allocation_total(k, klass, node, nodes);
    if (cache != NULL)
        cache[node] = (Scored){total, k->row_version[node]};
    return total;
}

/* allocation_total through the class's cache: recomputed only where the row changed. Inline,
 * as it runs for every candidate, and usually finds the total current. */
static inline double cached_total(const Kube *k, Scored *cache, int32_t klass, int32_t node,
                                  const NodeView *nodes)
{
    if (cache != NULL && cache[node].version == k->row_version[node])
        return cache[node].total;
    return stale_total(k, cache, klass, node, nodes);
}

/* default_normalize over the candidates, times the plugin's weight, into `part`. */
static void normalise(const Kube *k, int32_t plugin, int32_t constraint, int32_t count,
                      double *part)
{
    const double *raw = k->s.static_raw +
                        ((size_t)plugin * k->constraint_count + constraint) * k->node_count;
    int reverse = k->s.static_reverse[plugin];
    double weight = k->s.static_weight[plugin], largest = 0.0;
    for (int32_t i = 0; i < count; i++)
        if (raw[k->candidates[i]] > largest)
            largest = raw[k->candidates[i]];
    for (int32_t i = 0; i < count; i++) {
        double scaled;
        if (largest == 0)
            scaled = reverse ? MAX_NODE_SCORE : 0.0;
        else {
            scaled = floor_div(MAX_NODE_SCORE * raw[k->candidates[i]], largest);
            if (reverse)
                scaled = MAX_NODE_SCORE - scaled;
        }
        part[i] = weight != 1 ? weight * scaled : scaled;
    }
}

/* Scoring.totals over the candidates: allocation totals, the constant static plugins' sum,
 * and the other static plugins normalised over the candidates. */
static void weighted_totals(Kube *k, Scored *cache, int32_t klass, int32_t count,
                            const NodeView *nodes)
{
    int32_t constraint = k->s.constraint[klass];
    double constant = 0.0;
    int normalised = 0;
    for (int32_t p = 0; p < k->plugin_count; p++) {
        double value = k->s.static_constant[(size_t)p * k->constraint_count + constraint];
        if (!isnan(value)) {
            constant += k->s.static_weight[p] * value;
            continue;
        }
        if (!normalised) {
            normalise(k, p, constraint, count, k->normalised);
            normalised = 1;
            continue;
        }
        normalise(k, p, constraint, count, k->totals);  /* totals: scratch until below */
        for (int32_t i = 0; i < count; i++)
            k->normalised[i] = k->normalised[i] + k->totals[i];
    }
    for (int32_t i = 0; i < count; i++) {
        double total = cached_total(k, cache, klass, k->candidates[i], nodes) + constant;
        k->totals[i] = normalised ? total + k->normalised[i] : total;
    }
}

/* ---- node choice ------------------------------------------------------------------------- */

/* Up to `wanted` feasible nodes of [from, to) into `out`, in index order; how many. Without
 * a branch on the mask, which is often mixed: every node is written, only feasible ones
 * kept (`out` has room for every node). */
static int32_t collect(const uint8_t *feasible, int32_t from, int32_t to, int32_t wanted,
                       int32_t *out)
{
    int32_t found = 0;
    for (int32_t i = from; i < to && found < wanted; i++) {
        out[found] = i;
        found += feasible[i] != 0;
    }
    return found;
}

/* first_feasible_indices: the first `limit` feasible nodes from `start` round the list, in
 * index order, into candidates; their number, and the nodes examined in *examined. Reads only
 * the nodes it examines, unless it takes every feasible node. */
static int32_t first_feasible(Kube *k, const uint8_t *feasible, int32_t limit, int32_t count,
                              int32_t *examined)
{
    int32_t total = k->node_count, start = k->start;
    if (limit >= total || count <= limit) {
        *examined = total;
        return collect(feasible, 0, total, total, k->candidates);
    }
    int32_t high = collect(feasible, start, total, limit, k->candidates);
    if (high == limit) {  /* the search ends before wrapping round */
        *examined = k->candidates[limit - 1] - start + 1;
        return limit;
    }
    /* It wraps round: the nodes found below `start` come first (winners is free scratch). */
    int32_t wrapped = collect(feasible, 0, start, limit - high, k->winners);
    memmove(k->candidates + wrapped, k->candidates, (size_t)high * sizeof(int32_t));
    memcpy(k->candidates, k->winners, (size_t)wrapped * sizeof(int32_t));
    *examined = k->winners[wrapped - 1] + total - start + 1;
    return limit;
}

/* selectHost: a uniform draw among the winners, only when there is more than one. */
static int32_t draw_winner(Kube *k, int32_t count)
{
    return k->winners[count == 1 ? 0 : k->draw(k->draw_context, count)];
}

/* The best of totals[0..count) and the candidates that have it, into winners. */
static int32_t top_candidates(Kube *k, int32_t count, double *best)
{
    int32_t winners = 0;
    double top = -INFINITY;
    for (int32_t i = 0; i < count; i++) {
        double total = k->totals[i];
        if (total > top) {
            top = total;
            winners = 0;
        }
        k->winners[winners] = k->candidates[i];  /* kept only on a tie: no branch to mispredict */
        winners += total == top;
    }
    *best = top;
    return winners;
}

/* FrameworkChoice.choose for a pod of `klass`, over the `feasible` nodes (at least one). */
static int32_t choose(Kube *k, int32_t klass, const uint8_t *feasible, int32_t feasible_count,
                      const NodeView *nodes, double *score)
{
    int32_t total = k->node_count, limit = k->s.limit, count, examined, winners;
    double constant = k->s.separable_constant[k->s.constraint[klass]], best;
    int separable = !isnan(constant);
    Scored *cache = cache_of(k, klass);
    if (separable && limit >= total) {  /* TopNodes over every feasible node */
        count = 0;
        for (int32_t i = 0; i < total; i++)
            if (feasible[i]) {
                k->candidates[count] = i;
                k->totals[count++] = cached_total(k, cache, klass, i, nodes);
            }
        winners = top_candidates(k, count, &best);
        *score = best + constant;
        return draw_winner(k, winners);
    }
    count = first_feasible(k, feasible, limit, feasible_count, &examined);
    k->start = (k->start + examined) % total;
    if (separable)
        for (int32_t i = 0; i < count; i++)
            k->totals[i] = cached_total(k, cache, klass, k->candidates[i], nodes);
    else
        weighted_totals(k, cache, klass, count, nodes);
    winners = top_candidates(k, count, &best);
    *score = separable ? best + constant : best;
    return draw_winner(k, winners);
}

/* ---- decide ------------------------------------------------------------------------------ */

/* GroupedQueue.take of the group's head, and PendingSync.taken. */
static int64_t take_head(Kube *k, Group *g)
{
    Entry head = heap_pop(g);
    if (g->count == 0)
        g->exists = 0;  /* the group goes; pods joining later were created after any stamp */
    Slot *slot = slot_of(k, head.uid);
    if (slot != NULL && slot->state != ABSENT)
        forget(k, slot);
    return head.uid;
}

int kube_decide(Kube *k, const NodeView *nodes, double now_s, int64_t *uid, int32_t *node,
                double *score)
{
    double most[3];
    if (!k->failed && observe(k, nodes)) {
        most_free(k, most);
        queue_unblock(k, most, now_s);
    }
    if (k->failed || follow(k) < 0) {
        k->failed = 1;
        PyErr_SetString(PyExc_MemoryError, "kube: out of memory, or a pod of another run");
        return -1;
    }
    /* ListScheduler tries its first group without could_fit and the others with it; since no
     * node can be feasible for a group that cannot fit in the most free amounts, testing every
     * group gives the same decisions and skips their masks. */
    most_free(k, most);
    int32_t index;
    while ((index = queue_best(k)) != NONE) {
        Group *g = &k->groups[index];
        if (could_fit(k, g, most)) {
            int32_t count;
            const uint8_t *feasible = feasible_nodes(k, g->klass, nodes, &count);
            if (count > 0) {
                *node = choose(k, g->klass, feasible, count, nodes, score);
                *uid = take_head(k, g);
                return 1;
            }
        }
        g->blocked = 1;
        g->blocked_at = now_s;
    }
    return 0;
}
