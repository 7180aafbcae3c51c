"""Benchmark: loading the model catalog (969 models) into the model registry, and `--list-models`.

Measures, in a fresh interpreter per run (nothing cached):

* ``read``: parsing ``plugins/providers/data/models.json`` (orjson through ``piko.lib.jsonio``);
* ``build``: turning it into ``ProviderConfig``/``Model`` objects;
* ``register``: ``ModelRegistry.add_provider`` for every provider;
* ``registry``: ``app.model_registry.load()`` on a booted app (every provider plugin's hook:
  catalog, a models.json with a custom provider, extensions), then ``available_models()``;
* ``list-models``: ``pi --list-models`` end to end (process start to exit) with one key set.

    .venv/bin/python benchmarks/bench_catalog.py [--runs 15] [--json]

Target (issue "LLM layer"): the whole catalog in the registry in under 20 ms (``registry``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_MS = 20.0

CHILD = """
import json, os, sys, time
t0 = time.perf_counter()
from piko.plugins.providers import catalog
from piko.lib.jsonio import read_json_file
from piko.models.registry import ModelRegistry
import piko.data.messages
t1 = time.perf_counter()
data = read_json_file(catalog.CATALOG_PATH)
t2 = time.perf_counter()
configs = catalog.provider_configs(data)
t3 = time.perf_counter()
class _App: pm = None
registry = ModelRegistry(_App())
registry._loaded = True  # filled by hand below: no plugin hooks to ask
for config in configs:
    registry.add_provider(config)
registry.all_models()  # the catalog's models are built when first needed: build them all
t4 = time.perf_counter()
from piko.app.application import App
app = App(cwd=os.getcwd()).boot()
t5 = time.perf_counter()
app.model_registry.load()
available = app.model_registry.available_models()
t6 = time.perf_counter()
print(json.dumps({"read": (t2 - t1) * 1e3, "build": (t3 - t2) * 1e3, "register": (t4 - t3) * 1e3,
                  "registry": (t6 - t5) * 1e3, "models": len(app.model_registry.all_models()),
                  "available": len(available)}))
"""

MODELS_JSON = {
    "providers": {
        "ollama": {
            "baseUrl": "http://127.0.0.1:11434/v1",
            "api": "openai-completions",
            "apiKey": "ollama",
            "models": [{"id": "qwen2.5-coder:7b"}, {"id": "llama3.1:8b"}],
        },
        "openrouter": {"modelOverrides": {"anthropic/claude-sonnet-4": {"contextWindow": 500000}}},
    }
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        agent = Path(tmp) / "agent"
        agent.mkdir()
        (agent / "models.json").write_text(json.dumps(MODELS_JSON), encoding="utf-8")
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "ANTHROPIC_API_KEY": "sk-bench"}
        rows = []
        for _ in range(args.runs):
            out = subprocess.run(
                [sys.executable, "-c", CHILD], env=env, cwd=tmp, capture_output=True, text=True, check=True
            )
            rows.append(json.loads(out.stdout))
        walls = []
        for _ in range(args.runs):
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "piko", "--list-models"],
                env=env,
                cwd=tmp,
                capture_output=True,
                check=True,
            )
            walls.append((time.perf_counter() - started) * 1e3)
    result = {
        key: statistics.median(r[key] for r in rows) for key in ("read", "build", "register", "registry")
    }
    result["list-models"] = statistics.median(walls)
    result["models"] = rows[0]["models"]
    result["available"] = rows[0]["available"]
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"catalog: {result['models']} models registered, {result['available']} available (median of {args.runs} runs)"
        )
        for key in ("read", "build", "register", "registry", "list-models"):
            print(f"  {key:<12}{result[key]:8.2f} ms")
        print(
            f"target: registry < {TARGET_MS:.0f} ms -> {'ok' if result['registry'] < TARGET_MS else 'MISSED'}"
        )
    return 0 if result["registry"] < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
