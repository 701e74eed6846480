// SPDX-License-Identifier: GPL-2.0
// The smallest tracepoint program: counts sched_switch events. `dagpilot ops check-kernel`
// loads, attaches and detaches it (feedback_loader --check) to prove the agent's path works.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

__u64 switches = 0;

SEC("tp_btf/sched_switch")
int BPF_PROG(count_switch)
{
	__sync_fetch_and_add(&switches, 1);
	return 0;
}
