// SPDX-License-Identifier: GPL-2.0
// Per-cgroup on-CPU time and block I/O bytes for the node agent's task feedback.
//
// Built by ebpf/Makefile against the running kernel's BTF (CO-RE); loaded by feedback_loader.c.
// Both programs are BTF tracepoints (tp_btf): no kprobe, no tracefs.
//
// Keys are cgroup ids (kernfs node ids: the inode number of the cgroup's directory) in ONE
// hierarchy per figure: the cpuacct (CPU) and blkio (I/O) hierarchies on cgroup v1, the unified
// hierarchy on v2; the loader sets which through the `feedback_config` map. Every figure is
// added to the task's cgroup and to each of its ancestors, so a pod's cgroup holds its
// containers' sum, as cpuacct.usage and io.stat do, and it survives the cgroup's removal.
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

#define MAX_DEPTH 16   // cgroup levels walked up from a task's cgroup (the kubelet uses ~5)
#define REQ_OP_MASK 0xff  // a macro in the kernel (REQ_OP_BITS 8), so not in its BTF

// Which hierarchy each figure is keyed in, written by the loader before it attaches: entry 0
// is 1 for CPU by the cpuacct v1 hierarchy, 0 for cgroup v2; entry 1 the same for I/O (blkio).
enum { CONFIG_CPU_V1, CONFIG_IO_V1, CONFIG_SIZE };
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CONFIG_SIZE);
	__type(key, __u32);
	__type(value, __u64);
} feedback_config SEC(".maps");

struct io_key {
	__u64 cgroup_id;
	__u32 dev;       // the kernel's dev_t: major << 20 | minor
	__u32 write;     // 0 read, 1 write
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);    // pid (thread id) switched in
	__type(value, __u64);  // when, ns
} oncpu_since SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);    // cgroup id
	__type(value, __u64);  // on-CPU ns, hierarchical
} cpu_ns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct io_key);
	__type(value, __u64);  // bytes, hierarchical
} io_bytes SEC(".maps");

static __always_inline bool configured(__u32 index)
{
	__u64 *value = bpf_map_lookup_elem(&feedback_config, &index);
	return value && *value;
}

static __always_inline void add(void *map, const void *key, __u64 amount)
{
	__u64 *total = bpf_map_lookup_elem(map, key);
	if (total) {
		__sync_fetch_and_add(total, amount);
		return;
	}
	bpf_map_update_elem(map, key, &amount, BPF_NOEXIST);
	total = bpf_map_lookup_elem(map, key);  // another CPU may have created it meanwhile
	if (total && *total != amount)
		__sync_fetch_and_add(total, amount);
}

// The cgroup that serves `subsys` for a task: its v1 hierarchy's, or the unified one's.
static __always_inline struct cgroup *task_cgroup(struct task_struct *task, bool v1, int subsys)
{
	if (v1)
		return BPF_CORE_READ(task, cgroups, subsys[subsys], cgroup);
	return BPF_CORE_READ(task, cgroups, dfl_cgrp);
}

static __always_inline void add_cpu(struct cgroup *cgrp, __u64 ns)
{
	struct cgroup_subsys_state *css = &cgrp->self;
	for (int level = 0; level < MAX_DEPTH && css; level++) {
		__u64 id = BPF_CORE_READ(css, cgroup, kn, id);
		add(&cpu_ns, &id, ns);
		css = BPF_CORE_READ(css, parent);
	}
}

static __always_inline void add_io(struct cgroup *cgrp, __u32 dev, __u32 write, __u64 bytes)
{
	struct cgroup_subsys_state *css = &cgrp->self;
	for (int level = 0; level < MAX_DEPTH && css; level++) {
		struct io_key key = {.dev = dev, .write = write};
		key.cgroup_id = BPF_CORE_READ(css, cgroup, kn, id);
		add(&io_bytes, &key, bytes);
		css = BPF_CORE_READ(css, parent);
	}
}

// sched_switch runs on the CPU that switches, before the switch: prev has run since it was
// switched in (oncpu_since), next starts now. The idle task (pid 0) is not counted.
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 prev_pid = BPF_CORE_READ(prev, pid);
	__u32 next_pid = BPF_CORE_READ(next, pid);
	int cpuacct = bpf_core_enum_value(enum cgroup_subsys_id, cpuacct_cgrp_id);

	if (prev_pid) {
		__u64 *since = bpf_map_lookup_elem(&oncpu_since, &prev_pid);
		if (since) {
			__u64 ran = now - *since;
			bpf_map_delete_elem(&oncpu_since, &prev_pid);
			struct cgroup *cgrp = task_cgroup(prev, configured(CONFIG_CPU_V1), cpuacct);
			if (cgrp)
				add_cpu(cgrp, ran);
		}
	}
	if (next_pid)
		bpf_map_update_elem(&oncpu_since, &next_pid, &now, BPF_ANY);
	return 0;
}

// block_bio_queue fires once per bio as it enters the block layer (submit_bio_noacct_nocheck,
// where cgroup v2 counts io.stat too). The bytes go to the cgroup the bio is CHARGED to,
// bio->bi_blkg, not to the task that happens to be running: the block layer set bi_blkg at
// submission from the submitter's blkcg (v1: its blkio cgroup), or, for page-cache writeback
// on v2, from the cgroup that dirtied the pages. Completion (block_rq_complete) runs in
// interrupt or kworker context and is not used. A bio without a blkg is charged to the
// submitting task's cgroup.
SEC("tp_btf/block_bio_queue")
int BPF_PROG(on_bio_queue, struct bio *bio)
{
	__u64 bytes = BPF_CORE_READ(bio, bi_iter.bi_size);
	__u32 op = BPF_CORE_READ(bio, bi_opf) & REQ_OP_MASK;
	__u32 dev = BPF_CORE_READ(bio, bi_bdev, bd_dev);
	struct cgroup *cgrp = BPF_CORE_READ(bio, bi_blkg, blkcg, css.cgroup);
	int io = bpf_core_enum_value(enum cgroup_subsys_id, io_cgrp_id);

	if (!bytes || (op != REQ_OP_READ && op != REQ_OP_WRITE))
		return 0;  // flushes, discards, zone commands: no data moved
	if (!cgrp)
		cgrp = task_cgroup(bpf_get_current_task_btf(), configured(CONFIG_IO_V1), io);
	if (cgrp)
		add_io(cgrp, dev, op == REQ_OP_WRITE, bytes);
	return 0;
}
