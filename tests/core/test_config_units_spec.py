from __future__ import annotations

from pathlib import Path

import pytest

from dagpilot.core import units
from dagpilot.core.config import Settings, load_settings
from dagpilot.core.errors import InvalidInput, SpecError
from dagpilot.core.spec import split_spec


@pytest.mark.parametrize(
    ("text", "value"),
    [("500m", 0.5), ("2", 2.0), (4, 4.0), ("1Gi", 2**30), ("1G", 1e9), ("128Mi", 128 * 2**20),
     ("1.5Ki", 1536.0), ("1e3", 1000.0), ("100k", 1e5)],
)
def test_quantities(text: str | int, value: float) -> None:
    assert units.quantity(text) == value


@pytest.mark.parametrize("text", ["", "abc", "1Zi", "--1", "1 Gi"])
def test_bad_quantities(text: str) -> None:
    with pytest.raises(ValueError, match="quantity"):
        units.quantity(text)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90.0), ("5m", 300.0), ("1h30m", 5400.0), ("250ms", 0.25), ("42", 42.0), (7, 7.0),
     ("1d", 86_400.0)],
)
def test_durations(text: str | int, seconds: float) -> None:
    assert units.duration_s(text) == seconds


@pytest.mark.parametrize("text", ["", "5 minutes", "1h-5m", "m5"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ValueError, match="duration"):
        units.duration_s(text)


def test_settings_defaults_and_overrides(tmp_path: Path) -> None:
    assert load_settings(None) == Settings()
    path = tmp_path / "s.toml"
    path.write_text("[loaders]\ndefault_cpu = 2\nseed = 7\n[validator]\nmax_gap_s = 60\n")
    settings = load_settings(path)
    assert settings.loaders.default_cpu == 2.0
    assert settings.loaders.seed == 7
    assert settings.validator.max_gap_s == 60.0


@pytest.mark.parametrize(
    ("text", "field"),
    [("[loaders]\ndefault_cpus = 2\n", "loaders.default_cpus"),
     ("[loaders]\ndefault_cpu = 'two'\n", "loaders.default_cpu"),
     ("loaders = 3\n", "loaders"),
     ("[nothing]\n", "nothing")],
)
def test_bad_settings_name_the_field(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(InvalidInput) as caught:
        load_settings(path)
    assert caught.value.field == field
    assert caught.value.file == str(path)


def test_settings_file_that_is_not_toml(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[loaders\n")
    with pytest.raises(InvalidInput, match="not valid TOML"):
        load_settings(path)


def test_split_spec() -> None:
    assert split_spec("cws:a/b:c", ["cws", "tpch"]) == ("cws", "a/b:c")
    with pytest.raises(SpecError, match="unknown kind 'csv'; known: cws, tpch"):
        split_spec("csv:x", ["cws", "tpch"])
    with pytest.raises(SpecError, match="KIND:ARGUMENT"):
        split_spec("cws", ["cws"])
