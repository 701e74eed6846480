"""Every setting has a range, checked when a settings file is loaded: NaN, negative intervals
and runaway limits are an error naming the file, the [section], the section.key and the
range, never a traceback later (issue 14, defect 11). docs/SETTINGS.md lists every range."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from dagpilot.core.config import Settings, load_settings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.setting_ranges import ORDERED, RANGES, Range, flattened

DOC = Path(__file__).parents[2] / "docs" / "SETTINGS.md"


def leaves() -> dict[str, object]:
    return dict(flattened(Settings(), ""))


def test_every_setting_but_the_switches_has_a_range_and_every_range_a_setting() -> None:
    numbers = {name for name, value in leaves().items() if not isinstance(value, bool)}
    assert numbers == set(RANGES)
    assert {name for pair in ORDERED for name in pair} <= numbers


def test_the_defaults_are_in_range() -> None:
    for name, value in leaves().items():
        if name in RANGES:
            assert RANGES[name].admits(value), name  # type: ignore[arg-type]


def test_the_documentation_lists_every_setting_with_its_default_and_range() -> None:
    rows = {match[1]: match[0] for match in re.finditer(r"^\| `([a-z_.0-9]+)` \|.*$",
                                                         DOC.read_text(), re.MULTILINE)}
    assert set(rows) == set(leaves())
    for name, allowed in RANGES.items():
        assert f"| {allowed} |" in rows[name], name


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "settings.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("text", "field", "shown"), [
    ("[loaders]\nseed = -1\n", "loaders.seed", "-1"),
    ("[loaders]\nseed = 4294967296\n", "loaders.seed", "4294967296"),
    ("[sim]\npoll_interval_s = nan\n", "sim.poll_interval_s", "nan"),
    ("[sim]\npoll_interval_s = 9e-324\n", "sim.poll_interval_s", "9.88131292e-324"),
    ("[sim]\nstartup_sigma = nan\n", "sim.startup_sigma", "nan"),
    ("[sim]\nsubmit_latency_s = -100\n", "sim.submit_latency_s", "-100"),
    ("[sim]\nstartup_slots_per_node = -1\n", "sim.startup_slots_per_node", "-1"),
    ("[validator]\nmax_gap_s = nan\n", "validator.max_gap_s", "nan"),
    ("[validator]\nmax_gap_s = 0\n", "validator.max_gap_s", "0"),
    ("[sim]\nsample_interval_s = 1e-9\n", "sim.sample_interval_s", "1e-09"),
    ("[sim]\nsample_interval_s = 0\n", "sim.sample_interval_s", "0"),
    ("[sim]\nhorizon_s = 0\n", "sim.horizon_s", "0"),
    ("[sim]\nhorizon_s = -inf\n", "sim.horizon_s", "-inf"),
    ("[sim]\nretry_backoff_max_s = inf\n", "sim.retry_backoff_max_s", "inf"),
    ("[sim]\noom_retry_limit = 1000000\n", "sim.oom_retry_limit", "1000000"),
    ("[sim.storage]\ndrift_interval_s = -300\n", "sim.storage.drift_interval_s", "-300"),
    ("[sim.storage]\ndrift_interval_s = 1e-6\n", "sim.storage.drift_interval_s", "1e-06"),
    ("[sim.storage]\ncollapse_mean_s = 0\n", "sim.storage.collapse_mean_s", "0"),
    ("[sim.faults]\nrate_per_node_hour = nan\n", "sim.faults.rate_per_node_hour", "nan"),
    ("[sim.effects]\nrtt_same_rack_ms = 0\n", "sim.effects.rtt_same_rack_ms", "0"),
    ("[sim.effects]\nrtt_same_rack_ms = 5e-324\n", "sim.effects.rtt_same_rack_ms",
     "4.94065646e-324"),
    ("[sim.effects]\nio_level2_factor = 0.5\n", "sim.effects.io_level2_factor", "0.5"),
])
def test_a_value_out_of_range_names_file_section_key_and_range(
        tmp_path: Path, text: str, field: str, shown: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(InvalidInput) as caught:
        load_settings(path)
    error = caught.value
    section = field.rpartition(".")[0]
    assert (error.file, error.record, error.field) == (str(path), f"[{section}]", field)
    assert error.message == f"{shown} is out of range: it must be {RANGES[field]}"


@pytest.mark.parametrize(("text", "field", "value"), [
    ("[sim]\nhorizon_s = inf\n", "sim.horizon_s", float("inf")),
    ("[sim.storage]\ndrift_interval_s = 0\n", "sim.storage.drift_interval_s", 0.0),  # off
    ("[sim]\npoll_interval_s = 0\n", "sim.poll_interval_s", 0.0),  # the engine acts at once
    ("[loaders]\nseed = 4294967295\n", "loaders.seed", 4294967295),
])
def test_the_ends_of_a_range_and_off_values_load(tmp_path: Path, text: str, field: str,
                                                 value: float) -> None:
    assert dict(flattened(load_settings(write(tmp_path, text)), ""))[field] == value


def test_faults_that_keep_nodes_down_most_of_the_time_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "[sim.faults]\nrate_per_node_hour = 1000\n")  # 300 s outages
    with pytest.raises(InvalidInput) as caught:
        load_settings(path)
    assert (caught.value.field, caught.value.message) == (
        "sim.faults.rate_per_node_hour",
        "1000 an hour of 300 s each keep a node down 99 % of the time; at most 50 %")
    brief = write(tmp_path, "[sim.faults]\nrate_per_node_hour = 30\nmean_duration_s = 20\n")
    assert load_settings(brief).sim.faults.rate_per_node_hour == 30.0  # down 14 %


def test_an_integer_too_large_for_a_float_setting_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "[sim.storage]\ncollapse_max_iops = 1" + "0" * 400 + "\n")
    with pytest.raises(InvalidInput) as caught:
        load_settings(path)
    assert (caught.value.field, caught.value.message) == (
        "sim.storage.collapse_max_iops", "a number of 401 digits is too large for this setting")


def test_a_pair_the_wrong_way_round_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "[sim.storage]\ncollapse_min_iops = 3000\n")
    with pytest.raises(InvalidInput) as caught:
        load_settings(path)
    assert caught.value.field == "sim.storage.collapse_max_iops"
    assert "below sim.storage.collapse_min_iops = 3000" in caught.value.message


def test_a_range_describes_itself() -> None:
    assert str(Range(0.0, 86_400.0)) == "from 0 to 86400"
    assert str(Range(0.0, 1e9, above=True)) == "above 0 and at most 1e+09"
    assert str(Range(0.0, float("inf"), above=True)) == "above 0 with no upper limit (inf)"
    assert str(Range(1.0, 1e9, off=0.0)) == "0 (off), or from 1 to 1e+09"
    assert not Range(0.0, 1.0).admits(float("nan"))
    assert Range(1.0, 2.0, off=0.0).admits(0.0) and not Range(1.0, 2.0, off=0.0).admits(0.5)


def test_settings_in_range_load_unchanged(tmp_path: Path) -> None:
    path = write(tmp_path, "[sim]\nsample_interval_s = 0.1\nstartup_slots_per_node = 1024\n")
    assert load_settings(path) == dataclasses.replace(
        Settings(), sim=dataclasses.replace(Settings().sim, sample_interval_s=0.1,
                                            startup_slots_per_node=1024))
