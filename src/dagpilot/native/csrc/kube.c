/* kube-default's decisions in C: the port of schedulers/list_scheduler.py (ListScheduler, with
 * the parts kube_default.py gives it), tying the parts together (kube_internal.h lists them).
 * Kube keeps the results of the Python scheduler's incremental caches (NodeLog, LiveMask, live
 * totals) current the same way, on the nodes the core's change log (NodeView.changed) names,
 * so that a decision costs about the nodes it scores (nodes_to_find), not the cluster's size. */
#include "kube_internal.h"

#include <stdlib.h>

/* ---- life -------------------------------------------------------------------------------- */

Kube *kube_new(PyObject *statics, const TaskSpec *tasks, int32_t task_count, int32_t node_count,
               DrawFn draw, void *draw_context)
{
    if (!PyDict_Check(statics) || task_count < 0 || node_count < 0 || draw == NULL) {
        PyErr_SetString(PyExc_ValueError, "kube_new: statics must be a dict, counts >= 0");
        return NULL;
    }
    Kube *k = zeroed(1, sizeof(Kube));
    if (k == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    k->tasks = tasks;
    k->task_count = task_count;
    k->node_count = node_count;
    k->draw = draw;
    k->draw_context = draw_context;
    if (kube_read_statics(k, statics) < 0) {
        kube_free(k);
        return NULL;
    }
    if (kube_node_log_init(k) < 0 || kube_feasibility_init(k) < 0 || kube_scores_init(k) < 0 ||
        kube_choice_init(k) < 0 || kube_queue_init(k) < 0) {
        kube_free(k);
        PyErr_NoMemory();
        return NULL;
    }
    return k;
}

void kube_free(Kube *k)
{
    if (k == NULL)
        return;
    kube_statics_free(&k->s);
    kube_pending_free(k);
    kube_queue_free(k);
    kube_node_log_free(k);
    kube_feasibility_free(k);
    kube_scores_free(k);
    kube_choice_free(k);
    free(k);
}

/* ---- decide ------------------------------------------------------------------------------ */

/* ListScheduler's turn once the queue is current: the first open group, in PrioritySort order,
 * with a feasible node gives its head pod that node; each group tried in vain is blocked. */
static int place_next(Kube *k, const NodeView *nodes, double now_s, int64_t *uid, int32_t *node,
                      double *score)
{
    /* ListScheduler tries its first group without could_fit and the others with it; since no
     * node can be feasible for a group that cannot fit in the most free amounts, testing every
     * group gives the same decisions and skips their masks. */
    double most[3];
    kube_most_free(k, most);
    int32_t index;
    while ((index = kube_queue_best(k)) != NONE) {
        Group *g = &k->groups[index];
        if (kube_could_fit(k, g, most)) {
            int32_t count;
            const uint8_t *feasible = kube_feasible_nodes(k, g->klass, nodes, &count);
            if (count > 0) {
                *node = kube_choose(k, g->klass, feasible, count, nodes, score);
                if (*node == NONE) {  /* a mask that held none of the nodes it counted */
                    PyErr_SetString(PyExc_RuntimeError, "kube: no candidate node in the mask");
                    return -1;
                }
                *uid = kube_queue_take(g);
                kube_pending_taken(k, *uid);
                return 1;
            }
        }
        g->blocked = 1;
        g->blocked_at = now_s;
    }
    return 0;
}

int kube_decide(Kube *k, const NodeView *nodes, double now_s, int64_t *uid, int32_t *node,
                double *score)
{
    if (!k->failed && kube_observe(k, nodes)) {  /* resources freed: blocked groups may fit */
        double most[3];
        kube_most_free(k, most);
        kube_queue_unblock(k, most, now_s);
    }
    if (k->failed || kube_pending_follow(k) < 0) {
        k->failed = 1;
        PyErr_SetString(PyExc_MemoryError, "kube: out of memory, or a pod of another run");
        return -1;
    }
    return place_next(k, nodes, now_s, uid, node, score);
}
