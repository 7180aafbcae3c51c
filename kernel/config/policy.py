"""A company's managed policy: which plugins, providers and package sources piko may use.

The system policy file (``/etc/piko/policy.json`` on Linux, see :func:`system_policy_paths`) and
the file named by ``$PIKO_POLICY`` are both enforced when they exist; neither user nor project
settings can loosen them. The format::

    {
      "plugins":        {"allow": ["acme.*"], "block": ["tools.bash"], "require": ["acme.audit"]},
      "providers":      {"allow": ["acme-gateway"], "block": ["openai"]},
      "models":         {"allow": ["acme-gateway/*", "anthropic/claude-*"], "block": ["*/*-preview"]},
      "tools":          {"block": ["bash"]},
      "mcpServers":     {"allow": ["docs", "npx -y @acme/*", "https://mcp.acme.com/*"]},
      "packageSources": {"allow": ["pip:acme-*", "git:git.acme.com/*"], "block": ["npm:*"]},
      "settings":       {"defaultProjectTrust": "never"},
      "allowProjectCode": false,
      "allowOverrides": false
    }

Entries are glob patterns (``*``, ``?``, ``[...]``). ``block`` always wins over ``allow``.
``plugins.allow`` applies to plugins that do not ship with piko (third-party distributions and
extension files); built-in plugins are only affected by ``plugins.block``, and the essential
ones cannot be blocked at all. ``plugins.require`` names plugins (exact names) that must load:
no settings file or flag can switch them off, and a run in which one is not loaded (not
installed, or blocked by the policy itself) does not start. ``packageSources`` patterns match a source's identity
(``pip:<name>``, ``git:<host>/<path>``, ``npm:<name>``, ``path:<absolute dir>``) or the source as
written. ``models`` patterns match ``provider/id``; ``tools`` patterns match tool names (a blocked
tool is never registered, so no run, extension or mode can activate it); ``mcpServers`` patterns
match a server's name, its command line or its URL. ``settings`` holds values that win over every
settings file and flag. ``allowProjectCode: false`` keeps every project untrusted. ``allowOverrides: false``
refuses every registration that would replace another plugin's tool, provider, mode or command
(``override=True``). A policy file that cannot be
read or parsed fails closed: third-party plugins, package sources and project code are disabled.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from piko.lib import jsonio

POLICY_ENV = "PIKO_POLICY"
SECTIONS = ("plugins", "providers", "packageSources", "models", "tools", "mcpServers")
# the policy file's section names and what a rule of each is about, for messages
_SECTION_NOUNS = {
    "plugins": "plugin", "providers": "provider", "packageSources": "package source",
    "models": "model", "tools": "tool", "mcpServers": "MCP server",
}  # fmt: skip


def system_policy_paths() -> list[Path]:
    """Where the managed policy lives on this platform."""
    if sys.platform == "win32":
        base = os.environ.get("ProgramData") or r"C:\ProgramData"
        return [Path(base) / "piko" / "policy.json"]
    if sys.platform == "darwin":
        return [Path("/Library/Application Support/piko/policy.json"), Path("/etc/piko/policy.json")]
    return [Path("/etc/piko/policy.json")]


def _matches(value: str, patterns: Iterable[str]) -> bool:
    patterns = list(patterns)
    if not patterns:
        return False
    import fnmatch  # only with a policy: it brings in ``re``

    return any(fnmatch.fnmatchcase(value, pattern) for pattern in patterns)


class _Plain:
    """Equality and a readable repr from the attributes (attrs would cost start-up time here)."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


class Rule(_Plain):
    """``block`` patterns and allowlists of one section (each allowlist must admit a value).

    ``allow_from[i]`` is the file of ``allow[i]``; ``block_from[pattern]`` the file of a block.
    """

    def __init__(
        self,
        allow: list[list[str]] | None = None,
        block: list[str] | None = None,
        allow_from: list[str] | None = None,
        block_from: dict[str, str] | None = None,
        require: list[str] | None = None,
        require_from: dict[str, str] | None = None,
    ) -> None:
        self.allow: list[list[str]] = allow or []
        self.block: list[str] = block or []
        self.allow_from: list[str] = allow_from or ["policy"] * len(self.allow)
        self.block_from: dict[str, str] = block_from or {}
        self.require: list[str] = require or []  # names that must be present (plugins only)
        self.require_from: dict[str, str] = require_from or {}

    def why_refused(self, *values: str) -> tuple[str, str] | None:
        """``("block" | "allow", file)`` of the first rule refusing ``values``; ``None`` if permitted."""
        present = [v for v in values if v]
        for pattern in self.block:
            if any(_matches(v, [pattern]) for v in present):
                return "block", self.block_from.get(pattern, "policy")
        for patterns, source in zip(self.allow, self.allow_from, strict=False):
            if not any(_matches(v, patterns) for v in present):
                return "allow", source
        return None

    def allowed(self, *values: str) -> bool:
        """True when every allowlist admits at least one of ``values`` (no allowlist: True)."""
        present = [v for v in values if v]
        return all(any(_matches(v, patterns) for v in present) for patterns in self.allow)

    def blocked(self, *values: str) -> bool:
        return any(_matches(v, self.block) for v in values if v)

    def permits(self, *values: str) -> bool:
        """False when any value is blocked, or when an allowlist admits none of them."""
        return not self.blocked(*values) and self.allowed(*values)

    def merge(self, other: Rule) -> Rule:
        """The stricter combination: blocks add up, every allowlist must agree."""
        return Rule(
            allow=[*self.allow, *other.allow],
            block=[*self.block, *other.block],
            allow_from=[*self.allow_from, *other.allow_from],
            block_from={**other.block_from, **self.block_from},
            require=[*self.require, *(n for n in other.require if n not in self.require)],
            require_from={**other.require_from, **self.require_from},
        )


class Policy(_Plain):
    """The effective policy (empty when no policy file exists)."""

    def __init__(
        self,
        paths: list[str] | None = None,
        plugins: Rule | None = None,
        providers: Rule | None = None,
        package_sources: Rule | None = None,
        allow_project_code: bool = True,
        errors: list[str] | None = None,
        allow_overrides: bool = True,
        models: Rule | None = None,
        tools: Rule | None = None,
        mcp_servers: Rule | None = None,
        settings: dict[str, Any] | None = None,
        settings_from: dict[str, str] | None = None,
    ) -> None:
        self.paths: list[str] = paths or []
        self.plugins = plugins or Rule()
        self.providers = providers or Rule()
        self.package_sources = package_sources or Rule()
        self.models = models or Rule()
        self.tools = tools or Rule()
        self.mcp_servers = mcp_servers or Rule()
        self.settings: dict[str, Any] = settings or {}
        self.settings_from: dict[str, str] = settings_from or {}
        self.allow_project_code = allow_project_code
        self.allow_overrides = allow_overrides
        self.errors: list[str] = errors or []

    @property
    def active(self) -> bool:
        return bool(self.paths or self.errors)

    @property
    def source(self) -> str:
        """The policy file(s), for messages."""
        return ", ".join(self.paths) or "policy"

    @property
    def failed(self) -> bool:
        """A policy file exists but could not be used: fail closed."""
        return bool(self.errors)

    def blocks_plugin(self, name: str, *, builtin: bool) -> bool:
        """Whether the plugin ``name`` must not load."""
        if self.failed and not builtin:
            return True
        if self.plugins.blocked(name):
            return True
        return not builtin and not self.plugins.allowed(name)

    def requires_plugin(self, name: str) -> bool:
        """Whether ``plugins.require`` names the plugin ``name`` (no setting may switch it off)."""
        return name in self.plugins.require

    def missing_required(self, loaded: Iterable[str]) -> str | None:
        """The line for the first required plugin not among ``loaded`` (None: all loaded)."""
        present = set(loaded)
        for name in self.plugins.require:
            if name not in present:
                source = self.plugins.require_from.get(name, "policy")
                return (
                    f"plugin '{name}' is required by plugins.require of the managed policy {source} "
                    "but is not loaded"
                )
        return None

    def allows_provider(self, name: str) -> bool:
        """Whether models of provider ``name`` may be used."""
        return self.providers.permits(name)

    def allows_model(self, provider: str, model_id: str) -> bool:
        """Whether the model ``provider/model_id`` may be used (its provider must be allowed too)."""
        return self.allows_provider(provider) and self.models.permits(f"{provider}/{model_id}")

    def allows_tool(self, name: str) -> bool:
        return self.tools.permits(name)

    def allows_mcp_server(self, name: str, target: str = "") -> bool:
        """Whether the MCP server ``name`` (started by command line or reached at URL ``target``) may be used."""
        if self.failed:
            return False
        return self.mcp_servers.permits(name, target)

    def violation(self, section: str, *values: str) -> str | None:
        """One line naming the rule and the file that refuse ``values`` (``None``: permitted).

        ``section`` is the policy file's section name (``"tools"``, ``"models"``, ...).
        """
        rule: Rule = getattr(self, _ATTRS[section])
        refused = rule.why_refused(*values)
        if refused is None:
            return None
        kind, source = refused
        verb = "is blocked by" if kind == "block" else "is not in"
        return (
            f"{_SECTION_NOUNS[section]} '{values[0]}' {verb} {section}.{kind} of the managed policy {source}"
        )

    def allows_source(self, *keys: str) -> bool:
        """Whether a package source (identity and/or source string) may be installed or loaded."""
        if self.failed:
            return False
        return self.package_sources.permits(*keys)

    def forbids_overrides(self) -> str | None:
        """The policy file(s) that forbid overrides (a policy that failed forbids them too), or ``None``."""
        return self.source if (not self.allow_overrides or self.failed) else None

    def merge(self, other: Policy) -> Policy:
        return Policy(
            paths=[*self.paths, *other.paths],
            plugins=self.plugins.merge(other.plugins),
            providers=self.providers.merge(other.providers),
            package_sources=self.package_sources.merge(other.package_sources),
            allow_project_code=self.allow_project_code and other.allow_project_code,
            errors=[*self.errors, *other.errors],
            allow_overrides=self.allow_overrides and other.allow_overrides,
            models=self.models.merge(other.models),
            tools=self.tools.merge(other.tools),
            mcp_servers=self.mcp_servers.merge(other.mcp_servers),
            settings={**other.settings, **self.settings},  # the first file read wins ($PIKO_POLICY first)
            settings_from={**other.settings_from, **self.settings_from},
        )


_ATTRS = {
    "plugins": "plugins", "providers": "providers", "packageSources": "package_sources",
    "models": "models", "tools": "tools", "mcpServers": "mcp_servers",
}  # fmt: skip


def _patterns(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where} must be a list of strings")
    return list(value)


def parse_policy(data: Any, path: str = "policy") -> Policy:
    """A :class:`Policy` from the parsed JSON of one file; raises ``ValueError`` when malformed."""
    if not isinstance(data, dict):
        raise ValueError("the policy must be a JSON object")
    known = {*SECTIONS, "settings", "allowProjectCode", "allowOverrides", "$schema", "comment"}
    unknown = sorted(k for k in data if k not in known)
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)}")
    rules: dict[str, Rule] = {}
    for section in SECTIONS:
        raw = data.get(section, {})
        if not isinstance(raw, dict):
            raise ValueError(f"'{section}' must be an object with 'allow' and/or 'block'")
        keys = ("allow", "block", "require") if section == "plugins" else ("allow", "block")
        extra = sorted(k for k in raw if k not in keys)
        if extra:
            raise ValueError(f"unknown key(s) in '{section}': {', '.join(extra)}")
        allow = [_patterns(raw["allow"], f"{section}.allow")] if "allow" in raw else []
        block = _patterns(raw.get("block", []), f"{section}.block")
        require = _patterns(raw.get("require", []), f"{section}.require")
        rules[section] = Rule(
            allow=allow, block=block, allow_from=[path] * len(allow), block_from=dict.fromkeys(block, path),
            require=require, require_from=dict.fromkeys(require, path),
        )  # fmt: skip
    forced = data.get("settings", {})
    if not isinstance(forced, dict):
        raise ValueError("'settings' must be an object of forced setting values")
    allow_code = data.get("allowProjectCode", True)
    if not isinstance(allow_code, bool):
        raise ValueError("'allowProjectCode' must be true or false")
    allow_overrides = data.get("allowOverrides", True)
    if not isinstance(allow_overrides, bool):
        raise ValueError("'allowOverrides' must be true or false")
    return Policy(
        paths=[path],
        plugins=rules["plugins"],
        providers=rules["providers"],
        package_sources=rules["packageSources"],
        allow_project_code=allow_code,
        allow_overrides=allow_overrides,
        models=rules["models"],
        tools=rules["tools"],
        mcp_servers=rules["mcpServers"],
        settings=forced,
        settings_from=dict.fromkeys(forced, path),
    )


def policy_paths() -> list[Path]:
    """The policy files to enforce: ``$PIKO_POLICY`` (when set) and the system file."""
    paths: list[Path] = []
    override = os.environ.get(POLICY_ENV, "").strip()
    if override:
        paths.append(Path(override).expanduser())
    paths.extend(system_policy_paths())
    unique: list[Path] = []
    for path in paths:
        if path not in unique:
            unique.append(path)
    return unique


def load_policy(paths: list[Path] | None = None) -> Policy:
    """Read and combine the policy files that exist (none: an empty policy)."""
    policy = Policy()
    for path in policy_paths() if paths is None else paths:
        try:
            data = jsonio.read_json_file(path)
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            policy = policy.merge(Policy(paths=[str(path)], errors=[f"{path}: {exc}"]))
            continue
        try:
            policy = policy.merge(parse_policy(data, str(path)))
        except ValueError as exc:
            policy = policy.merge(Policy(paths=[str(path)], errors=[f"{path}: {exc}"]))
    return policy
