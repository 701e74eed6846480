/* Allocation by requests, pending pods, readiness: the parts of sim/cluster_state.py a run
 * needs, with the same answers (could_place_any keeps the same caches, which decide between
 * an integer and a float comparison at the edges). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kube.h"
#include "sim.h"

static int compare_int64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t task_amount(const TaskSpec *task, int resource) {
    return resource == 0 ? task->cpu_m : resource == 1 ? task->memory : task->gpus;
}

/* The distinct amounts each resource is requested in, ascending, and each task's index. */
static int index_amounts(Sim *sim, int resource) {
    int32_t count = sim->task_count;
    int64_t *values = malloc(sizeof(int64_t) * (size_t)(count > 0 ? count : 1));
    int32_t *of_task = malloc(sizeof(int32_t) * (size_t)(count > 0 ? count : 1));
    sim->amount_values[resource] = values;  /* owned by the Sim from here, freed with it */
    sim->task_amount[resource] = of_task;
    if (values == NULL || of_task == NULL) return 0;
    for (int32_t t = 0; t < count; t++) values[t] = task_amount(&sim->tasks[t], resource);
    qsort(values, (size_t)count, sizeof(int64_t), compare_int64);
    int32_t kinds = 0;
    for (int32_t t = 0; t < count; t++)
        if (kinds == 0 || values[kinds - 1] != values[t]) values[kinds++] = values[t];
    for (int32_t t = 0; t < count; t++) {
        int64_t want = task_amount(&sim->tasks[t], resource);
        int64_t *found = bsearch(&want, values, (size_t)kinds, sizeof(int64_t), compare_int64);
        of_task[t] = (int32_t)(found - values);
    }
    sim->amount_kinds[resource] = kinds;
    sim->amount_counts[resource] = calloc((size_t)(kinds > 0 ? kinds : 1), sizeof(int64_t));
    return sim->amount_counts[resource] != NULL;
}

int cluster_init(Sim *sim) {
    for (int resource = 0; resource < 3; resource++)
        if (!index_amounts(sim, resource)) return 0;
    sim->pending = EMPTY_LIST;
    sim->witness = NONE;
    for (int32_t n = 0; n < sim->node_count; n++) {
        NodeLive *node = &sim->nodes[n];
        node->ready = 1;
        node->gpu_free = sim->specs[n].gpus >= 64 ? ~0ULL : (1ULL << sim->specs[n].gpus) - 1;
        node->membw_multiplier = 1.0;
        node->cache_multiplier = 1.0;
        node->bound = node->running = node->waiting = EMPTY_LIST;
        sim->ready[n] = 1;
        sim->allocatable[3 * n] = sim->specs[n].cpu;
        sim->allocatable[3 * n + 1] = (double)sim->specs[n].memory;
        sim->allocatable[3 * n + 2] = (double)sim->specs[n].gpus;
        sim->cpu_capacity += sim->specs[n].cpu;
        sim->gpu_capacity += sim->specs[n].gpus;
    }
    return 1;
}

void add_pending(Sim *sim, int64_t uid) {
    Pod *pod = &sim->pods[uid];
    const TaskSpec *task = &sim->tasks[pod->task];
    pod->phase = P_PENDING;
    APPEND(sim, &sim->pending, pending, uid);
    sim->pending_count++;
    for (int resource = 0; resource < 3; resource++) {
        sim->amount_counts[resource][sim->task_amount[resource][pod->task]]++;
        if (sim->smallest_valid && task_amount(task, resource) < sim->smallest[resource])
            sim->smallest_valid = 0;
    }
    if (task->tolerates_not_ready) sim->tolerating_not_ready++;
    if (sim->kube != NULL) {
        PendingPod seen = {uid, pod->task, pod->instance, pod->attempt, pod->created_s};
        kube_pending_added(sim->kube, &seen);
    }
}

/* Take the pod off the pending list and out of the counts of pending requests. */
static void unqueue(Sim *sim, int64_t uid) {
    Pod *pod = &sim->pods[uid];
    REMOVE(sim, &sim->pending, pending, uid);
    sim->pending_count--;
    for (int resource = 0; resource < 3; resource++)
        if (--sim->amount_counts[resource][sim->task_amount[resource][pod->task]] == 0)
            sim->smallest_valid = 0;
    if (sim->tasks[pod->task].tolerates_not_ready) sim->tolerating_not_ready--;
}

void remove_pending(Sim *sim, int64_t uid) {
    unqueue(sim, uid);
    if (sim->kube != NULL) kube_pending_removed(sim->kube, uid);
}

/* ClusterState._changed: log the node for the scheduler's caches (NodeView.changed). Past
 * 4 x nodes + 64 entries the log starts afresh: replaying that many rows would cost a reader
 * more than recomputing, and the log keeps a fixed size. */
static void log_change(Sim *sim, int32_t n) {
    NodeView *view = &sim->view;
    if (view->changed_count > 4 * (int64_t)sim->node_count + 64) {
        view->changed_first += view->changed_count;
        view->changed_count = 0;
    }
    sim->changes[view->changed_count++] = n;
}

static void store_allocation(Sim *sim, int32_t n) {
    const NodeLive *node = &sim->nodes[n];
    log_change(sim, n);
    sim->allocated[3 * n] = (double)node->cpu_m / 1000.0;
    sim->allocated[3 * n + 1] = (double)node->memory;
    sim->allocated[3 * n + 2] = (double)node->gpus_used;
}

/* The first `wanted` GPUs of a mask of free ones, as a mask. */
static uint64_t first_free_gpus(uint64_t free, int32_t wanted) {
    uint64_t taken = 0;
    for (int bit = 0; bit < 64 && wanted > 0; bit++) {
        if (free & (1ULL << bit)) {
            taken |= 1ULL << bit;
            wanted--;
        }
    }
    return taken;
}

/* sim.kubelet.preferred_gpus, as a mask: the free GPUs of one root complex when one holds
 * `wanted` (the fewest free that does, ties to the complex of the first free GPU), else the
 * fewest complexes, fullest first. The pod's GPU model is not looked at: the feasibility
 * classes sent it to a node with that model, and the core's nodes hold one model each. */
static uint64_t preferred_gpus(const Sim *sim, int32_t n, uint64_t free, int32_t wanted) {
    const int32_t *complexes = &sim->gpu_root_complex[sim->specs[n].root_complexes];
    uint64_t members[64];
    int32_t complex_of[64], size[64], groups = 0;
    for (int bit = 0; bit < sim->specs[n].gpus && bit < 64; bit++) {
        if (!(free & (1ULL << bit))) continue;
        int32_t g = 0;
        while (g < groups && complex_of[g] != complexes[bit]) g++;
        if (g == groups) complex_of[groups] = complexes[bit], members[groups] = 0,
                         size[groups++] = 0;
        members[g] |= 1ULL << bit;
        size[g]++;
    }
    int32_t best = NONE;
    for (int32_t g = 0; g < groups; g++)
        if (size[g] >= wanted && (best == NONE || size[g] < size[best])) best = g;
    if (best != NONE) return first_free_gpus(members[best], wanted);
    uint64_t taken = 0;
    while (wanted > 0) {
        int32_t fullest = NONE;
        for (int32_t g = 0; g < groups; g++)
            if (size[g] > 0 && (fullest == NONE || size[g] > size[fullest])) fullest = g;
        if (fullest == NONE) break;  /* too few free GPUs: the feasibility checks prevent it */
        int32_t count = size[fullest] < wanted ? size[fullest] : wanted;
        taken |= first_free_gpus(members[fullest], count);
        wanted -= count;
        size[fullest] = 0;
    }
    return taken;
}

void bind_pod(Sim *sim, int64_t uid, int32_t n) {
    Pod *pod = &sim->pods[uid];
    const TaskSpec *task = &sim->tasks[pod->task];
    NodeLive *node = &sim->nodes[n];
    unqueue(sim, uid);
    node->cpu_m += task->cpu_m;
    node->memory += task->memory;
    pod->gpus = task->gpus > 0 ? preferred_gpus(sim, n, node->gpu_free, task->gpus) : 0;
    pod->gpu_count = task->gpus;
    if (task->gpus > 0) {
        node->gpus_used += task->gpus;
        node->gpu_free &= ~pod->gpus;
        sim->gpus_allocated += task->gpus;
    }
    node->pods++;
    store_allocation(sim, n);
    sim->bound_pods++;
    sim->cpu_allocated_m += task->cpu_m;
    pod->node = n;
    pod->cpu_m = task->cpu_m;
}

static void mark_freed(Sim *sim, int32_t n) {
    if (!sim->is_freed[n]) {
        sim->is_freed[n] = 1;
        sim->freed[sim->freed_count++] = n;
    }
}

static void clear_freed(Sim *sim) {
    for (int32_t i = 0; i < sim->freed_count; i++) sim->is_freed[sim->freed[i]] = 0;
    sim->freed_count = 0;
}

void release_pod(Sim *sim, int64_t uid) {
    Pod *pod = &sim->pods[uid];
    int32_t n = pod->node;
    NodeLive *node = &sim->nodes[n];
    node->cpu_m -= pod->cpu_m;
    node->memory -= sim->tasks[pod->task].memory;
    node->gpus_used -= pod->gpu_count;
    node->gpu_free |= pod->gpus;
    node->pods--;
    store_allocation(sim, n);
    sim->bound_pods--;
    sim->cpu_allocated_m -= pod->cpu_m;
    sim->gpus_allocated -= pod->gpu_count;
    sim->witness = n;
    if (sim->no_room_valid) mark_freed(sim, n);
}

void set_ready(Sim *sim, int32_t n, int32_t ready) {
    NodeLive *node = &sim->nodes[n];
    if (node->ready == ready) return;
    node->ready = ready;
    sim->ready[n] = (uint8_t)ready;
    log_change(sim, n);
    sim->nodes_down += ready ? -1 : 1;
    if (ready && sim->no_room_valid) mark_freed(sim, n);
}

static int64_t smallest_of(const Sim *sim, int resource) {
    for (int32_t k = 0; k < sim->amount_kinds[resource]; k++)
        if (sim->amount_counts[resource][k] > 0) return sim->amount_values[resource][k];
    return 0;
}

/* _freed_room: the room scan over the nodes freed since the last scan that found none. */
static int freed_room(Sim *sim, int64_t cpu_m, int64_t memory, int64_t gpus, int anywhere) {
    double need_cpu = (double)cpu_m / 1000.0 - 1e-9;
    int check_ready = sim->nodes_down && !anywhere;
    int32_t kept = 0, lowest = NONE;
    for (int32_t i = 0; i < sim->freed_count; i++) {
        int32_t n = sim->freed[i];
        const NodeSpecC *spec = &sim->specs[n];
        const NodeLive *node = &sim->nodes[n];
        if ((node->ready || !check_ready) && spec->cpu - (double)node->cpu_m / 1000.0 >= need_cpu
                && spec->memory - node->memory >= memory && spec->gpus - node->gpus_used >= gpus) {
            sim->freed[kept++] = n;
            if (lowest == NONE || n < lowest) lowest = n;
        } else {
            sim->is_freed[n] = 0;
        }
    }
    sim->freed_count = kept;
    sim->no_room_valid = 1;
    sim->no_room[0] = cpu_m, sim->no_room[1] = memory, sim->no_room[2] = gpus;
    sim->no_room_anywhere = anywhere;
    if (kept == 0) return 0;
    sim->witness = lowest;
    return 1;
}

static int witness_has_room(const Sim *sim, int64_t cpu_m, int64_t memory, int64_t gpus,
                            int anywhere) {
    if (sim->witness == NONE) return 0;
    const NodeLive *node = &sim->nodes[sim->witness];
    const NodeSpecC *spec = &sim->specs[sim->witness];
    return (node->ready || anywhere) && spec->cpu_cap_m - node->cpu_m >= cpu_m
           && spec->memory - node->memory >= memory && spec->gpus - node->gpus_used >= gpus;
}

int could_place_any(Sim *sim) {
    if (sim->pending_count == 0) return 0;
    if (!sim->smallest_valid) {
        for (int resource = 0; resource < 3; resource++)
            sim->smallest[resource] = smallest_of(sim, resource);
        sim->smallest_valid = 1;
    }
    int64_t cpu_m = sim->smallest[0], memory = sim->smallest[1], gpus = sim->smallest[2];
    int anywhere = sim->tolerating_not_ready > 0;
    if (witness_has_room(sim, cpu_m, memory, gpus, anywhere)) return 1;
    if (sim->no_room_valid && sim->no_room_anywhere == anywhere && cpu_m >= sim->no_room[0]
            && memory >= sim->no_room[1] && gpus >= sim->no_room[2])
        return sim->freed_count > 0 && freed_room(sim, cpu_m, memory, gpus, anywhere);
    double need_cpu = (double)cpu_m / 1000.0 - 1e-9;
    int check_ready = sim->nodes_down && !anywhere;
    for (int32_t n = 0; n < sim->node_count; n++) {
        const double *capacity = &sim->allocatable[3 * n], *used = &sim->allocated[3 * n];
        if (capacity[0] - used[0] >= need_cpu && capacity[1] - used[1] >= (double)memory
                && capacity[2] - used[2] >= (double)gpus && (!check_ready || sim->ready[n])) {
            sim->no_room_valid = 0;
            sim->witness = n;
            return 1;
        }
    }
    sim->no_room_valid = 1;
    sim->no_room[0] = cpu_m, sim->no_room[1] = memory, sim->no_room[2] = gpus;
    sim->no_room_anywhere = anywhere;
    clear_freed(sim);
    return 0;
}
