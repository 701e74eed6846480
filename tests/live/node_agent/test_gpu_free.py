"""Free GPUs per root complex: the PodResources client against a gRPC server on a unix socket
(the kubelet's transport, with replies encoded here by hand), device IDs resolved through a
hand-made sysfs and NVIDIA driver tree, and the reasons when the kubelet is not there."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import pytest

from dagpilot.live.node_agent import metric_names as m
from dagpilot.live.node_agent import protobuf_wire as wire
from dagpilot.live.node_agent.gpu_free import GpuFreeProbe
from dagpilot.live.node_agent.gpu_root_complex import RootComplexes
from dagpilot.live.node_agent.reading import ProbeUnavailable

grpc = pytest.importorskip("grpc")  # the kubelet's transport, from the live extra

GPU = "nvidia.com/gpu"


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number: int, payload: bytes | str | int) -> bytes:
    if isinstance(payload, int):
        return varint(number << 3) + varint(payload)
    data = payload.encode() if isinstance(payload, str) else payload
    return varint(number << 3 | 2) + varint(len(data)) + data


def container_devices(resource: str, *ids: str, numa: int = 0) -> bytes:
    topology = field(1, field(1, numa))  # TopologyInfo { NUMANode { ID } }: skipped by the reader
    return field(1, resource) + b"".join(field(2, i) for i in ids) + field(3, topology)


def allocatable(*devices: bytes) -> bytes:
    return b"".join(field(1, d) for d in devices) + field(2, 7)  # + cpu_ids, ignored


def listing(*pods: tuple[str, list[bytes]]) -> bytes:
    """ListPodResourcesResponse: pods of one container each, holding the given devices."""
    out = b""
    for name, devices in pods:
        container = field(1, "main") + b"".join(field(2, d) for d in devices)
        out += field(1, field(1, name) + field(2, "default") + field(3, container))
    return out


Handler = Callable[[bytes, Any], bytes]


@pytest.fixture
def kubelet(tmp_path: Path) -> Iterator[Callable[[dict[str, Handler]], Path]]:
    """Starts a PodResourcesLister server on a unix socket with the given methods."""
    servers: list[Any] = []

    def start(methods: dict[str, Handler]) -> Path:
        socket_path = tmp_path / "kubelet.sock"
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        handlers = {name: grpc.unary_unary_rpc_method_handler(method)
                    for name, method in methods.items()}
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("v1.PodResourcesLister", handlers),))
        server.add_insecure_port(f"unix:{socket_path}")
        server.start()
        servers.append(server)
        return socket_path

    try:
        yield start
    finally:
        for server in servers:
            server.stop(grace=None).wait(10)


def fake_host(tmp_path: Path) -> tuple[Path, Path]:
    """Four GPUs on two host bridges; two named by NVIDIA UUID, two by PCI address."""
    sys_root, proc_root = tmp_path / "sys", tmp_path / "proc"
    devices = sys_root / "bus/pci/devices"
    devices.mkdir(parents=True)
    for bridge, address in (("pci0000:17", "0000:18:00.0"), ("pci0000:17", "0000:19:00.0"),
                            ("pci0000:85", "0000:86:00.0"), ("pci0000:85", "0000:87:00.0")):
        real = sys_root / "devices" / bridge / f"{bridge[3:]}:01.0" / address
        real.mkdir(parents=True)
        (devices / address).symlink_to(real)
    for address, uuid in (("0000:18:00.0", "GPU-aaaa"), ("0000:86:00.0", "GPU-cccc")):
        info = proc_root / "driver/nvidia/gpus" / address
        info.mkdir(parents=True)
        (info / "information").write_text(f"Model: \t NVIDIA H100\nGPU UUID: \t {uuid}\n"
                                          f"Bus Location: \t {address}\n")
    return sys_root, proc_root


def test_free_gpus_per_root_complex(tmp_path: Path, kubelet: Any) -> None:
    sys_root, proc_root = fake_host(tmp_path)
    socket_path = kubelet({
        "GetAllocatableResources": lambda request, context: allocatable(
            container_devices(GPU, "GPU-aaaa", "0000:19:00.0", numa=0),
            container_devices(GPU, "GPU-cccc", "0000:87:00.0", numa=1),
            container_devices("example.com/nic", "nic0")),
        "List": lambda request, context: listing(
            ("trainer", [container_devices(GPU, "GPU-aaaa", "GPU-cccc")]),
            ("nic-user", [container_devices("example.com/nic", "nic0")]),
            ("cpu-only", [])),
    })
    probe = GpuFreeProbe("n", socket_path, GPU, sys_root, proc_root)
    try:
        got = {(s.metric, s.labels[1]): s.value for s in probe.read().samples}
    finally:
        probe.close()
    assert got == {(m.GPUS_ALLOCATABLE, "pci0000:17"): 2, (m.GPUS_FREE, "pci0000:17"): 1,
                   (m.GPUS_ALLOCATABLE, "pci0000:85"): 2, (m.GPUS_FREE, "pci0000:85"): 1}


def test_unresolvable_devices_have_an_unknown_root_complex(tmp_path: Path) -> None:
    sys_root, proc_root = fake_host(tmp_path)
    resolver = RootComplexes(sys_root, proc_root)
    assert resolver.of("0000:87:00.0") == "pci0000:85"
    assert resolver.of("GPU-aaaa") == "pci0000:17"
    assert resolver.of("MIG-1234") == "unknown"
    assert resolver.of("0000:99:00.0") == "unknown"  # no such PCI device


def test_no_kubelet_socket_is_a_reason(tmp_path: Path) -> None:
    probe = GpuFreeProbe("n", tmp_path / "absent.sock", GPU, tmp_path, tmp_path)
    with pytest.raises(ProbeUnavailable, match="no kubelet PodResources socket at"):
        probe.read()


def test_a_kubelet_without_get_allocatable_is_a_reason(tmp_path: Path, kubelet: Any) -> None:
    socket_path = kubelet({"List": lambda request, context: listing()})
    probe = GpuFreeProbe("n", socket_path, GPU, tmp_path, tmp_path)
    try:
        with pytest.raises(ProbeUnavailable,
                           match="GetAllocatableResources: UNIMPLEMENTED"):
            probe.read()
    finally:
        probe.close()


def test_a_reply_that_does_not_parse_is_a_reason(tmp_path: Path, kubelet: Any) -> None:
    socket_path = kubelet({"GetAllocatableResources": lambda request, context: b"\x0a\x05ab",
                           "List": lambda request, context: b""})
    probe = GpuFreeProbe("n", socket_path, GPU, tmp_path, tmp_path)
    try:
        with pytest.raises(ProbeUnavailable, match="does not parse: field 1: 5 bytes announced"):
            probe.read()
    finally:
        probe.close()


def test_a_node_without_gpus_exports_nothing(tmp_path: Path, kubelet: Any) -> None:
    socket_path = kubelet({"GetAllocatableResources": lambda request, context: allocatable(),
                           "List": lambda request, context: listing()})
    probe = GpuFreeProbe("n", socket_path, GPU, tmp_path, tmp_path)
    try:
        reading = probe.read()
    finally:
        probe.close()
    assert reading.samples == ()
    assert GPU in reading.note


@pytest.mark.parametrize(("data", "message"), [
    (b"\x08", "truncated or overlong varint"),
    (b"\x0d\x01\x02", "truncated fixed-width value"),
    (b"\x0b", "unsupported wire type 3"),
])
def test_wire_errors(data: bytes, message: str) -> None:
    with pytest.raises(wire.WireError, match=message):
        list(wire.fields(data))


def test_wire_skips_unknown_fields() -> None:
    data = field(9, 12345) + field(1, "name") + b"\x11" + bytes(8) + field(1, "again")
    assert wire.strings(data, 1) == ["name", "again"]
