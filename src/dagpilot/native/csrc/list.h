/* Pods in insertion order, as the Python simulator's dicts keyed by uid keep them (node.bound,
 * node.running, group.members, the pending pods): O(1) append and removal, and iteration in the
 * order Python iterates, which decides the order events are scheduled in. A pod is in each kind
 * of list at most once, through the PodLinks field of that kind. */
#ifndef DAGPILOT_LIST_H
#define DAGPILOT_LIST_H

#include <stddef.h>
#include <stdint.h>

typedef struct { int64_t head, tail; } PodList;
typedef struct { int64_t prev, next; } PodLinks;

#define LIST_END (-1)
#define EMPTY_LIST ((PodList){LIST_END, LIST_END})

/* The links at byte `offset` of record `index` of an array of `stride`-byte records. */
static inline PodLinks *links_at(void *records, size_t stride, size_t offset, int64_t index) {
    return (PodLinks *)((char *)records + (size_t)index * stride + offset);
}

static inline void list_append(void *records, size_t stride, size_t offset, PodList *list,
                               int64_t index) {
    PodLinks *links = links_at(records, stride, offset, index);
    links->prev = list->tail;
    links->next = LIST_END;
    if (list->tail != LIST_END) links_at(records, stride, offset, list->tail)->next = index;
    else list->head = index;
    list->tail = index;
}

static inline void list_remove(void *records, size_t stride, size_t offset, PodList *list,
                               int64_t index) {
    PodLinks *links = links_at(records, stride, offset, index);
    if (links->prev != LIST_END) links_at(records, stride, offset, links->prev)->next = links->next;
    else list->head = links->next;
    if (links->next != LIST_END) links_at(records, stride, offset, links->next)->prev = links->prev;
    else list->tail = links->prev;
}

/* On the run's pods: APPEND(sim, &node->running, running, uid) and so on. */
#define APPEND(sim, list, field, uid) \
    list_append((sim)->pods, sizeof(Pod), offsetof(Pod, field), (list), (uid))
#define REMOVE(sim, list, field, uid) \
    list_remove((sim)->pods, sizeof(Pod), offsetof(Pod, field), (list), (uid))

#endif
