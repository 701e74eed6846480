"""The hostile values structure-aware mutations put into documents, spelled per syntax.

Numbers: non-finite, huge (1e400 overflows to infinity, 2**63 leaves int64, 5,000 digits pass
Python's int-to-str limit), negative, tiny, fractional where a count is expected, and counts big
enough to exhaust memory or time when taken at face value. Strings: terminal escapes, NUL,
Unicode digits that pass `str.isdigit()`, bidirectional overrides, very long text, paths.
"""

from __future__ import annotations

import json

HUGE_DIGITS = "1" + "0" * 5000
HUGE_COUNTS = ("100000000", "1000000000", "2147483648", "9007199254740993")

NUMBERS = {
    "json": ("NaN", "Infinity", "-Infinity", "-1", "0", "-0.0", "1e400", "-1e400", "1e308",
             "9223372036854775808", "18446744073709551616", "-9223372036854775809", HUGE_DIGITS,
             "4.9e-324", "1e-400", "0.5", "31622400", *HUGE_COUNTS),
    # PyYAML reads 1e400 as a string (its floats need a dot) and 1.0e+400 as infinity
    "yaml": (".nan", ".inf", "-.inf", ".NaN", "-1", "0", "1e400", "1.0e+400", "-1.0e+400",
             "1.0e+308", "9223372036854775808", "-9223372036854775809", HUGE_DIGITS, "0x7fffffff",
             "0o777", "1_000_000_000", "4.9e-324", "0.5", "'1e999'", "0:05", *HUGE_COUNTS),
    "csv": ("nan", "NaN", "inf", "-inf", "Infinity", "-1", "0", "-0", "1e400", "1e308",
            "9223372036854775808", HUGE_DIGITS, "1e-400", "0.5", "1_000", "0x10", " 7 ", "",
            *HUGE_COUNTS),
    "toml": ("nan", "inf", "-inf", "+inf", "-nan", "-1", "0", "1e400", "1e308", "1e-400",
             "9223372036854775807", "9223372036854775808", HUGE_DIGITS, "5e-324", "0.0",
             "1_000_000_000", "0x7fffffff", *HUGE_COUNTS),
}

STRINGS = ("\x1b[31mred\x1b[0m", "\x1b]0;title\x07", "\x00", "\u00b2", "\u0663", "\uff11\uff12",
           "", " ", "A" * 5000, "-1", "nan", "1e999", "../../../etc/passwd", "\u202eevil",
           "a\nb", "{{workflow.name}}", "$(id)", "a,b", '"', "M2_\u00b2", "\ud7ff\ue000")

WRONG_TYPES = {
    "json": ("[]", "{}", "null", "true", '"x"', "[[]]", '{"": {}}', "[1, 2]", '"1"', "1"),
    "yaml": ("[]", "{}", "null", "~", "true", "yes", "x", "[Workflow]", "{a: 1}", '""',
             "2001-12-14", "!!binary aGVsbG8=", "!!set {a, b}", "!!python/object:os.system x"),
    "toml": ('"x"', "true", "[1]", "{a = 1}", "1979-05-27T07:32:00Z", "[]", '""'),
}

DEPTHS = (600, 1100, 5000, 20000, 100000)


def string_token(syntax: str, text: str) -> str:
    """`text` as a quoted string of the syntax (JSON escapes are valid YAML and TOML too)."""
    del syntax
    return json.dumps(text)


def deep_token(depth: int, kind: str) -> str:
    if kind == "object":
        return '{"a": ' * depth + "1" + "}" * depth
    return "[" * depth + "]" * depth


def laughs_token(levels: int = 9, width: int = 9) -> str:
    """A YAML "billion laughs": each anchor a list of `width` aliases of the one before."""
    parts = [f"&a0 [{', '.join(['lol'] * width)}]"]
    parts += [f"&a{level} [{', '.join([f'*a{level - 1}'] * width)}]" for level in range(1, levels)]
    return "[" + ", ".join(parts) + "]"


YAML_ALIASES = ("&r [*r]", "&m {k: *m}", laughs_token(), laughs_token(6, 12))
