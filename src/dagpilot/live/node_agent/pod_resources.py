"""The kubelet's PodResources API (v1), over gRPC on its unix socket.

Two calls: GetAllocatableResources (the devices the kubelet may hand out) and List (the devices
each running container holds). Messages are read with protobuf_wire.py, so no generated code is
needed; grpcio is imported only when the probe first runs, and its absence is a reason, not a
crash. The API server never learns which device a container got: this is the only source.

    ListPodResourcesResponse { repeated PodResources pod_resources = 1; }
    PodResources { string name = 1; string namespace = 2;
                   repeated ContainerResources containers = 3; }
    ContainerResources { string name = 1; repeated ContainerDevices devices = 2; ... }
    AllocatableResourcesResponse { repeated ContainerDevices devices = 1; ... }
    ContainerDevices { string resource_name = 1; repeated string device_ids = 2; ... }
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import protobuf_wire as wire

SERVICE = "/v1.PodResourcesLister"
LIST = f"{SERVICE}/List"
GET_ALLOCATABLE = f"{SERVICE}/GetAllocatableResources"
DEFAULT_SOCKET = Path("/var/lib/kubelet/pod-resources/kubelet.sock")


class PodResourcesError(Exception):
    """The API could not be reached or answered something unreadable; the message says which."""


@dataclass(frozen=True, slots=True)
class Devices:
    resource_name: str
    device_ids: tuple[str, ...]


class PodResourcesClient:
    def __init__(self, socket_path: Path, timeout_s: float) -> None:
        self.socket_path = socket_path
        self.timeout_s = timeout_s
        self._channel: Any = None

    def allocatable(self) -> list[Devices]:
        reply = self._call(GET_ALLOCATABLE)
        try:
            return [_devices(message) for message in wire.messages(reply, 1)]
        except ValueError as error:  # WireError, or a string that is not UTF-8
            raise PodResourcesError(f"{GET_ALLOCATABLE}: the reply does not parse: {error}") \
                from None

    def assigned(self) -> list[Devices]:
        reply = self._call(LIST)
        try:
            return [_devices(device)
                    for pod in wire.messages(reply, 1)
                    for container in wire.messages(pod, 3)
                    for device in wire.messages(container, 2)]
        except ValueError as error:
            raise PodResourcesError(f"{LIST}: the reply does not parse: {error}") from None

    def close(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None

    def _call(self, method: str) -> bytes:
        grpc = _grpc()
        if self._channel is None:
            self._channel = grpc.insecure_channel(f"unix://{self.socket_path}")
        try:
            # No serializers: the request is the empty message's bytes, the reply raw bytes.
            reply = self._channel.unary_unary(method)(b"", timeout=self.timeout_s)
        except grpc.RpcError as error:
            raise PodResourcesError(f"{method}: {error.code().name}: {error.details()}") \
                from None
        if not isinstance(reply, bytes):
            raise PodResourcesError(f"{method}: the reply is not bytes")
        return reply


def _devices(message: bytes) -> Devices:
    names = wire.strings(message, 1)
    return Devices(names[-1] if names else "", tuple(wire.strings(message, 2)))


def _grpc() -> Any:
    """grpcio, imported when first needed (it is optional, and has no type stubs)."""
    try:
        return importlib.import_module("grpc")
    except ImportError:
        raise PodResourcesError("grpcio is not installed (pip install 'dagpilot[live]')") \
            from None
