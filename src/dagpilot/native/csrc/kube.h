/* kube-default's decisions in C, bit for bit those of the Python scheduler
 * (schedulers/kube_default.py: ListScheduler + PrioritySort + FrameworkChoice), so that a native
 * run's RunRecord equals the Python simulator's.
 *
 * Of TaskSpec it reads only `klass` (kube_statics.py); everything else it needs (requests as the
 * filters and scores see them, priorities, static masks and scores) comes in the statics dict.
 *
 * What the core must do:
 *   - kube_pending_added for every pod that joins view.pending (add_pending), in that order;
 *   - kube_pending_removed for every pod that leaves view.pending other than by binding the pod
 *     kube_decide just returned (a failed job's cancelled pods);
 *   - bind each placement kube_decide returns before the next kube_decide call, and call
 *     kube_decide exactly where the Python run loop calls Scheduler.decide (the NodeLog test
 *     of "resources freed" compares the node rows with those of the previous call);
 *   - log in view.changed every node whose allocated row or readiness changes (model.h): kube
 *     reads only the rows logged since its previous call. */
#ifndef DAGPILOT_KUBE_H
#define DAGPILOT_KUBE_H

#include <Python.h>
#include <stdint.h>

#include "model.h"

typedef struct Kube Kube;

/* statics: the dict built by kube_statics.py (read with the buffer protocol and copied).
 * tasks: the run's TaskSpecs, kept alive by the caller for the whole run. Returns NULL with a
 * Python exception set on bad input. */
Kube *kube_new(PyObject *statics, const TaskSpec *tasks, int32_t task_count, int32_t node_count,
               DrawFn draw, void *draw_context);
void kube_free(Kube *k);

/* A pod joined the tail of view.pending. */
void kube_pending_added(Kube *k, const PendingPod *pod);

/* A pod left view.pending NOT by a kube placement (cancelled when its job failed). */
void kube_pending_removed(Kube *k, int64_t uid);

/* Scheduler.decide: 1 with the pod uid, node index and score of the placement, or 0 (None);
 * -1 with a Python exception set when an earlier notification failed (out of memory, or a pod
 * whose task is not of this run), or a feasibility mask held no node after all. */
int kube_decide(Kube *k, const NodeView *nodes, double now_s, int64_t *uid, int32_t *node,
                double *score);

/* The best of totals[0..count) and the positions that have it (into winners, room for count),
 * in order; how many. A NaN total is no score: it ranks below every number, so when every total
 * is NaN every position ties (and *best is NaN). schedulers/top_nodes.py top_of, in C. */
int32_t kube_top(const double *totals, int32_t count, int32_t *winners, double *best);

/* selectHost's draw of one of `count` winners (none when there is one), or NONE for none. */
int32_t kube_pick(int32_t count, DrawFn draw, void *draw_context);

#endif
