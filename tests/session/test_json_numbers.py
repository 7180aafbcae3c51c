"""``jsonio.dumps`` writes what JavaScript's ``JSON.stringify`` writes (numbers above all)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest

from piko.lib import jsonio

# (value, JSON.stringify(value)) as printed by node 20.
KNOWN = [
    (1.5e-6, "0.0000015"),
    (1.4999999999999998e-06, "0.0000014999999999999998"),
    (1e-7, "1e-7"),
    (1.5e-7, "1.5e-7"),
    (0.000001, "0.000001"),
    (1e21, "1e+21"),
    (1e20, "100000000000000000000"),
    (1.2345678901234569e23, "1.2345678901234569e+23"),
    (0.1 + 0.2, "0.30000000000000004"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (3.0, "3"),
    (-0.0, "0"),
    (2.0**53, "9007199254740992"),
    (1e16, "10000000000000000"),
    (123456.789, "123456.789"),
    (-2.5e-9, "-2.5e-9"),
    (float("nan"), "null"),
    (float("inf"), "null"),
]


@pytest.mark.parametrize(("value", "expected"), KNOWN)
def test_numbers_as_javascript_writes_them(value: float, expected: str) -> None:
    assert jsonio.js_number(value) == expected
    assert jsonio.dumps([value]) == f"[{expected}]"


def test_structures_strings_and_lone_surrogates() -> None:
    assert (
        jsonio.dumps({"b": 1.0, "a": [2.5e-7, "x:1.0,"], "c": {"d": -0.0}})
        == '{"b":1,"a":[2.5e-7,"x:1.0,"],"c":{"d":0}}'
    )
    assert jsonio.dumps({"s": "é ✓ \u2028 \x7f \x00\n"}) == '{"s":"é ✓ \u2028 \x7f \\u0000\\n"}'
    assert jsonio.dumps({"broken": "a\ud800b", "n": 1.0}) == '{"broken":"a\\ud800b","n":1}'
    assert jsonio.dumpb({"k": 1}) == b'{"k":1}' and jsonio.dumps(2.0) == "2" and jsonio.dumps(1e-7) == "1e-7"
    with pytest.raises(TypeError):
        jsonio.dumps({"x": object()})


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_many_numbers_against_node() -> None:
    rng = random.Random(1)
    values: list[float] = []
    for _ in range(2000):
        values.append(rng.random() * 10 ** rng.randint(-30, 30) * rng.choice([1, -1]))
        values.append(float(rng.randint(-(10**6), 10**6)))
        values.append(rng.randint(1, 10**6) / 10 ** rng.randint(0, 12))
    script = (
        'const a=JSON.parse(require("fs").readFileSync(0,"utf8"));process.stdout.write(JSON.stringify(a))'
    )
    node = subprocess.run(
        ["node", "-e", script], input=json.dumps(values), capture_output=True, text=True, check=True
    )
    assert jsonio.dumps(values) == node.stdout
