from __future__ import annotations

import math
from pathlib import Path

import pytest

from dagpilot.core.config import PhysicsSwitches, SimSettings, load_settings
from dagpilot.core.errors import InvalidInput


def test_master_switch_turns_every_effect_off() -> None:
    on = PhysicsSwitches()
    assert on.effective() is on
    off = SimSettings().without_physics().physics
    assert off.enabled is False and off.memory_bandwidth is True  # the flags are kept...
    effective = off.effective()  # ...but none of them counts
    assert not any((effective.memory_bandwidth, effective.storage_io, effective.network,
                    effective.gpu_pcie, effective.memory, effective.faults))


def test_sim_settings_load_from_toml(tmp_path: Path) -> None:
    path = tmp_path / "sim.toml"
    path.write_text("[sim]\npoll_interval_s = 2\nhorizon_s = 3600\n"
                    "[sim.physics]\nnetwork = false\n[sim.effects]\nmembw_knee = 0.7\n"
                    "[sim.faults]\nrate_per_node_hour = 0\n")
    sim = load_settings(path).sim
    assert sim.poll_interval_s == 2.0 and sim.horizon_s == 3600.0
    assert sim.physics.network is False and sim.physics.storage_io is True
    assert sim.effects.membw_knee == 0.7
    assert sim.faults.rate_per_node_hour == 0.0
    assert math.isinf(SimSettings().horizon_s)


def test_unknown_sim_setting_is_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[sim.physics]\nwarp = true\n")
    with pytest.raises(InvalidInput, match=r"sim\.physics\.warp"):
        load_settings(path)
