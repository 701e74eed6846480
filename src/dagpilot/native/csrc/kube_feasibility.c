/* Which nodes a pod class may go to: the port of decide/feasibility.py (the filters, and
 * Feasibility.live's masks kept per class). A kept mask is brought up to date on the rows the
 * change log names, so a decide filters about the nodes changed, not the whole cluster. */
#include "kube_internal.h"

#include <stdlib.h>

#define MASK_BYTES (1 << 26)    /* over all classes' masks */

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

/* The live mask filtered again on the given rows, its count kept. */
static void refilter_rows(const Kube *k, int32_t klass, const NodeView *nodes, LiveMask *live,
                          const int32_t *rows, int64_t count)
{
    for (int64_t i = 0; i < count; i++) {
        int32_t row = rows[i];
        uint8_t fits = node_fits(k, klass, nodes, row);
        live->count += fits - live->mask[row];
        live->mask[row] = fits;
    }
}

/* Feasibility.live: the class's feasible nodes as a mask, and their number in *count; the
 * kept mask is brought up to date on the rows changed since its last use. */
const uint8_t *kube_feasible_nodes(Kube *k, int32_t klass, const NodeView *nodes,
                                   int32_t *count)
{
    LiveMask *live = live_mask_of(k, klass);
    if (live == NULL) {
        *count = mask_all(k, klass, nodes, k->feasible);
        return k->feasible;
    }
    int64_t changes;
    const int32_t *rows = kube_changed_since(k, nodes, live->position, &changes);
    if (rows == NULL)
        live->count = mask_all(k, klass, nodes, live->mask);
    else
        refilter_rows(k, klass, nodes, live, rows, changes);
    live->position = kube_log_end(nodes);
    *count = live->count;
    return live->mask;
}

/* No class's mask yet (they are made on use), and the scratch mask; -1 out of memory. */
int kube_feasibility_init(Kube *k)
{
    k->masks = zeroed((size_t)k->class_count, sizeof(LiveMask));
    k->mask_budget = MASK_BYTES;
    k->feasible = zeroed((size_t)k->node_count, 1);
    return k->masks != NULL && k->feasible != NULL ? 0 : -1;
}

void kube_feasibility_free(Kube *k)
{
    for (int32_t c = 0; k->masks != NULL && c < k->class_count; c++)
        free(k->masks[c].mask);
    free(k->masks);
    free(k->feasible);
}
