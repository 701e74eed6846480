/* A binary min-heap of events; see heap.h. */
#include <stdlib.h>

#include "alloc.h"
#include "heap.h"

static int before(const Event *a, const Event *b) {
    if (a->time_s != b->time_s) return a->time_s < b->time_s;
    if (a->priority != b->priority) return a->priority < b->priority;
    return a->seq < b->seq;
}

int heap_init(Heap *heap, int64_t capacity) {
    heap->items = malloc(sizeof(Event) * (size_t)(capacity > 16 ? capacity : 16));
    heap->size = 0;
    heap->capacity = capacity > 16 ? capacity : 16;
    heap->seq = 0;
    return heap->items != NULL;
}

void heap_free(Heap *heap) {
    free(heap->items);
    heap->items = NULL;
}

int heap_push(Heap *heap, double time_s, int32_t priority, int32_t kind, int64_t arg,
              int64_t aux) {
    if (reserve((void **)&heap->items, &heap->capacity, heap->size + 1, sizeof(Event)) < 0)
        return 0;
    Event event = {time_s, priority, kind, ++heap->seq, arg, aux};
    int64_t at = heap->size++;
    while (at > 0) {  /* sift up */
        int64_t parent = (at - 1) / 2;
        if (!before(&event, &heap->items[parent])) break;
        heap->items[at] = heap->items[parent];
        at = parent;
    }
    heap->items[at] = event;
    return 1;
}

Event heap_pop(Heap *heap) {
    Event top = heap->items[0];
    Event last = heap->items[--heap->size];
    int64_t at = 0, size = heap->size;
    for (;;) {  /* sift the last event down from the root */
        int64_t child = 2 * at + 1;
        if (child >= size) break;
        if (child + 1 < size && before(&heap->items[child + 1], &heap->items[child])) child++;
        if (!before(&heap->items[child], &last)) break;
        heap->items[at] = heap->items[child];
        at = child;
    }
    if (size > 0) heap->items[at] = last;
    return top;
}
