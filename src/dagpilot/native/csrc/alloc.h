/* Allocation shared by the core and kube-default's parts. */
#ifndef DAGPILOT_ALLOC_H
#define DAGPILOT_ALLOC_H

#include <stdint.h>
#include <stdlib.h>

/* calloc of at least one item, so that an empty table is not mistaken for a failure */
static inline void *zeroed(size_t count, size_t size) {
    return calloc(count > 0 ? count : 1, size);
}

/* Room for `wanted` items of `size` bytes in *items, the capacity doubled as needed; 0, or -1
 * when out of memory (*items is then unchanged). */
static inline int reserve(void **items, int64_t *capacity, int64_t wanted, size_t size) {
    if (wanted <= *capacity) return 0;
    int64_t grown = *capacity > 0 ? *capacity : 16;
    while (grown < wanted) grown *= 2;
    void *moved = realloc(*items, (size_t)grown * size);
    if (moved == NULL) return -1;
    *items = moved;
    *capacity = grown;
    return 0;
}

#endif
