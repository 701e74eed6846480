/* The score plugins kube-default runs, on one node or over the candidates: the port of
 * decide/scores/ (least_allocated.py, balanced_allocation.py, normalize.py), with numpy's and
 * Python's float floor division. An exact class (integral amounts, below EXACT_BOUND) takes a
 * faster path to the same numbers. */
#include "kube_internal.h"

#include <math.h>
#include <stdlib.h>

#define MAX_NODE_SCORE 100.0

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
static double balanced_allocation(const Kube *k, int32_t klass, int32_t node,
                                  const double *bound)
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
static inline double exact_total(const Kube *k, int32_t klass, const double *capacity,
                                 double milli, double bytes)
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
double kube_allocation_total(const Kube *k, int32_t klass, int32_t node, const NodeView *nodes)
{
    const double *bound = nodes->allocated + 3 * node;
    if (k->exact[klass]) {
        double milli = rint(bound[0] * 1000.0), bytes = rint(bound[1] * 1.0);
        if (milli >= 0.0 && milli < EXACT_BOUND && bytes >= 0.0 && bytes < EXACT_BOUND)
            return exact_total(k, klass, k->s.capacity_milli + 2 * node, milli, bytes);
    }
    return least_allocated(k, klass, node, bound) + balanced_allocation(k, klass, node, bound);
}

/* A static plugin's default_normalize over the given nodes, times its weight, into `part`. */
void kube_normalise(const Kube *k, int32_t plugin, int32_t constraint, const int32_t *nodes,
                    int32_t count, double *part)
{
    const double *raw = k->s.static_raw +
                        ((size_t)plugin * k->constraint_count + constraint) * k->node_count;
    int reverse = k->s.static_reverse[plugin];
    double weight = k->s.static_weight[plugin], largest = 0.0;
    for (int32_t i = 0; i < count; i++)
        if (raw[nodes[i]] > largest)
            largest = raw[nodes[i]];
    for (int32_t i = 0; i < count; i++) {
        double scaled;
        if (largest == 0)
            scaled = reverse ? MAX_NODE_SCORE : 0.0;
        else {
            scaled = floor_div(MAX_NODE_SCORE * raw[nodes[i]], largest);
            if (reverse)
                scaled = MAX_NODE_SCORE - scaled;
        }
        part[i] = weight != 1 ? weight * scaled : scaled;
    }
}

/* Which classes exact_total serves; -1 out of memory. */
int kube_scores_init(Kube *k)
{
    k->exact = zeroed((size_t)k->class_count, 1);
    if (k->exact == NULL)
        return -1;
    find_exact_classes(k);
    return 0;
}

void kube_scores_free(Kube *k)
{
    free(k->exact);
}
