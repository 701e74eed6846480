"""The ping mesh: peer parsing, and real agents in two network namespaces joined to the host by
veth pairs. The host's agent measures both; one peer's link going down and the other's agent
stopping both show as loss."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from dagpilot.core.errors import SpecError
from dagpilot.live.node_agent import metric_names as m
from dagpilot.live.node_agent.ping_mesh import Peer, PingMeshProbe, connect_times, parse_peers

from .conftest import (
    AgentProcess,
    Series,
    needs_root,
    run,
    scrape_until,
    start_agent,
    stop_agent,
    value,
)

AGENT_PORT = 9810


@pytest.mark.parametrize(("text", "peers"), [
    ("", ()),
    ("b=10.0.0.2:9810", (Peer("b", "10.0.0.2", 9810),)),
    ("b=10.0.0.2:9810, c=node-c.example:1", (Peer("b", "10.0.0.2", 9810),
                                            Peer("c", "node-c.example", 1))),
    ("v6=[fd00::2]:9810", (Peer("v6", "fd00::2", 9810),)),
])
def test_peers_parse(text: str, peers: tuple[Peer, ...]) -> None:
    assert parse_peers(text) == peers


@pytest.mark.parametrize("text", ["b", "b=10.0.0.2", "=10.0.0.2:1", "b=:9810", "b=h:0",
                                  "b=h:65536", "b=h:port", "b=h:1,b=g:2"])
def test_bad_peers_are_spec_errors(text: str) -> None:
    with pytest.raises(SpecError):
        parse_peers(text)


def test_connect_times_on_loopback() -> None:
    with socket.socket() as listener, socket.socket() as closed:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        open_peer = Peer("open", "127.0.0.1", listener.getsockname()[1])
        refused = Peer("refused", "127.0.0.1", closed.getsockname()[1])
        unresolvable = Peer("nowhere", "nonexistent.invalid", 1)
        rtt, none_refused, none_unresolved = connect_times([open_peer, refused, unresolvable],
                                                           timeout_s=2.0)
    assert rtt is not None
    assert 0 < rtt < 0.5
    assert none_refused is None
    assert none_unresolved is None


def test_the_node_itself_is_not_pinged() -> None:
    probe = PingMeshProbe("a", (Peer("a", "127.0.0.1", 1),), attempts=1, timeout_s=0.1)
    assert probe.read().samples == ()


@dataclass(frozen=True)
class Namespace:
    name: str
    host_veth: str
    veth: str  # the pair's end inside the namespace
    host_ip: str
    ip: str


@pytest.fixture
def namespaces() -> Iterator[tuple[Namespace, Namespace]]:
    """Two network namespaces, each with a veth pair to the host (10.251.X.0/30, .4/30)."""
    needs_root()
    token = uuid.uuid4().hex[:6]
    subnet = 10 + os.getpid() % 200
    made: list[Namespace] = []
    try:
        for index, side in enumerate("ab"):
            base = 4 * index
            space = Namespace(f"dagpilot-test-{token}-{side}", f"dp{token}{side}",
                              f"dp{token}{side}n", f"10.251.{subnet}.{base + 1}",
                              f"10.251.{subnet}.{base + 2}")
            run("ip", "netns", "add", space.name)
            made.append(space)
            inside = space.veth
            run("ip", "link", "add", space.host_veth, "type", "veth", "peer", "name", inside)
            run("ip", "link", "set", inside, "netns", space.name)
            run("ip", "addr", "add", f"{space.host_ip}/30", "dev", space.host_veth)
            run("ip", "link", "set", space.host_veth, "up")
            for command in (("addr", "add", f"{space.ip}/30", "dev", inside),
                            ("link", "set", inside, "up"), ("link", "set", "lo", "up")):
                run("ip", "netns", "exec", space.name, "ip", *command)
        yield made[0], made[1]
    finally:
        links = run("ip", "-o", "link", "show")
        for space in made:  # deleting one end deletes the pair (at once; a namespace's later)
            if space.host_veth in links:
                run("ip", "link", "del", space.host_veth)
            run("ip", "netns", "del", space.name)
        assert not any(space.host_veth in run("ip", "-o", "link", "show") for space in made)
        assert not any(space.name in run("ip", "netns", "list") for space in made)


def test_mesh_between_namespaces(namespaces: tuple[Namespace, Namespace],
                                 tmp_path: Path) -> None:
    a, b = namespaces
    empty = str(tmp_path)  # no pods, no GPUs: only the mesh matters here
    peers: list[AgentProcess] = []
    host: AgentProcess | None = None
    try:
        for space, name in ((a, "a"), (b, "b")):
            peers.append(start_agent("--node-name", name, "--address", space.ip, "--port",
                                     str(AGENT_PORT), "--period", "1", "--cgroup-root", empty,
                                     netns=space.name))
        host = start_agent("--node-name", "host", "--address", "127.0.0.1", "--port", "0",
                           "--period", "0.5", "--cgroup-root", empty, "--peers",
                           f"a={a.ip}:{AGENT_PORT},b={b.ip}:{AGENT_PORT}")

        def rtt(series: Series, dst: str) -> float | None:
            return value(series, m.RTT_SECONDS, src="host", dst=dst)

        def loss(series: Series, dst: str) -> float | None:
            return value(series, m.PING_LOSS_RATIO, src="host", dst=dst)

        both = scrape_until(host.port, lambda s: loss(s, "a") == 0 and loss(s, "b") == 0)
        for dst in "ab":
            measured = rtt(both, dst)
            assert measured is not None
            assert 0 < measured < 0.02, f"a veth round trip of {measured * 1e3:.2f} ms"

        # b unreachable: its end of the link goes down, SYNs get no answer. (Not the host's end:
        # without its route the SYNs would leave by the default route, where a middlebox may
        # answer for any address, as this machine's does.)
        run("ip", "netns", "exec", b.name, "ip", "link", "set", b.veth, "down")
        cut = scrape_until(host.port, lambda s: loss(s, "b") == 1)
        assert rtt(cut, "b") is None  # absent, not the last value
        assert loss(cut, "a") == 0

        assert stop_agent(peers.pop(0)) == 0  # a's kernel answers, its agent does not: refused
        gone = scrape_until(host.port, lambda s: loss(s, "a") == 1)
        assert rtt(gone, "a") is None
    finally:
        for agent in [*peers, *([host] if host else [])]:
            stop_agent(agent)
