/* view.pending as the core notifies it, and what the queue learns of it at each decide: the
 * port of schedulers/pending_sync.py (PendingSync) with ListScheduler._follow. Instead of
 * scanning view.pending, kube keeps the pods by uid and the list of those that joined. */
#include "kube_internal.h"

#include <stdlib.h>
#include <string.h>

static Slot *slot_of(Kube *k, int64_t uid)
{
    return uid >= 0 && uid < k->slot_count ? &k->slots[uid] : NULL;
}

/* Room for a slot at `uid`, the new ones ABSENT; -1 out of memory. */
static int reserve_slot(Kube *k, int64_t uid)
{
    if (uid < k->slot_count)
        return 0;
    int64_t capacity = k->slot_count;
    if (reserve((void **)&k->slots, &capacity, uid + 1, sizeof(Slot)) < 0)
        return -1;
    memset(k->slots + k->slot_count, 0, (size_t)(capacity - k->slot_count) * sizeof(Slot));
    k->slot_count = capacity;
    return 0;
}

void kube_pending_added(Kube *k, const PendingPod *pod)
{
    if (pod->uid < 0 || pod->task < 0 || pod->task >= k->task_count ||
        reserve_slot(k, pod->uid) < 0) {
        k->failed = 1;  /* not a pod of this run, or out of memory: reported by the next decide */
        return;
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

/* PendingSync.taken: the pod kube_decide placed leaves the list. */
void kube_pending_taken(Kube *k, int64_t uid)
{
    Slot *slot = slot_of(k, uid);
    if (slot != NULL && slot->state != ABSENT)
        forget(k, slot);
}

/* The rebuild: the queue holds exactly the pods of view.pending. */
static int requeue_all(Kube *k)
{
    kube_queue_clear(k);
    for (int64_t i = 0; i < k->pending_count; i++) {
        Slot *slot = &k->slots[k->pending[i]];
        slot->state = KNOWN;
        if (kube_queue_add(k, &slot->pod) < 0)
            return -1;
    }
    k->rebuild = 0;
    return 0;
}

/* The pods that joined since the previous decide and are still pending join the queue. */
static int queue_joined(Kube *k)
{
    for (int64_t i = 0; i < k->joined_count; i++) {
        Slot *slot = &k->slots[k->joined[i]];
        if (slot->state != JOINED)
            continue;
        slot->state = KNOWN;
        if (kube_queue_add(k, &slot->pod) < 0)
            return -1;
    }
    return 0;
}

/* PendingSync.changes + ListScheduler._follow; -1 out of memory. */
int kube_pending_follow(Kube *k)
{
    int result = k->rebuild ? requeue_all(k) : queue_joined(k);
    k->joined_count = 0;
    return result;
}

void kube_pending_free(Kube *k)
{
    free(k->slots);
    free(k->pending);
    free(k->joined);
}
