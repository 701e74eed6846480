/* What kube keeps of the node rows between decides: the port of decide/node_log.py (NodeLog:
 * which rows changed, whether resources were freed) on the core's change log
 * (NodeView.changed), so that a decide reads only the rows changed since the previous one; and
 * NodeArrays.most_free (decide/node_arrays.py), kept in a max-tree over those rows. */
#include "kube_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SLACK 1e-9             /* node_log.SLACK: an allocation must fall by more to be freed */

/* ---- the change log ---------------------------------------------------------------------- */

/* The log position after the last change logged. */
int64_t kube_log_end(const NodeView *nodes)
{
    return nodes->changed_first + nodes->changed_count;
}

/* NodeLog.since: the rows changed after log `position` (maybe repeated) and their number, or
 * NULL: the log no longer reaches back that far, or replaying it (rows scattered over memory)
 * would cost about as much as one pass over every row. */
const int32_t *kube_changed_since(const Kube *k, const NodeView *nodes, int64_t position,
                                  int64_t *count)
{
    int64_t offset = position - nodes->changed_first;
    if (position < 0 || offset < 0 || offset > nodes->changed_count)
        return NULL;
    *count = nodes->changed_count - offset;
    return *count > 16 + k->node_count / 4 ? NULL : nodes->changed + offset;
}

/* ---- most free amounts: a max-tree of the free rows --------------------------------------- */

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
void kube_most_free(const Kube *k, double most[3])
{
    for (int r = 0; r < 3; r++)
        most[r] = k->most[3 + r];
}

/* ---- NodeLog ----------------------------------------------------------------------------- */

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

/* The first decide's rows, all taken as they are. */
static void observe_first(Kube *k, const NodeView *nodes)
{
    memcpy(k->last_allocated, nodes->allocated, (size_t)k->node_count * 3 * sizeof(double));
    memcpy(k->last_ready, nodes->ready, (size_t)k->node_count);
    build_most(k, nodes);
    k->observed = 1;
}

/* NodeLog.observe: whether some node's allocation fell or a node became Ready since the
 * previous decide (the first decide counts as freed). Only the rows the change log names are
 * compared, unless the log does not reach back to the previous decide. */
int kube_observe(Kube *k, const NodeView *nodes)
{
    int freed = 0;
    int64_t count;
    const int32_t *rows;
    if (!k->observed) {
        observe_first(k, nodes);
        freed = 1;
    } else if ((rows = kube_changed_since(k, nodes, k->position, &count)) == NULL) {
        for (int32_t i = 0; i < k->node_count; i++)
            freed |= observe_row(k, nodes, i);
    } else {
        for (int64_t i = 0; i < count; i++)
            freed |= observe_row(k, nodes, rows[i]);
    }
    k->position = kube_log_end(nodes);
    return freed;
}

/* The rows to compare with, the row versions (1: the totals caches start at 0, never
 * computed) and the max-tree; -1 out of memory. */
int kube_node_log_init(Kube *k)
{
    size_t n = (size_t)k->node_count;
    k->last_allocated = zeroed(n * 3, sizeof(double));
    k->last_ready = zeroed(n, 1);
    k->row_version = zeroed(n, sizeof(uint64_t));
    if (k->node_count > (1 << 30))  /* the leaves, a power of two, must fit an int32 */
        return -1;
    for (k->leaves = 1; k->leaves < k->node_count; k->leaves *= 2)
        ;
    k->most = zeroed((size_t)k->leaves * 6, sizeof(double));
    if (!k->last_allocated || !k->last_ready || !k->row_version || !k->most)
        return -1;
    for (size_t i = 0; i < n; i++)
        k->row_version[i] = 1;
    return 0;
}

void kube_node_log_free(Kube *k)
{
    free(k->last_allocated);
    free(k->last_ready);
    free(k->row_version);
    free(k->most);
}
