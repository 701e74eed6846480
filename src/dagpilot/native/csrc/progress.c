/* Running pods, the load they put on nodes, pools and communication groups, and their progress
 * rates: sim/progress.py with the formulas of sim/physics.py, in the same order of operations. */
#include <math.h>

#include "sim.h"

#define RHO_MAX 0.99

/* physics.membw_multiplier */
static double membw_multiplier(const Params *p, double utilisation) {
    double knee = p->membw_knee, factor = p->membw_cache_miss_factor;
    if (utilisation <= knee) return 1.0;
    double full = 0.3 + 0.7 * p->membw_saturation_mbpi;
    if (utilisation < full) {
        double x = (utilisation - knee) / (full - knee);
        return 1.0 + (factor - 1.0) * x * x;
    }
    return factor * (utilisation > 1.0 ? utilisation : 1.0);
}

/* physics.page_cache_multiplier: reads of the reclaimed share of the cache go to the disk. */
static double page_cache_multiplier(const Params *p, int64_t working, int64_t cache,
                                    int64_t capacity) {
    int64_t room = capacity - working;
    int64_t held = cache <= room ? cache : (room > 0 ? room : 0);
    if (held >= cache) return 1.0;
    return 1.0 + p->page_cache_miss_factor * ((double)(cache - held) / (double)cache);
}

/* physics.io_await_ms: M/M/1, held at rho = 0.99 and scaled past it. */
static double io_await_ms(double demand, double iops, double service) {
    double rho = iops > 0.0 ? demand / iops : INFINITY;
    double capped = rho < RHO_MAX ? rho : RHO_MAX;
    double over = rho / RHO_MAX;
    return service / (1.0 - capped) * (over > 1.0 ? over : 1.0);
}

static int32_t await_level(const Params *p, double await_ms) {
    if (await_ms < p->io_level_ms[0]) return 0;
    if (await_ms < p->io_level_ms[1]) return 1;
    if (await_ms < p->io_level_ms[2]) return 2;
    return 3;
}

static double io_level_multiplier(const Params *p, int32_t level) {
    return level == 0 ? 1.0 : p->io_level_factor[level - 1];
}

/* physics.network_multiplier of a group's worst-pair RTT */
static double network_multiplier(const Params *p, double worst_rtt_ms) {
    if (!p->on_network) return 1.0;
    double excess = worst_rtt_ms / p->rtt_ms[1] - 1.0;
    return 1.0 + p->network_latency_sensitivity * (excess > 0.0 ? excess : 0.0);
}

/* physics.pcie_multiplier: the pod's GPUs span root complexes. */
static double pcie_multiplier(const Sim *sim, const Pod *pod) {
    if (!sim->p.on_pcie || pod->gpu_count < 2) return 1.0;
    const int32_t *complexes = &sim->gpu_root_complex[sim->specs[pod->node].root_complexes];
    int32_t first = NONE;
    for (int bit = 0; bit < 64; bit++) {
        if (!(pod->gpus & (1ULL << bit))) continue;
        if (first == NONE) first = complexes[bit];
        else if (complexes[bit] != first) return sim->p.pcie_cross_complex_factor;
    }
    return 1.0;
}

/* _update_rate: bring the pod's work up to now, give it its rate, reschedule its end. */
static void update_rate(Sim *sim, int64_t uid) {
    Pod *pod = &sim->pods[uid];
    const NodeLive *node = &sim->nodes[pod->node];
    const Pool *pool = &sim->pools[sim->specs[pod->node].pool];
    double slowdown = (1.0 + pod->membw_share * (node->membw_multiplier - 1.0)) * (
        1.0 + pod->io_share * (pool->multiplier * node->cache_multiplier - 1.0));
    if (pod->comm_share > 0.0) {
        double network = pod->group != NONE ? sim->groups[pod->group].multiplier : 1.0;
        slowdown *= 1.0 + pod->comm_share * (network * pod->pcie - 1.0);
    }
    double rate = sim->specs[pod->node].speed / slowdown;
    if (rate == pod->rate) return;
    double now = sim->now_s;
    double remaining = pod->remaining - pod->rate * (now - pod->since);
    pod->remaining = remaining = remaining > 0.0 ? remaining : 0.0;
    pod->since = now;
    pod->rate = rate;
    pod->version++;
    schedule(sim, now + remaining / rate, O_COMPLETE, E_COMPLETE, uid, pod->version);
}

/* _refresh_node: the node's memory-bandwidth and page-cache multipliers. */
static void refresh_node(Sim *sim, int32_t n) {
    NodeLive *node = &sim->nodes[n];
    double membw = node->membw_multiplier, cache = node->cache_multiplier;
    if (sim->p.on_membw) {
        double capacity = sim->specs[n].membw_capacity;
        double utilisation = capacity != 0.0 ? node->membw_demand / capacity : 0.0;
        membw = membw_multiplier(&sim->p, utilisation);
    }
    if (sim->p.on_memory)
        cache = page_cache_multiplier(&sim->p, node->mem_working, node->mem_cache,
                                      sim->specs[n].mem_capacity);
    if (membw != node->membw_multiplier || cache != node->cache_multiplier) {
        node->membw_multiplier = membw;
        node->cache_multiplier = cache;
        for (int64_t uid = node->running.head; uid != NONE; uid = sim->pods[uid].running.next)
            update_rate(sim, uid);
    }
}

static void refresh_pool(Sim *sim, int32_t index) {
    if (!sim->p.on_storage) return;
    Pool *pool = &sim->pools[index];
    pool->await_ms = io_await_ms(pool->demand, pool->iops, pool->service_ms);
    int32_t level = await_level(&sim->p, pool->await_ms);
    if (level == pool->level) return;
    pool->level = level;
    pool->multiplier = io_level_multiplier(&sim->p, level);
    for (int32_t i = 0; i < pool->node_count; i++) {
        const NodeLive *node = &sim->nodes[sim->pool_nodes[pool->nodes + i]];
        for (int64_t uid = node->running.head; uid != NONE; uid = sim->pods[uid].running.next)
            update_rate(sim, uid);
    }
}

/* physics.group_distance over the distinct nodes, racks and zones of the running members. */
static int32_t group_distance(Sim *sim, const Group *group) {
    int32_t stamp = ++sim->stamp, nodes = 0, racks = 0, zones = 0;
    for (int64_t uid = group->members.head; uid != NONE; uid = sim->pods[uid].member.next) {
        const NodeSpecC *spec = &sim->specs[sim->pods[uid].node];
        int32_t n = sim->pods[uid].node;
        if (sim->stamp_node[n] != stamp) sim->stamp_node[n] = stamp, nodes++;
        if (sim->stamp_rack[spec->rack] != stamp) sim->stamp_rack[spec->rack] = stamp, racks++;
        if (sim->stamp_zone[spec->zone] != stamp) sim->stamp_zone[spec->zone] = stamp, zones++;
    }
    if (zones > 1) return 3;
    if (racks > 1) return 2;
    return nodes > 1 ? 1 : 0;
}

static void refresh_group(Sim *sim, int32_t index) {
    Group *group = &sim->groups[index];
    double multiplier = network_multiplier(&sim->p, sim->p.rtt_ms[group_distance(sim, group)]);
    if (multiplier != group->multiplier) {
        group->multiplier = multiplier;
        for (int64_t uid = group->members.head; uid != NONE; uid = sim->pods[uid].member.next)
            update_rate(sim, uid);
    }
}

/* _prepare: the pod's footprint, PCIe multiplier and group, when it starts. */
static void prepare(Sim *sim, Pod *pod) {
    const TaskSpec *task = &sim->tasks[pod->task];
    pod->working = task->working;
    pod->cache = task->cache;
    pod->membw = task->membw;
    pod->iops = task->runtimes != NONE ? sim->instance_iops[task->runtimes + pod->instance]
                                       : task->iops;
    if (pod->gpu_count > 1) pod->pcie = pcie_multiplier(sim, pod);
    if (task->comm_group != NONE && pod->comm_share > 0.0) pod->group = task->comm_group;
}

static void add_running(Sim *sim, int64_t uid) {
    Pod *pod = &sim->pods[uid];
    NodeLive *node = &sim->nodes[pod->node];
    Pool *pool = &sim->pools[sim->specs[pod->node].pool];
    APPEND(sim, &node->running, running, uid);
    node->running_count++;
    node->mem_working += pod->working;
    node->mem_cache += pod->cache;
    node->membw_demand += pod->membw;
    pool->demand += pod->iops;
    sim->running++;
    sim->cpu_used += pod->cpu_used;
    if (pod->group != NONE) {
        Group *group = &sim->groups[pod->group];
        APPEND(sim, &group->members, member, uid);
        group->count++;
    }
}

static void remove_running(Sim *sim, int64_t uid) {
    Pod *pod = &sim->pods[uid];
    NodeLive *node = &sim->nodes[pod->node];
    Pool *pool = &sim->pools[sim->specs[pod->node].pool];
    REMOVE(sim, &node->running, running, uid);
    node->running_count--;
    node->mem_working -= pod->working;
    node->mem_cache -= pod->cache;
    node->membw_demand -= pod->membw;
    pool->demand -= pod->iops;
    sim->running--;
    sim->cpu_used -= pod->cpu_used;
    pod->version++;
    pod->phase = P_KILLED;
    if (pod->group != NONE) {
        Group *group = &sim->groups[pod->group];
        REMOVE(sim, &group->members, member, uid);
        if (--group->count == 0) group->multiplier = 1.0;  /* a later member starts afresh */
    }
    if (node->running_count == 0) node->membw_demand = 0.0;
}

static int is_victim(const int64_t *victims, int32_t count, int64_t uid) {
    for (int32_t i = 0; i < count; i++)
        if (victims[i] == uid) return 1;
    return 0;
}

/* _oom_victims: over its own limit, then the node's OOM killer (the pod most over its request,
 * ties to the latest started) until anonymous memory fits: page cache is reclaimed, not counted. */
static int32_t oom_victims(Sim *sim, int64_t started, int64_t *victims) {
    if (!sim->p.on_memory) return 0;
    const Pod *pod = &sim->pods[started];
    const NodeLive *node = &sim->nodes[pod->node];
    int64_t capacity = sim->specs[pod->node].mem_capacity;
    int32_t count = 0;
    if (sim->tasks[pod->task].over_limit) victims[count++] = started;
    int64_t used = node->mem_working;
    for (int32_t i = 0; i < count; i++) used -= sim->pods[victims[i]].working;
    while (used > capacity) {
        int64_t best = NONE;
        double best_excess = -INFINITY;
        for (int64_t uid = node->running.head; uid != NONE; uid = sim->pods[uid].running.next) {
            if (is_victim(victims, count, uid)) continue;
            const Pod *candidate = &sim->pods[uid];
            int64_t excess = candidate->working - sim->tasks[candidate->task].memory;
            if ((double)excess >= best_excess) best = uid, best_excess = (double)excess;
        }
        if (best == NONE) break;
        victims[count++] = best;
        used -= sim->pods[best].working;
    }
    return count;
}

/* _groups_of(pods) then _refresh_group on each: the distinct groups of the pods (`first`,
 * when not NONE, then `uids`), in order. */
static void refresh_groups_of(Sim *sim, int64_t first, const int64_t *uids, int32_t count) {
    int32_t first_group = first != NONE ? sim->pods[first].group : NONE;
    if (first_group != NONE) refresh_group(sim, first_group);
    for (int32_t i = 0; i < count; i++) {
        int32_t group = sim->pods[uids[i]].group;
        int known = group == NONE || group == first_group;
        for (int32_t j = 0; j < i && !known; j++) known = sim->pods[uids[j]].group == group;
        if (!known) refresh_group(sim, group);
    }
}

int progress_start(Sim *sim, int64_t uid, int64_t *victims, int32_t *victim_count) {
    Pod *pod = &sim->pods[uid];
    pod->phase = P_RUNNING;
    pod->started_s = pod->since = sim->now_s;
    prepare(sim, pod);
    add_running(sim, uid);
    int32_t count = oom_victims(sim, uid, victims);
    for (int32_t i = 0; i < count; i++) remove_running(sim, victims[i]);
    refresh_node(sim, pod->node);
    refresh_pool(sim, sim->specs[pod->node].pool);
    if (count > 0) {
        refresh_groups_of(sim, uid, victims, count);
    } else if (pod->group != NONE) {
        refresh_group(sim, pod->group);
    }
    if (pod->phase == P_RUNNING) update_rate(sim, uid);
    *victim_count = count;
    return 1;
}

void progress_stop(Sim *sim, int64_t uid) {
    Pod *pod = &sim->pods[uid];
    remove_running(sim, uid);
    refresh_node(sim, pod->node);
    refresh_pool(sim, sim->specs[pod->node].pool);
    if (pod->group != NONE) refresh_group(sim, pod->group);
}

int32_t progress_stop_all(Sim *sim, int32_t n, int64_t *stopped) {
    int32_t count = 0;
    for (int64_t uid = sim->nodes[n].running.head; uid != NONE; uid = sim->pods[uid].running.next)
        stopped[count++] = uid;
    for (int32_t i = 0; i < count; i++) remove_running(sim, stopped[i]);
    refresh_node(sim, n);
    refresh_pool(sim, sim->specs[n].pool);
    refresh_groups_of(sim, NONE, stopped, count);
    return count;
}

void progress_set_iops(Sim *sim, int32_t index, double iops, int32_t collapsed) {
    sim->pools[index].iops = iops;
    sim->pools[index].collapsed = collapsed;
    refresh_pool(sim, index);
}
