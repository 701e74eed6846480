/* The workflow engine: releases tasks when their parents have finished, creates their pods on
 * the job's polling grid, retries killed pods after a back-off (sim/engine.py). */
#include <math.h>
#include <stdlib.h>

#include "sim.h"

double next_poll(double now_s, double phase_s, double interval_s) {
    if (interval_s <= 0.0) return now_s;
    double wake = phase_s + ceil((now_s - phase_s) / interval_s) * interval_s;
    return wake >= now_s ? wake : now_s;  /* guard against rounding below now */
}

/* Append (task, instance, attempt) to the job's queue. */
static void enqueue(Sim *sim, Job *job, int32_t task, int32_t instance, int32_t attempt) {
    int64_t at = sim->queue_free;
    if (at != NONE) {
        sim->queue_free = sim->queue[at].next;
    } else {
        if (!sim_reserve(sim, (void **)&sim->queue, &sim->queue_capacity, sim->queue_size + 1,
                         sizeof(QueueEntry)))
            return;
        at = sim->queue_size++;
    }
    sim->queue[at] = (QueueEntry){task, instance, attempt, NONE};
    if (job->queue_tail != NONE) sim->queue[job->queue_tail].next = at;
    else job->queue_head = at;
    job->queue_tail = at;
}

static QueueEntry dequeue(Sim *sim, Job *job) {
    int64_t at = job->queue_head;
    QueueEntry entry = sim->queue[at];
    job->queue_head = entry.next;
    if (job->queue_head == NONE) job->queue_tail = NONE;
    sim->queue[at].next = sim->queue_free;
    sim->queue_free = at;
    return entry;
}

static void clear_queue(Sim *sim, Job *job) {
    while (job->queue_head != NONE) dequeue(sim, job);
}

/* _wake: make sure the job's engine creates its queued pods at its next poll. */
static void wake(Sim *sim, int32_t index) {
    Job *job = &sim->jobs[index];
    int32_t limit = sim->p.engine_queue_size;
    if (job->submit_scheduled || job->queue_head == NONE || (limit > 0 && job->in_flight >= limit))
        return;
    job->submit_scheduled = 1;
    sim->outstanding++;
    double when = next_poll(sim->now_s, job->phase_s, sim->p.poll_interval_s)
                  + sim->p.submit_latency_s;
    schedule(sim, when, O_SUBMIT, E_SUBMIT, index, 0);
}

static void release_task(Sim *sim, int32_t index, int32_t task) {
    for (int32_t instance = 0; instance < sim->tasks[task].instances; instance++)
        enqueue(sim, &sim->jobs[index], task, instance, 0);
    wake(sim, index);
}

static void finish(Sim *sim, int32_t index) {
    Job *job = &sim->jobs[index];
    job->finish_s = sim->now_s;
    job->ended = 1;
    sim->in_system--;
    sim->ended++;
    on_job_ended(sim, index);
}

static void fail(Sim *sim, int32_t index) {
    Job *job = &sim->jobs[index];
    job->failed = 1;
    job->ended = 1;
    clear_queue(sim, job);
    sim->ended++;
    on_job_ended(sim, index);
}

static int ascending(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void engine_add(Sim *sim) {
    sim->arrivals = zeroed((size_t)sim->job_count, sizeof(double));
    if (sim->arrivals == NULL) {
        sim->error = 1;
        PyErr_NoMemory();
        return;
    }
    for (int32_t index = 0; index < sim->job_count; index++) {
        Job *job = &sim->jobs[index];
        job->finish_s = NAN;
        job->queue_head = job->queue_tail = NONE;
        job->tasks_left = job->task_count;
        sim->outstanding++;
        double at = job->arrival_s > sim->now_s ? job->arrival_s : sim->now_s;
        sim->arrivals[index] = at;
        schedule(sim, at, O_ARRIVAL, E_ARRIVAL, index, 0);
    }
    qsort(sim->arrivals, (size_t)sim->job_count, sizeof(double), ascending);
}

int engine_only_arrivals_ahead(const Sim *sim) {
    return sim->outstanding == (int64_t)sim->job_count - sim->arrived;
}

void engine_on_arrival(Sim *sim, int32_t index) {
    Job *job = &sim->jobs[index];
    sim->outstanding--;
    sim->arrived++;
    job->arrived = 1;
    sim->in_system++;
    if (job->task_count == 0) {
        finish(sim, index);
        return;
    }
    for (int32_t task = job->first_task; task < job->first_task + job->task_count; task++)
        if (sim->tasks[task].parents == 0) release_task(sim, index, task);
}

void engine_on_submit(Sim *sim, int32_t index) {
    Job *job = &sim->jobs[index];
    sim->outstanding--;
    job->submit_scheduled = 0;
    if (job->failed) return;
    int32_t limit = sim->p.engine_queue_size;
    while (job->queue_head != NONE && (limit <= 0 || job->in_flight < limit)) {
        QueueEntry entry = dequeue(sim, job);
        int64_t uid = ++sim->next_uid;
        if (!sim_reserve(sim, (void **)&sim->pods, &sim->pod_capacity, uid + 1, sizeof(Pod)))
            return;
        job->in_flight++;
        Pod *pod = &sim->pods[uid];
        pod->task = entry.task;
        pod->instance = entry.instance;
        pod->attempt = entry.attempt;
        pod->job = index;
        pod->created_s = sim->now_s;
        pod->node = NONE;
        on_pod_created(sim, uid);
    }
}

static void task_finished(Sim *sim, int32_t index, int32_t task) {
    Job *job = &sim->jobs[index];
    if (--job->tasks_left == 0) {
        finish(sim, index);
        return;
    }
    const TaskSpec *spec = &sim->tasks[task];
    for (int32_t i = 0; i < spec->child_count; i++) {
        int32_t child = sim->children[spec->children + i];
        if (--sim->missing[child] == 0) release_task(sim, index, child);
    }
}

void engine_succeeded(Sim *sim, int32_t index, int32_t task) {
    Job *job = &sim->jobs[index];
    job->in_flight--;
    if (job->failed) return;
    if (--sim->instances_left[task] == 0) task_finished(sim, index, task);
    if (!job->ended) wake(sim, index);
}

static double backoff_s(const Params *p, int32_t attempt) {
    double wait = p->retry_backoff_s * ldexp(1.0, attempt < 30 ? attempt : 30);
    return wait < p->retry_backoff_max_s ? wait : p->retry_backoff_max_s;
}

int engine_killed(Sim *sim, int64_t uid, int oom) {
    const Pod *pod = &sim->pods[uid];
    int32_t index = pod->job;
    Job *job = &sim->jobs[index];
    job->in_flight--;
    if (job->ended) return 0;
    if (oom) {
        int32_t kills = ++sim->oom_kills[sim->instance_base[pod->task] + pod->instance];
        if (kills > sim->p.oom_retry_limit) {
            fail(sim, index);
            return 0;
        }
    }
    sim->outstanding++;
    /* Engine.killed: a pod lost with its node is retried once Kubernetes evicts it. */
    double at = sim->now_s + backoff_s(&sim->p, pod->attempt);
    if (!oom) at += sim->p.eviction_delay_s;
    schedule(sim, at, O_ARRIVAL, E_RETRY, uid, 0);
    return 1;
}

void engine_on_retry(Sim *sim, int64_t uid) {
    const Pod *pod = &sim->pods[uid];
    Job *job = &sim->jobs[pod->job];
    sim->outstanding--;
    if (job->ended) return;
    enqueue(sim, job, pod->task, pod->instance, pod->attempt + 1);
    wake(sim, pod->job);
}
