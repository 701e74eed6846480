"""The ping mesh: round-trip time and loss to every peer agent, by TCP connect to its port.

A TCP handshake to the peer's agent port takes one round trip (SYN out, SYN-ACK back), needs no
raw-socket privilege and also proves the peer's agent answers. Each period makes `attempts`
rounds; a round starts every peer's connect at once (in batches, to stay under the file
descriptor limit) and waits at most `timeout_s`. RTT is the median of the attempts that
connected; loss is the share that did not (refused, timed out, unresolvable). With no attempt
connected the RTT is absent, not a guess.
"""

from __future__ import annotations

import errno
import selectors
import socket
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

from dagpilot.core.errors import SpecError

from . import metric_names as m
from .reading import ProbeReading, Sample, sample

_BATCH = 64  # connects in flight at once


@dataclass(frozen=True, slots=True)
class Peer:
    name: str
    host: str
    port: int


def parse_peers(text: str) -> tuple[Peer, ...]:
    """`NAME=HOST:PORT,...` (IPv6 hosts in brackets: `b=[fd00::2]:9810`)."""
    peers: list[Peer] = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, equals, address = item.partition("=")
        host, colon, port = address.rpartition(":")
        host = host.removeprefix("[").removesuffix("]")
        if not (equals and name and colon and host and port.isdigit()
                and 0 < int(port) < 65536):
            raise SpecError(item, "a peer is NAME=HOST:PORT (e.g. node-b=10.0.0.2:9810)")
        peers.append(Peer(name, host, int(port)))
    names = [peer.name for peer in peers]
    if len(set(names)) != len(names):
        raise SpecError(text, "a peer name appears twice")
    return tuple(peers)


@dataclass(frozen=True, slots=True)
class PingMeshProbe:
    node: str
    peers: tuple[Peer, ...]
    attempts: int = 3
    timeout_s: float = 1.0
    name: str = m.PROBE_PING_MESH

    def read(self) -> ProbeReading:
        targets = [peer for peer in self.peers if peer.name != self.node]
        rtts: dict[str, list[float]] = {peer.name: [] for peer in targets}
        for _ in range(self.attempts):
            for start in range(0, len(targets), _BATCH):
                batch = targets[start:start + _BATCH]
                for peer, rtt in zip(batch, connect_times(batch, self.timeout_s), strict=True):
                    if rtt is not None:
                        rtts[peer.name].append(rtt)
        samples: list[Sample] = []
        for peer in targets:
            measured = rtts[peer.name]
            if measured:
                samples.append(sample(m.RTT_SECONDS, statistics.median(measured),
                                      src=self.node, dst=peer.name))
            samples.append(sample(m.PING_LOSS_RATIO, 1 - len(measured) / self.attempts,
                                  src=self.node, dst=peer.name))
        return ProbeReading(tuple(samples))


def connect_times(peers: Sequence[Peer], timeout_s: float) -> list[float | None]:
    """Seconds each peer took to accept a TCP connection, None where it did not in time."""
    results: list[float | None] = [None] * len(peers)
    started: dict[int, float] = {}
    with selectors.DefaultSelector() as selector:
        try:
            for index, peer in enumerate(peers):
                begun = _start_connect(peer)
                if begun is not None:
                    selector.register(begun[0], selectors.EVENT_WRITE, index)
                    started[index] = begun[1]
            deadline = time.perf_counter() + timeout_s
            while selector.get_map() and (left := deadline - time.perf_counter()) > 0:
                for key, _ in selector.select(left):
                    connection = key.fileobj
                    assert isinstance(connection, socket.socket)
                    if connection.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                        results[key.data] = time.perf_counter() - started[key.data]
                    selector.unregister(connection)
                    connection.close()
        finally:
            for key in list(selector.get_map().values()):
                selector.unregister(key.fileobj)
                key.fileobj.close()  # type: ignore[union-attr]
    return results


def _start_connect(peer: Peer) -> tuple[socket.socket, float] | None:
    """A non-blocking socket with its connect under way, and when the SYN left; None if the
    peer cannot be reached at all."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            peer.host, peer.port, type=socket.SOCK_STREAM)[0]
    except OSError:  # unresolvable: counted as loss
        return None
    connection = socket.socket(family, kind, proto)
    connection.setblocking(False)
    started = time.perf_counter()
    code = connection.connect_ex(address)
    if code not in (0, errno.EINPROGRESS):
        connection.close()
        return None
    return connection, started
