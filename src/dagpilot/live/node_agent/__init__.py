"""`dagpilot node-agent`: the per-node exporter of the signals node_exporter lacks.

metric_names.py   every metric and label (the live view and the sandbox twin import it)
reading.py        Sample, ProbeReading, the Probe protocol, ProbeUnavailable
probes.py         the registry of probes; one file each:
  pod_memory.py     page cache against memory use, their ratio, peak memory (per pod cgroup)
  pod_cpu.py        CPU time (per pod cgroup)
  pod_io.py         block I/O bytes (per pod cgroup)
  disk_await.py     await per device from /proc/diskstats (diskstats.py reads it)
  memory_bandwidth.py  DRAM traffic: uncore_imc.py (perf_event.py) or resctrl_mbm.py
  ping_mesh.py      RTT and loss to peer agents (TCP connect)
  gpu_free.py       free GPUs per root complex: pod_resources.py (protobuf_wire.py),
                    gpu_root_complex.py
cgroup_hierarchy.py, pod_cgroups.py, kernel_files.py   finding and reading cgroups
exporter.py       the Prometheus endpoint; runner.py: the loop; config.py: the settings
"""
