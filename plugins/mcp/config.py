"""Reading ``mcp.json``: the user and project files merged, each entry checked, values resolved."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from piko.lib.records import Record
from piko.lib.records import field
from piko.plugins.mcp.config_files import project_config_path
from piko.plugins.mcp.config_files import user_config_path

EXPOSURES = ("codemode", "deferred", "direct", "hidden")
EXPOSURE_ALIASES = {"codemode-deferred": "codemode"}
DEFAULT_EXPOSURE = "codemode"
DEFAULT_TIMEOUT_S = 60.0
_SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_TEMPLATE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# the keys an override entry (no command, url or type) may change in a server of another file
OVERRIDE_KEYS = ("enabled", "exposure", "toolExposure")


class ServerConfig(Record):
    """One checked ``mcpServers`` entry: ``kind`` is ``stdio`` or ``http``; ``raw`` is the entry."""

    name: str
    kind: str
    raw: dict[str, Any]
    source: str  # the file that defines it (or "extension:<name>")
    scope: str  # "global", "project" or "extension"

    @property
    def enabled(self) -> bool:
        return self.raw.get("enabled", True) is not False

    @property
    def exposure(self) -> str:
        return str(self.raw.get("exposure") or DEFAULT_EXPOSURE)

    @property
    def tool_exposure(self) -> dict[str, str]:
        value = self.raw.get("toolExposure")
        return dict(value) if isinstance(value, dict) else {}

    @property
    def timeout_s(self) -> float:
        value = self.raw.get("timeout")
        return float(value) if isinstance(value, int | float) and value > 0 else DEFAULT_TIMEOUT_S

    @property
    def description(self) -> str | None:
        value = self.raw.get("description")
        return value.strip() if isinstance(value, str) and value.strip() else None

    @property
    def transport(self) -> str:
        """How ``pi mcp list`` names the transport: the command line or the URL."""
        if self.kind == "http":
            return str(self.raw["url"])
        return " ".join([str(self.raw["command"]), *[str(a) for a in self.raw.get("args") or []]])


class McpConfig(Record):
    """Every server of the merged files in file order, and the errors of the entries left out."""

    servers: dict[str, ServerConfig] = field(factory=dict)
    errors: list[str] = field(factory=list)
    auto_enable_codemode: bool = True


def resolve_exposure_alias(value: Any) -> Any:
    return EXPOSURE_ALIASES.get(value, value) if isinstance(value, str) else value


def _resolve_aliases(entry: dict[str, Any]) -> dict[str, Any]:
    out = dict(entry)
    if "exposure" in out:
        out["exposure"] = resolve_exposure_alias(out["exposure"])
    if isinstance(out.get("toolExposure"), dict):
        out["toolExposure"] = {k: resolve_exposure_alias(v) for k, v in out["toolExposure"].items()}
    return out


def is_override(entry: dict[str, Any]) -> bool:
    """An entry with no ``command``, ``url`` or ``type`` changes only a server defined elsewhere."""
    return "command" not in entry and "url" not in entry and "type" not in entry


def _is_string_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _check_exposures(entry: dict[str, Any]) -> str | None:
    names = ", ".join(f'"{e}"' for e in EXPOSURES)
    exposure = entry.get("exposure")
    if exposure is not None and exposure not in EXPOSURES:
        return f"exposure must be one of {names}"
    tools = entry.get("toolExposure")
    if tools is not None:
        if not isinstance(tools, dict):
            return "toolExposure must map tool names to exposures"
        for tool, value in tools.items():
            if value not in EXPOSURES:
                return f'toolExposure "{tool}" must be one of {names}'
    return None


def _check_base(entry: dict[str, Any]) -> str | None:
    enabled, timeout, description = entry.get("enabled"), entry.get("timeout"), entry.get("description")
    if enabled is not None and not isinstance(enabled, bool):
        return "enabled must be a boolean"
    if description is not None and not isinstance(description, str):
        return "description must be a string"
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
    ):
        return "timeout must be a positive number of seconds"
    return None


def _check_http(entry: dict[str, Any], url: str) -> str | None:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        return "url must be an http or https URL"
    if "headers" in entry and not _is_string_map(entry["headers"]):
        return "headers must map names to strings"
    if "oauth" in entry:
        return _check_oauth(entry["oauth"])
    return None


_LOOPBACK = ("localhost", "127.0.0.1", "::1")  # as urlsplit gives hostnames
CLIENT_REGISTRATIONS = ("auto", "dcr", "cimd")


def _check_oauth(value: Any) -> str | None:
    """pi 1.6's checks of an ``oauth`` object, with its wording."""
    from urllib.parse import urlsplit

    if not isinstance(value, dict):
        return "oauth must be an object"
    for key in ("clientId", "clientSecret"):
        if key in value and not isinstance(value[key], str):
            return f"oauth.{key} must be a string"
    port = value.get("callbackPort")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535):
        return "oauth.callbackPort must be a port number"
    url = value.get("callbackUrl")
    if url is not None:
        parts = urlsplit(url) if isinstance(url, str) else None
        loopback = parts is not None and parts.scheme == "http" and parts.hostname in _LOOPBACK
        if not loopback or parts is None or parts.query or parts.fragment:
            return "oauth.callbackUrl must be an http URI on localhost, 127.0.0.1, or [::1] without query or fragment"
        if parts.port and port is not None and parts.port != port:
            return "oauth.callbackUrl and oauth.callbackPort name different ports"
    if "scope" in value and not isinstance(value["scope"], str):
        return "oauth.scope must be a string"
    name = value.get("clientName")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        return "oauth.clientName must be a non-empty string"
    registration = value.get("clientRegistration")
    if registration is not None and registration not in CLIENT_REGISTRATIONS:
        return 'oauth.clientRegistration must be "auto", "dcr", or "cimd"'
    document = value.get("clientMetadataUrl")
    if document is not None and not is_client_metadata_url(document):
        return "oauth.clientMetadataUrl must be an https URL with a path (the Client ID Metadata Document you host)"
    if registration == "cimd":
        if "clientId" in value or "clientName" in value:
            return (
                'oauth.clientRegistration "cimd" cannot be combined with oauth.clientId or oauth.clientName'
            )
        if url is not None and not is_document_callback(url):
            return 'oauth.clientRegistration "cimd" requires oauth.callbackUrl on localhost or 127.0.0.1 with path /callback'
        if document is None:
            return (
                'oauth.clientRegistration "cimd" needs oauth.clientMetadataUrl: piko has no Client ID Metadata '
                "Document of its own, so name the https URL of one you host"
            )
    metadata = value.get("authServerMetadataUrl")
    if metadata is not None:
        parts = urlsplit(metadata) if isinstance(metadata, str) else None
        secure = parts is not None and (
            (parts.scheme == "https" and bool(parts.netloc))
            or (parts.scheme == "http" and parts.hostname in _LOOPBACK)
        )
        if not secure:
            return (
                "oauth.authServerMetadataUrl must be an https URL, or http on localhost, 127.0.0.1, or [::1]"
            )
    return None


def is_client_metadata_url(value: Any) -> bool:
    """A Client ID Metadata Document's URL, which is the client id: https, with a path."""
    from urllib.parse import urlsplit

    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    return parts.scheme == "https" and bool(parts.netloc) and parts.path not in ("", "/")


def is_document_callback(callback_url: Any) -> bool:
    """A ``callbackUrl`` a hosted document can list: ``/callback`` on localhost or 127.0.0.1."""
    from urllib.parse import urlsplit

    parts = urlsplit(callback_url) if isinstance(callback_url, str) else None
    return parts is not None and parts.hostname in ("localhost", "127.0.0.1") and parts.path == "/callback"


def _check_stdio(entry: dict[str, Any]) -> str | None:
    args, env, cwd = entry.get("args"), entry.get("env"), entry.get("cwd")
    if args is not None and not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        return "args must be an array of strings"
    if env is not None and not _is_string_map(env):
        return "env must map names to strings"
    if cwd is not None and not isinstance(cwd, str):
        return "cwd must be a string"
    return None


def check_entry(name: str, raw: Any) -> tuple[str | None, str]:
    """``(kind, "")`` for a valid entry (``stdio``/``http``), ``(None, error)`` otherwise."""
    if not _SERVER_NAME.match(name):
        return None, f'invalid server name "{name}" (use letters, digits, "_" and "-")'
    if not isinstance(raw, dict):
        return None, f'server "{name}" must be an object'
    entry = _resolve_aliases(raw)
    error = _check_base(entry)
    if error:
        return None, f'server "{name}": {error}'
    kind_type, url, command = entry.get("type"), entry.get("url"), entry.get("command")
    if kind_type == "sse":
        return None, f'server "{name}": legacy SSE transport is not supported; use the streamable HTTP URL'
    kind: str | None = None
    if isinstance(url, str) and kind_type in (None, "http", "streamable-http"):
        kind, error = "http", _check_http(entry, url)
    elif isinstance(command, str) and kind_type in (None, "stdio"):
        kind, error = "stdio", _check_stdio(entry)
    else:
        return None, f'server "{name}" needs either "command" (stdio) or "url" (streamable HTTP)'
    error = error or _check_exposures(entry)
    if error:
        return None, f'server "{name}": {error}'
    return kind, ""


def canonical_name(name: str) -> str:
    """Names that differ only in ``-`` and ``_`` are the same server."""
    return name.replace("-", "_")


def read_file(path: Path) -> tuple[dict[str, Any], list[str], bool | None]:
    """``(mcpServers, errors, autoEnableCodemode)`` of one file (empty when it does not exist)."""
    from piko.lib import jsonio

    if not path.is_file():
        return {}, [], None
    try:
        data = jsonio.read_json_file(path)
    except (OSError, ValueError) as error:
        return {}, [f"{path}: {error}"], None
    if not isinstance(data, dict):
        return {}, [f"{path}: expected a JSON object"], None
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        return {}, [f'{path}: "mcpServers" must be an object'], None
    auto = data.get("autoEnableCodemode")
    return servers, [], auto if isinstance(auto, bool) else None


def load_config(
    agent_dir: str | os.PathLike[str],
    cwd: str | os.PathLike[str],
    project_trusted: bool,
    extra: dict[str, tuple[dict[str, Any], str]] | None = None,
) -> McpConfig:
    """Merge the user file, then (trusted only) the project file; ``extra`` are servers that
    extensions registered (``name -> (entry, extension)``), which a file's entry of the same name
    replaces."""
    config = McpConfig()
    layers: list[tuple[Path, str]] = [(user_config_path(agent_dir), "global")]
    if project_trusted:
        layers.append((project_config_path(cwd), "project"))
    by_canonical: dict[str, str] = {}
    for path, scope in layers:
        servers, errors, auto = read_file(path)
        config.errors.extend(errors)
        if auto is not None:
            config.auto_enable_codemode = auto
        seen_here: set[str] = set()
        for name, raw in servers.items():
            name = str(name)
            canonical = canonical_name(name)
            if canonical in seen_here:
                config.errors.append(f'{path}: server "{name}" has the same name as another server')
                continue
            seen_here.add(canonical)
            if isinstance(raw, dict) and is_override(raw) and canonical in by_canonical:
                base = config.servers[by_canonical[canonical]]
                merged = dict(base.raw)
                merged.update({k: raw[k] for k in OVERRIDE_KEYS if k in raw})
                kind, error = check_entry(base.name, merged)
                if kind is None:
                    config.errors.append(f"{path}: {error}")
                    continue
                config.servers[base.name] = ServerConfig(
                    name=base.name, kind=kind, raw=_resolve_aliases(merged), source=str(path), scope=scope
                )
                continue
            kind, error = check_entry(name, raw)
            if kind is None:
                config.errors.append(f"{path}: {error}")
                continue
            previous = by_canonical.pop(canonical, None)
            if previous is not None and previous != name:
                config.servers.pop(previous, None)
            by_canonical[canonical] = name
            config.servers[name] = ServerConfig(
                name=name, kind=kind, raw=_resolve_aliases(raw), source=str(path), scope=scope
            )
    for name, (raw, extension) in (extra or {}).items():
        canonical = canonical_name(name)
        if canonical in by_canonical:
            continue  # a file's server of that name wins
        kind, error = check_entry(name, raw)
        if kind is None:
            config.errors.append(f"extension {extension}: {error}")
            continue
        by_canonical[canonical] = name
        config.servers[name] = ServerConfig(
            name=name,
            kind=kind,
            raw=_resolve_aliases(raw),
            source=f"extension:{extension}",
            scope="extension",
        )
    return config


# ---------------------------------------------------------------------------
# Values: ${VAR}, !command, ~/
# ---------------------------------------------------------------------------


def resolve_value(value: str, description: str, env: dict[str, str] | None = None) -> str:
    """``!command`` (the whole value) runs the command; ``${NAME}`` reads variables; raises
    ``ValueError`` naming what could not be resolved."""
    environ = os.environ if env is None else env
    if value.startswith("!"):
        from piko.models.registry import run_config_command

        output = run_config_command(value[1:])
        if output is None:
            raise ValueError(f"Failed to resolve {description} from shell command: {value[1:]}")
        return output
    missing = [name for name in _TEMPLATE.findall(value) if environ.get(name) is None]
    if len(missing) == 1:
        raise ValueError(f"Failed to resolve {description} from environment variable: {missing[0]}")
    if missing:
        raise ValueError(f"Failed to resolve {description} from environment variables: {', '.join(missing)}")
    return _TEMPLATE.sub(lambda m: environ[m.group(1)], value)


def resolve_map(values: dict[str, str] | None, description: str) -> dict[str, str]:
    return {k: resolve_value(v, f'{description} "{k}"') for k, v in (values or {}).items()}


def expand_home(value: str) -> str:
    from piko.config.paths import expand_user

    return expand_user(value) if value.startswith("~/") else value


def apply_policy(config: McpConfig, policy: Any) -> list[str]:
    """Drop the servers a managed policy refuses (``mcpServers`` rules match the name, the
    command line or the URL); one line for each, naming the rule and its file."""
    if policy is None:
        return []
    refused: list[str] = []
    for name, server in list(config.servers.items()):
        if policy.allows_mcp_server(name, server.transport):
            continue
        del config.servers[name]
        why = (
            policy.violation("mcpServers", name, server.transport)
            or f"refused by the managed policy {policy.source}"
        )
        refused.append(why)
    return refused


def read_config_file(path: Path) -> dict[str, Any]:
    """An ``mcp.json`` as a dict (``{}`` when there is none); ``ValueError`` when it is not an object."""
    from piko.lib import jsonio

    if not path.is_file():
        return {}
    data = jsonio.read_json_file(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def write_config_file(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` back whole: keys other than the changed server are kept as they were."""
    from piko.lib import jsonio

    path.parent.mkdir(parents=True, exist_ok=True)
    jsonio.write_atomic(path, jsonio.dumps_pretty(data) + "\n")


def update_entry(path: Path, name: str, changes: dict[str, Any]) -> None:
    """Set ``changes`` in the entry ``name`` of the file at ``path`` (the file that defines the
    server, or holds its project override), leaving everything else in the file as it was."""
    data = read_config_file(path)
    servers = data.get("mcpServers")
    if not isinstance(servers, dict):
        raise ValueError(f"{path}: no mcpServers object")
    key = next((k for k in servers if canonical_name(k) == canonical_name(name)), None)
    if key is None or not isinstance(servers[key], dict):
        raise ValueError(f'{path}: no server "{name}"')
    servers[key].update(changes)
    write_config_file(path, data)
