"""Regenerate ``plugins/providers/data/models.json`` from an installed pi's built model catalog.

Usage::

    python scripts/regenerate_models.py [PI_PREFIX] [-o OUTPUT] [--check]

``PI_PREFIX`` is a directory holding ``node_modules/@mariozechner/pi-ai`` (an npm prefix where
``npm install @mariozechner/pi-coding-agent`` ran; default ``/work/scratch/pi``) or that
``node_modules`` folder itself. Node.js must be on ``PATH``: the script imports pi-ai's built
modules with ``node`` to read exactly what pi reads at run time, and reads the rest of the facts
(environment variables of special cases) from the built JavaScript text.

What is taken from where (all under ``@mariozechner/pi-ai/dist`` unless said otherwise):

* models: ``models.generated.js`` (``MODELS``), in its order; the ``provider`` field is dropped
  (it always equals the provider key, which is checked);
* ``envKeys``: ``env-api-keys.js`` ``findEnvKeys(provider)``, called with every upper-case name
  of that file set in the environment, so the list and its precedence are pi's own;
* ``oauth``: the ids of ``utils/oauth/index.js`` ``getOAuthProviders()``;
* ``name``: ``@mariozechner/pi-coding-agent/dist/core/provider-display-names.js``, else the
  OAuth provider's name, else the id;
* ``extraEnv``: other environment variables pi reads for a provider's auth or endpoint: those
  of its branch in ``getEnvApiKey`` (and the helpers that branch calls), the ``{NAME}``
  placeholders of its base URLs, and those of its own API module ``providers/<provider>.js``;
* ``defaultBaseUrl``: the base URL all of a provider's models share (``null`` when they differ,
  are empty, or are templates); ``apis``: the sorted wire APIs of its models.

``--check`` compares instead of writing and exits 1 when the file would change.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO / "plugins" / "providers" / "data" / "models.json"
DEFAULT_PREFIX = Path("/work/scratch/pi073")
MODEL_KEY_ORDER = (
    "id", "name", "api", "baseUrl", "reasoning", "input", "cost", "contextWindow", "maxTokens",
    "headers", "compat", "thinkingLevelMap",
)  # fmt: skip
# Environment variables that are not about one provider (proxies, pi's own switches).
GENERIC_ENV = re.compile(r"^(PI_.*|HTTPS?_PROXY|NO_PROXY)$")

# Runs in node: imports the built modules and prints the raw facts as JSON.
NODE_DUMP = r"""
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [aiDist, agentDist] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(p).href);
const { MODELS } = await load(`${aiDist}/models.generated.js`);
const envSource = readFileSync(`${aiDist}/env-api-keys.js`, "utf8");
for (const name of new Set(envSource.match(/\b[A-Z][A-Z0-9_]{2,}\b/g) ?? [])) process.env[name] = "x";
const env = await load(`${aiDist}/env-api-keys.js`);
const oauth = await load(`${aiDist}/utils/oauth/index.js`);
let displayNames = {};
try {
  displayNames = (await load(`${agentDist}/core/provider-display-names.js`)).BUILT_IN_PROVIDER_DISPLAY_NAMES;
} catch {}
const envKeys = {};
for (const provider of Object.keys(MODELS)) envKeys[provider] = env.findEnvKeys(provider) ?? [];
const oauthProviders = oauth.getOAuthProviders().map((p) => ({ id: p.id, name: p.name }));
process.stdout.write(JSON.stringify({ models: MODELS, envKeys, oauthProviders, displayNames }));
"""


def find_packages(prefix: Path) -> tuple[Path, Path]:
    """The ``pi-ai`` and ``pi-coding-agent`` package folders under ``prefix``."""
    for base in (prefix / "node_modules" / "@mariozechner", prefix / "@mariozechner", prefix):
        ai = base / "pi-ai"
        if (ai / "dist" / "models.generated.js").is_file():
            return ai, base / "pi-coding-agent"
    raise SystemExit(f"error: no @mariozechner/pi-ai with dist/models.generated.js under {prefix}")


def node_dump(ai: Path, agent: Path) -> dict[str, Any]:
    node = shutil.which("node")
    if node is None:
        raise SystemExit("error: node is not on PATH (it reads pi-ai's built modules)")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "dump.mjs"
        script.write_text(NODE_DUMP, encoding="utf-8")
        done = subprocess.run(
            [node, str(script), str(ai / "dist"), str(agent / "dist")],
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"error: node failed:\n{done.stderr}")
    return json.loads(done.stdout)  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------
# Environment variables read from the built JavaScript text
# ---------------------------------------------------------------------------

_ENV_REF = re.compile(
    r'process\.env\.([A-Z][A-Z0-9_]*)|process\.env\["([A-Z][A-Z0-9_]*)"\]|getProcEnv\("([A-Z][A-Z0-9_]*)"\)'
)


def env_names(text: str) -> list[str]:
    """Environment variable names ``text`` reads, in order of first appearance."""
    names: dict[str, None] = {}
    for match in _ENV_REF.finditer(text):
        names[next(g for g in match.groups() if g)] = None
    return list(names)


def _block_at(text: str, start: int) -> str:
    """The brace-balanced block whose ``{`` is at or after ``start``."""
    open_at = text.index("{", start)
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[open_at : i + 1]
    return text[open_at:]


def special_case_env(env_source: str) -> dict[str, list[str]]:
    """provider -> variables read by its ``if (provider === ...)`` branch of ``getEnvApiKey``."""
    start = env_source.find("function getEnvApiKey")
    if start < 0:
        return {}
    body = _block_at(env_source, start)
    functions = {m.group(1): m.start() for m in re.finditer(r"function (\w+)\s*\(", env_source)}
    out: dict[str, list[str]] = {}
    for match in re.finditer(r'if \(provider === "([^"]+)"\)', body):
        block = _block_at(body, match.end())
        names = env_names(block)
        for called in re.findall(r"\b(\w+)\(\)", block):
            if called in functions:
                names += env_names(_block_at(env_source, functions[called]))
        out[match.group(1)] = list(dict.fromkeys(names))
    return out


def extra_env(provider: str, models: list[dict[str, Any]], ai_dist: Path, special: dict[str, list[str]],
              all_env_keys: set[str]) -> list[str]:  # fmt: skip
    names = list(special.get(provider, []))
    for model in models:
        names += re.findall(r"\{([A-Z][A-Z0-9_]*)\}", model.get("baseUrl") or "")
    module = ai_dist / "providers" / f"{provider}.js"
    if module.is_file():
        names += env_names(module.read_text(encoding="utf-8"))
    return [n for n in dict.fromkeys(names) if not GENERIC_ENV.match(n) and n not in all_env_keys]


# ---------------------------------------------------------------------------
# Building the catalog
# ---------------------------------------------------------------------------


def ordered_model(model: dict[str, Any]) -> dict[str, Any]:
    out = {k: model[k] for k in MODEL_KEY_ORDER if k in model}
    out.update({k: v for k, v in model.items() if k not in out and k != "provider"})
    return out


def integrity_of(ai: Path) -> str | None:
    """The npm lock file's integrity of the package, when a lock file is next to it."""
    for lock in (ai.parents[2] / "package-lock.json", ai.parents[1] / ".package-lock.json"):
        try:
            data = json.loads(lock.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        entry = data.get("packages", {}).get("node_modules/@mariozechner/pi-ai", {})
        if entry.get("integrity"):
            return str(entry["integrity"])
    return None


def build(prefix: Path) -> dict[str, Any]:
    ai, agent = find_packages(prefix)
    ai_dist = ai / "dist"
    dump = node_dump(ai, agent)
    package = json.loads((ai / "package.json").read_text(encoding="utf-8"))
    generated = ai_dist / "models.generated.js"
    digest = base64.b64encode(hashlib.sha512(generated.read_bytes()).digest()).decode()
    special = special_case_env((ai_dist / "env-api-keys.js").read_text(encoding="utf-8"))
    oauth_names = {p["id"]: p["name"] for p in dump["oauthProviders"]}
    all_env_keys = {k for keys in dump["envKeys"].values() for k in keys}
    source = {
        "repo": re.sub(r"^git\+|\.git$", "", package.get("repository", {}).get("url", "")),
        "package": f"{package['name']}@{package['version']}",
        "path": "dist/models.generated.js",
        "pathSha512": digest,
        "packageIntegrity": integrity_of(ai),
        "envKeysPath": "dist/env-api-keys.js",
        "oauthPath": "dist/utils/oauth/index.js",
        "displayNamesPath": "@mariozechner/pi-coding-agent/dist/core/provider-display-names.js",
        "retrievedVia": "npm registry package, read by scripts/regenerate_models.py",
        "generatedAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    providers: dict[str, Any] = {}
    for provider, by_id in dump["models"].items():
        models = list(by_id.values())
        for model in models:
            if model.get("provider") != provider:
                raise SystemExit(
                    f"error: model {model.get('id')} says provider {model.get('provider')}, not {provider}"
                )
        urls = {m.get("baseUrl") or "" for m in models}
        only = next(iter(urls)) if len(urls) == 1 else ""
        entry: dict[str, Any] = {
            "name": dump["displayNames"].get(provider) or oauth_names.get(provider) or provider,
            "defaultBaseUrl": only if only and "{" not in only else None,
            "apis": sorted({m["api"] for m in models}),
            "envKeys": dump["envKeys"].get(provider, []),
            "oauth": provider in oauth_names,
        }
        extra = extra_env(provider, models, ai_dist, special, set(entry["envKeys"]) | all_env_keys)
        if extra:
            entry["extraEnv"] = extra
        entry["models"] = [ordered_model(m) for m in models]
        providers[provider] = entry
    return {"source": source, "providers": providers}


def render(catalog: dict[str, Any]) -> str:
    return json.dumps(catalog, indent=1, ensure_ascii=False) + "\n"


def _without_date(text: str) -> Any:
    data = json.loads(text)
    data.get("source", {}).pop("generatedAt", None)
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "prefix", nargs="?", type=Path, default=DEFAULT_PREFIX, help="npm prefix of an installed pi"
    )
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--check", action="store_true", help="exit 1 if the output would change")
    args = parser.parse_args(argv)
    catalog = build(args.prefix)
    text = render(catalog)
    count = sum(len(p["models"]) for p in catalog["providers"].values())
    summary = f"{catalog['source']['package']}: {len(catalog['providers'])} providers, {count} models"
    if args.check:
        try:
            current = args.output.read_text(encoding="utf-8")
        except OSError:
            current = "{}"
        same = _without_date(current) == _without_date(text)
        print(f"{summary}: {'up to date' if same else 'differs from ' + str(args.output)}")
        return 0 if same else 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(f"{summary} -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
