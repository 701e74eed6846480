/* The pending pods in PrioritySort order, grouped by (class, priority): the port of
 * schedulers/pod_queue.py (GroupedQueue) and of PrioritySort's head key (schedulers/ordering.py).
 * Pods of one group are interchangeable for the filters, so a group that fits nowhere is blocked
 * as a whole until resources are freed. Groups are few: the best head is found by a scan. */
#include "kube_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- a group's pods: a min-heap on (created_s, uid) ---------------------------------------- */

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

/* ---- GroupedQueue ------------------------------------------------------------------------ */

/* The slot of a (class, priority) key, made on first use; NONE out of memory. */
static int32_t group_slot(Kube *k, int32_t klass, int64_t priority)
{
    for (int32_t g = k->class_groups[klass]; g != NONE; g = k->groups[g].next)
        if (k->groups[g].priority == priority)
            return g;
    int64_t capacity = k->group_capacity;
    if (reserve((void **)&k->groups, &capacity, (int64_t)k->group_count + 1,
                     sizeof(Group)) < 0)
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

/* GroupedQueue.add: a new group takes the blocked time stamped by the last clear(), if any;
 * -1 out of memory. */
int kube_queue_add(Kube *k, const PendingPod *pod)
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
void kube_queue_clear(Kube *k)
{
    for (int32_t i = 0; i < k->group_count; i++) {
        Group *g = &k->groups[i];
        g->has_stamp = g->exists;
        g->stamp = g->blocked_at;
        g->exists = g->blocked = 0;
        g->count = 0;
    }
}

/* ListScheduler's could_fit: the group's requests within the most free amounts. */
int kube_could_fit(const Kube *k, const Group *g, const double most[3])
{
    const double *need = k->s.need + 3 * g->klass;
    return need[0] <= most[0] && need[1] <= most[1] && need[2] <= most[2];
}

/* GroupedQueue.unblock: reopen the blocked groups that might fit; re-stamp the others. */
void kube_queue_unblock(Kube *k, const double most[3], double now_s)
{
    for (int32_t i = 0; i < k->group_count; i++) {
        Group *g = &k->groups[i];
        if (!g->exists || !g->blocked)
            continue;
        if (kube_could_fit(k, g, most))
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
int32_t kube_queue_best(const Kube *k)
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

/* GroupedQueue.take of the group's head: its uid. */
int64_t kube_queue_take(Group *g)
{
    Entry head = heap_pop(g);
    if (g->count == 0)
        g->exists = 0;  /* the group goes; pods joining later were created after any stamp */
    return head.uid;
}

/* No group yet for any class. */
int kube_queue_init(Kube *k)
{
    k->class_groups = zeroed((size_t)k->class_count, sizeof(int32_t));
    if (k->class_groups == NULL)
        return -1;
    for (int32_t c = 0; c < k->class_count; c++)
        k->class_groups[c] = NONE;
    return 0;
}

void kube_queue_free(Kube *k)
{
    for (int32_t g = 0; g < k->group_count; g++)
        free(k->groups[g].heap);
    free(k->groups);
    free(k->class_groups);
}
