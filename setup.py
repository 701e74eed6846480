"""The compiled part of dagpilot: the native simulator core (src/dagpilot/native/csrc)."""

from pathlib import Path

from setuptools import Extension, setup

SOURCES = sorted(str(path) for path in Path("src/dagpilot/native/csrc").glob("*.c"))

setup(ext_modules=[Extension(
    "dagpilot.native._core", sources=SOURCES,
    depends=[str(path) for path in Path("src/dagpilot/native/csrc").glob("*.h")],
    # no fused multiply-adds: every float operation rounds as it does in Python
    extra_compile_args=["-O2", "-ffp-contract=off", "-Wall", "-Wextra"])])
