/* The node for a pod: the port of schedulers/framework_choice.py (FrameworkChoice: partial
 * node search from schedulers/node_sampling.py, weighted totals from decide/scoring.py, the best
 * total over every feasible node as schedulers/top_nodes.py gives it, and selectHost's uniform
 * draw among the best). The allocation totals are cached per class and node, and computed
 * again only on the rows whose allocation changed. */
#include "kube_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_ENTRIES (1 << 22) /* node entries over all classes' caches (64 MiB at most) */
/* A total that is NaN is no score (schedulers/top_nodes.py UNSCORED): it ranks below every
 * number, so such a candidate wins only when no candidate scores, and then they all tie. */
#define UNSCORED (-DBL_MAX)

/* ---- allocation totals, cached ------------------------------------------------------------ */

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
static NOINLINE double stale_total(const Kube *k, Scored *cache, int32_t klass, int32_t node,
                                   const NodeView *nodes)
{
    double total = kube_allocation_total(k, klass, node, nodes);
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
            kube_normalise(k, p, constraint, k->candidates, count, k->normalised);
            normalised = 1;
            continue;
        }
        kube_normalise(k, p, constraint, k->candidates, count, k->totals);  /* scratch here */
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
    /* (none wrapped only if `count` overstated the mask: then every node was examined) */
    *examined = wrapped > 0 ? k->winners[wrapped - 1] + total - start + 1 : total;
    return high + wrapped;
}

int32_t kube_top(const double *totals, int32_t count, int32_t *winners, double *best)
{
    int32_t found = 0;
    double top = -INFINITY;
    for (int32_t i = 0; i < count; i++) {
        double total = isnan(totals[i]) ? UNSCORED : totals[i];
        if (total > top) {
            top = total;
            found = 0;
        }
        winners[found] = i;  /* kept only on a tie: no branch to mispredict */
        found += total == top;
    }
    *best = found > 0 && top == UNSCORED ? NAN : top;
    return found;
}

int32_t kube_pick(int32_t count, DrawFn draw, void *draw_context)
{
    if (count < 1)
        return NONE;
    return count == 1 ? 0 : (int32_t)draw(draw_context, count);
}

/* selectHost over the best candidates: a uniform draw among those with the top total (every
 * candidate when none scores); the node, its total in *best (NaN when none scores), or NONE
 * when there is no candidate. */
static int32_t draw_winner(Kube *k, int32_t count, double *best)
{
    int32_t pick = kube_pick(kube_top(k->totals, count, k->winners, best), k->draw,
                             k->draw_context);
    return pick == NONE ? NONE : k->candidates[k->winners[pick]];
}

/* TopNodes, for a separable class when the search takes every node: the best allocation
 * total over every feasible node, in one pass (the search's start does not move). */
static int32_t choose_among_all(Kube *k, int32_t klass, Scored *cache, const uint8_t *feasible,
                                const NodeView *nodes, double constant, double *score)
{
    int32_t count = 0;
    double best;
    for (int32_t i = 0; i < k->node_count; i++)
        if (feasible[i]) {
            k->candidates[count] = i;
            k->totals[count++] = cached_total(k, cache, klass, i, nodes);
        }
    int32_t node = draw_winner(k, count, &best);
    *score = best + constant;
    return node;
}

/* The partial search's candidates, then their totals: allocation totals plus `constant` for
 * a separable class, weighted totals otherwise (constant is NaN). */
static int32_t choose_among_found(Kube *k, int32_t klass, Scored *cache, const uint8_t *feasible,
                                  int32_t feasible_count, const NodeView *nodes, double constant,
                                  double *score)
{
    int separable = !isnan(constant);
    int32_t examined;
    int32_t count = first_feasible(k, feasible, k->s.limit, feasible_count, &examined);
    double best;
    k->start = (k->start + examined) % k->node_count;
    if (separable)
        for (int32_t i = 0; i < count; i++)
            k->totals[i] = cached_total(k, cache, klass, k->candidates[i], nodes);
    else
        weighted_totals(k, cache, klass, count, nodes);
    int32_t node = draw_winner(k, count, &best);
    *score = separable ? best + constant : best;
    return node;
}

/* FrameworkChoice.choose for a pod of `klass`, over the `feasible` nodes (at least one): the
 * node (NONE if the mask held none after all), and its score in *score (NaN when no candidate
 * scores). */
int32_t kube_choose(Kube *k, int32_t klass, const uint8_t *feasible, int32_t feasible_count,
                    const NodeView *nodes, double *score)
{
    double constant = k->s.separable_constant[k->s.constraint[klass]];
    Scored *cache = cache_of(k, klass);
    if (!isnan(constant) && k->s.limit >= k->node_count)
        return choose_among_all(k, klass, cache, feasible, nodes, constant, score);
    return choose_among_found(k, klass, cache, feasible, feasible_count, nodes, constant, score);
}

/* The first search starts at node 0; the caches are made on use; -1 out of memory. */
int kube_choice_init(Kube *k)
{
    size_t n = (size_t)k->node_count;
    k->start = 0;
    k->caches = zeroed((size_t)k->class_count, sizeof(Scored *));
    k->cache_budget = CACHE_ENTRIES;
    k->candidates = zeroed(n, sizeof(int32_t));
    k->winners = zeroed(n, sizeof(int32_t));
    k->totals = zeroed(n, sizeof(double));
    k->normalised = zeroed(n, sizeof(double));
    return k->caches && k->candidates && k->winners && k->totals && k->normalised ? 0 : -1;
}

void kube_choice_free(Kube *k)
{
    for (int32_t c = 0; k->caches != NULL && c < k->class_count; c++)
        free(k->caches[c]);
    free(k->caches);
    free(k->candidates);
    free(k->winners);
    free(k->totals);
    free(k->normalised);
}
