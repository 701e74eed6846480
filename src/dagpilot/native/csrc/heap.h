/* The event kernel's heap: events ordered by (time, priority, sequence), as sim/kernel.py.
 * The sequence number is unique, so the order is total and ties fall to scheduling order. */
#ifndef DAGPILOT_HEAP_H
#define DAGPILOT_HEAP_H

#include <stdint.h>

typedef struct {
    double time_s;
    int32_t priority;
    int32_t kind;        /* what to do: an EventKind of sim.h */
    int64_t seq;
    int64_t arg;         /* the handler's argument: a pod uid, a job, a node, a pool */
    int64_t aux;         /* a version, for lazy invalidation */
} Event;

typedef struct {
    Event *items;
    int64_t size, capacity, seq;
} Heap;

int heap_init(Heap *heap, int64_t capacity);
void heap_free(Heap *heap);
int heap_push(Heap *heap, double time_s, int32_t priority, int32_t kind, int64_t arg, int64_t aux);
Event heap_pop(Heap *heap);   /* the least event; the heap must not be empty */

#endif
