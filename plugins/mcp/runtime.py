"""The MCP servers of one session: connecting them, their tools as piko tools, what the model sees.

Built by the plugin's ``session_start`` handler when a server is configured. Everything it does
to the session goes through the extension API (``pi.register_tool``, ``pi.set_active_tools``,
``pi.append_entry``, ``pi.events``), as a third-party plugin's code would.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any

from piko.lib.subscriptions import subscribe
from piko.plugins.mcp.config import McpConfig
from piko.plugins.mcp.config import ServerConfig
from piko.plugins.mcp.connection import ServerConnection
from piko.plugins.mcp.connection import describe_error
from piko.plugins.mcp.log import McpLog
from piko.plugins.mcp.naming import RESOURCE_TOOLS
from piko.plugins.mcp.naming import assign_names
from piko.plugins.mcp.naming import is_mcp_tool
from piko.plugins.mcp.naming import name_matcher
from piko.plugins.mcp.naming import tool_exposure
from piko.plugins.mcp.naming import tool_name
from piko.plugins.mcp.results import tool_result

FIRST_PROMPT_WAIT_S = 10.0
TOOL_SEARCH = "tool_search"
TOOL_SEARCH_LIMIT = 8
LOADED_ENTRY = "mcp-tool-search"  # custom session entries recording what tool_search loaded
SECTION = "mcp_servers"
SECTION_MAX_CHARS = 4096  # the section's lines; summaries shrink, then servers are left out
SUMMARY_MAX_CHARS = 250  # one server's summary at most
TOOL_SEARCH_DESCRIPTION = (
    "# Tool discovery\n\nSearches the metadata of tools that are not declared yet and declares the "
    "matches for the next model call.\n\nSome tools, such as the tools of MCP servers, are not given "
    f"to you upfront: use `{TOOL_SEARCH}` to find the ones you need. For MCP tools, always use `{TOOL_SEARCH}`."
)
TOOL_SEARCH_PARAMETERS = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "Search query for deferred tools."},
        "limit": {
            "type": "number",
            "description": f"Maximum number of tools to return. Defaults to {TOOL_SEARCH_LIMIT}.",
        },
    },
    "required": ["query"],
}


def namespace(server: str) -> str:
    return "mcp__" + server.replace("-", "_")


def model_exposure(exposure: str) -> str:
    """``codemode`` is reached as ``deferred`` until a codemode plugin exists."""
    return "deferred" if exposure == "codemode" else exposure


class McpTool:
    """One server tool under its piko name."""

    def __init__(self, name: str, server: str, tool: Any, exposure: str) -> None:
        self.name = name
        self.server = server
        self.tool = tool
        self.exposure = exposure  # as configured (codemode kept for listing)
        self.withdrawn = False

    @property
    def reach(self) -> str:
        return model_exposure(self.exposure)


class McpRuntime:
    """The session's servers (see the module docstring)."""

    def __init__(
        self, pi: Any, config: McpConfig, *, cwd: str, agent_dir: str, options: dict[str, Any],
        emit: Callable[[str, Any], None] | None = None,
    ) -> None:  # fmt: skip
        self.pi = pi
        self._emit = emit  # fires an event for the extensions' pi.on handlers (not awaited)
        self.config = config
        self.cwd = cwd
        self.log = McpLog(agent_dir)
        self._watchers: list[Callable[[], None]] = []
        self.connections: dict[str, ServerConnection] = {
            name: self._connection(server) for name, server in config.servers.items()
        }
        self.tools: dict[str, McpTool] = {}
        self.owners: dict[str, tuple[str, str]] = {}
        self.registered: set[str] = set()
        self.loaded: set[str] = set()  # deferred tools that tool_search declared on this branch
        self.notices: list[str] = []
        self._codemode_notice = False
        self._reported: set[str] = set()
        self._selection = self._tools_selection(options)

    # -- which MCP tools --tools lets through ----------------------------------------------------

    @staticmethod
    def _tools_selection(options: dict[str, Any]) -> Any:
        """None: every MCP tool by its exposure; else a matcher of the MCP tools ``--tools`` and
        ``--exclude-tools`` let through (``--tools`` counts only once an entry starts with
        ``mcp__``); ``--no-tools`` lets none through."""
        if options.get("no_tools"):
            return lambda _name: False
        listed = [n.strip() for n in str(options.get("tools") or "").split(",") if n.strip()]
        excluded = [n.strip() for n in str(options.get("exclude_tools") or "").split(",") if n.strip()]
        allowed = name_matcher(listed) if any(n.startswith("mcp__") for n in listed) else None
        denied = name_matcher(excluded) if excluded else None
        if allowed is None and denied is None:
            return None
        return lambda name: (allowed is None or allowed(name)) and not (denied is not None and denied(name))

    def _allowed(self, name: str) -> bool:
        return self._selection is None or bool(self._selection(name))

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        for connection in self.connections.values():
            connection.start()
        if any(self._reaches_deferred(s) for s in self.enabled()):
            self._register_tool_search()  # before the servers connect: tool_search waits for them
            self.refresh_active()
        if any(s.exposure == "codemode" or "codemode" in s.tool_exposure.values() for s in self.enabled()):
            self._codemode_notice = True
            self.notices.append(
                "MCP: codemode exposure is handled as deferred (reached through tool_search): "
                "piko has no codemode tool yet"
            )

    async def sync_extension_servers(self, config: McpConfig) -> None:
        """Extensions registered or removed servers while the session runs: connect the new ones
        at once, close the removed ones (their tools become unreachable); ``config`` is the merged
        configuration now."""
        wanted = {n: s for n, s in config.servers.items() if s.scope == "extension"}
        for name, connection in list(self.connections.items()):
            if connection.config.scope == "extension" and wanted.get(name) != connection.config:
                await self._remove(name)
        for name, server in wanted.items():
            if name not in self.connections:
                self._add(server)
        self.refresh_active()

    def _connection(self, server: ServerConfig) -> ServerConnection:
        connection = ServerConnection(server, self.cwd, self.log, self._on_tools, self._on_notification)
        connection.state_listeners.append(self._changed)
        return connection

    def _changed(self) -> None:
        for watcher in list(self._watchers):
            watcher()

    def watch(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` whenever a server's state changes, or a server comes or goes (the
        ``/mcp`` screen redraws); returns the remover."""
        return subscribe(self._watchers, callback)

    def _add(self, server: ServerConfig) -> None:
        self.config.servers[server.name] = server
        connection = self._connection(server)
        self.connections[server.name] = connection
        self._changed()
        connection.start()
        if server.enabled and self._reaches_deferred(server) and TOOL_SEARCH not in self.registered:
            self._register_tool_search()

    async def _remove(self, name: str) -> None:
        connection = self.connections.pop(name)
        self.config.servers.pop(name, None)
        self._changed()
        for entry in self.tools.values():
            if entry.server == name:
                entry.withdrawn = True
        await connection.stop()

    # -- changes from /mcp ------------------------------------------------------------------------

    def _replace_entry(self, name: str, **changes: Any) -> ServerConfig:
        old = self.config.servers[name]
        server = ServerConfig(
            name=old.name, kind=old.kind, raw={**old.raw, **changes}, source=old.source, scope=old.scope
        )
        self.config.servers[name] = server
        self.connections[name].config = server
        return server

    def move_to_override(self, name: str, path: str) -> ServerConfig:
        """The user-level server now has a project override at ``path``: later changes go there."""
        old = self.config.servers[name]
        server = ServerConfig(name=old.name, kind=old.kind, raw=old.raw, source=path, scope="project")
        self.config.servers[name] = server
        self.connections[name].config = server
        return server

    async def set_enabled(self, name: str, enabled: bool) -> None:
        """Turn a server on (it connects in the background) or off (closed, its tools withdrawn)."""
        server = self._replace_entry(name, enabled=enabled)
        connection = self.connections[name]
        if not enabled:
            await connection.stop()
            connection.state, connection.error = "disabled", None
            for entry in self.tools.values():
                if entry.server == name:
                    entry.withdrawn = True
        else:
            connection.state = "idle"
            connection.start()
            if self._reaches_deferred(server) and TOOL_SEARCH not in self.registered:
                self._register_tool_search()
        self.refresh_active()

    def set_exposure(self, name: str, exposure: str) -> None:
        """Give a server's tools a new exposure (``toolExposure`` still wins for the tools it names)."""
        server = self._replace_entry(name, exposure=exposure)
        for entry in self.tools.values():
            if entry.server == name:
                entry.exposure = tool_exposure(server.exposure, server.tool_exposure, entry.tool.name)
        if self._reaches_deferred(server) and TOOL_SEARCH not in self.registered:
            self._register_tool_search()
        self.refresh_active()

    @staticmethod
    def _reaches_deferred(server: ServerConfig) -> bool:
        exposures = {server.exposure, *server.tool_exposure.values()}
        return any(model_exposure(e) == "deferred" for e in exposures)

    def enabled(self) -> list[ServerConfig]:
        return [s for s in self.config.servers.values() if s.enabled]

    def has_direct(self, server: ServerConfig) -> bool:
        return server.exposure == "direct" or "direct" in server.tool_exposure.values()

    def _declares_loaded(self, server: ServerConfig) -> bool:
        """Whether tool_search loaded tools of ``server`` on this branch (they stay declared)."""
        prefix = tool_name(server.name, "")
        return any(name.startswith(prefix) for name in self.loaded)

    async def wait_for_direct(self, timeout: float = FIRST_PROMPT_WAIT_S) -> None:
        """A prompt waits up to ``timeout`` only for the servers whose tools it must declare:
        those with direct tools, and those with tools tool_search loaded on this branch."""
        waiting = [
            c.wait_ready(timeout)
            for c in self.connections.values()
            if (self.has_direct(c.config) or self._declares_loaded(c.config)) and c.state == "connecting"
        ]
        if waiting:
            await asyncio.gather(*waiting)

    async def wait_all(self, timeout: float = FIRST_PROMPT_WAIT_S) -> None:
        waiting = [c.wait_ready(timeout) for c in self.connections.values() if c.state == "connecting"]
        if waiting:
            await asyncio.gather(*waiting)

    async def stop(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.connections.values()), return_exceptions=True)

    # -- notifications ---------------------------------------------------------------------------

    def _on_notification(self, server: str, method: str, params: Any) -> None:
        with contextlib.suppress(Exception):
            self.pi.events.emit("mcp_notification", {"server": server, "method": method, "params": params})
        if self._emit is not None:
            from piko.data.events import McpNotificationEvent

            with contextlib.suppress(Exception):
                self._emit(
                    "mcp_notification", McpNotificationEvent(server=server, method=method, params=params)
                )

    # -- tools -----------------------------------------------------------------------------------

    def _on_tools(self, connection: ServerConnection) -> None:
        """A server connected or changed its tool list: register what is new, withdraw what went."""
        server = connection.config
        owner_of = self.owners
        names = assign_names(
            server.name,
            [t.name for t in connection.tools],
            lambda candidate: candidate in owner_of and owner_of[candidate][0] != server.name,
        )
        current: set[str] = set()
        for tool in connection.tools:
            name = names[tool.name]
            current.add(name)
            exposure = tool_exposure(server.exposure, server.tool_exposure, tool.name)
            entry = McpTool(name, server.name, tool, exposure)
            self.tools[name] = entry
            self.owners[name] = (server.name, tool.name)
            self._register(entry)
        for name, entry in self.tools.items():
            if entry.server == server.name and name not in current:
                entry.withdrawn = True
        if connection.has_resources and not self.registered.issuperset(RESOURCE_TOOLS):
            self._register_resource_tools()
        if any(t.reach == "deferred" for t in self.tools.values()) and TOOL_SEARCH not in self.registered:
            self._register_tool_search()
        self.refresh_active()

    def _register(self, entry: McpTool) -> None:
        tool = entry.tool
        schema = dict(tool.inputSchema or {})
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        annotations = tool.annotations.model_dump(exclude_none=True) if tool.annotations else None
        label = f"{entry.server}/{tool.name}"
        self._add_tool(
            entry.name,
            self._executor(entry),
            tool.description or "",
            schema,
            label=label,
            annotations=annotations,
        )

    def _add_tool(
        self, name: str, execute: Any, description: str, parameters: dict[str, Any], **fields: Any
    ) -> None:
        """Register one of this plugin's tools switched off (:meth:`refresh_active` decides what
        the model is given) and remember it; ``fields`` are more of the tool's (``label`` is its
        name unless given)."""
        fields.setdefault("label", name)
        self.pi.register_tool(
            name=name,
            description=description,
            parameters=parameters,
            execute=execute,
            default_active=False,
            **fields,
        )
        self.registered.add(name)

    def _executor(self, entry: McpTool) -> Any:
        async def execute(
            tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
        ) -> Any:
            current = self.tools.get(entry.name)
            if current is None or current.withdrawn or current.exposure == "hidden":
                raise RuntimeError(f'MCP tool "{entry.name}" is no longer offered by server "{entry.server}"')
            connection = self.connections[current.server]
            try:
                result = await connection.call_tool(current.tool.name, params or {}, signal)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                raise RuntimeError(f'MCP server "{current.server}": {describe_error(error)}') from error
            return tool_result(result, current.server, current.tool.name)

        return execute

    def declared(self) -> list[str]:
        """The MCP tool names the model is given now."""
        names: list[str] = []
        for name, entry in self.tools.items():
            if entry.withdrawn or not self._allowed(name):
                continue
            if entry.reach == "direct" or (entry.reach == "deferred" and name in self.loaded):
                names.append(name)
        if TOOL_SEARCH in self.registered and self._allowed(TOOL_SEARCH):
            names.append(TOOL_SEARCH)
        if self.registered.issuperset(RESOURCE_TOOLS):
            reach = self._resource_reach()
            for name in RESOURCE_TOOLS:
                if self._allowed(name) and (reach == "direct" or name in self.loaded):
                    names.append(name)
        return names

    def refresh_active(self) -> None:
        """Give the model exactly the MCP tools it should see, keeping the other active tools."""
        try:
            active = list(self.pi.get_active_tools())
        except Exception:
            return  # the session is not running (pi mcp list)
        # every MCP tool name is this plugin's to declare (also one a previous session left active)
        others = [n for n in active if not (is_mcp_tool(n) or n == TOOL_SEARCH)]
        wanted = others + [n for n in self.declared() if n not in others]
        if wanted != active:
            self.pi.set_active_tools(wanted)

    # -- tool_search -----------------------------------------------------------------------------

    def _register_tool_search(self) -> None:
        snippet = "Search for tools that are not loaded yet and load the matches"
        self._add_tool(
            TOOL_SEARCH,
            self._tool_search,
            TOOL_SEARCH_DESCRIPTION,
            TOOL_SEARCH_PARAMETERS,
            prompt_snippet=snippet,
        )

    def search(self, query: str, limit: int) -> list[str]:
        """Deferred tools not declared yet, best match first (BM25 as pi 1.6 ranks them, see
        :mod:`piko.plugins.mcp.search`), in the order the tools were registered on ties."""
        from piko.plugins.mcp.search import rank
        from piko.plugins.mcp.search import tool_document

        documents = []
        for name, entry in self.tools.items():
            if entry.reach != "deferred" or entry.withdrawn or name in self.loaded or not self._allowed(name):
                continue
            server = self.config.servers.get(entry.server)
            connection = self.connections.get(entry.server)
            space = (
                namespace(entry.server),
                server.description if server else None,
                connection.instructions if connection else None,
            )
            documents.append(tool_document(name, entry.tool.description or "", entry.tool.inputSchema, space))
        if self._resource_reach() == "deferred":
            for name in RESOURCE_TOOLS:
                if name in self.registered and name not in self.loaded and self._allowed(name):
                    description, parameters = RESOURCE_TOOL_SPECS[name]
                    documents.append(tool_document(name, description, parameters))
        return rank(query, documents, limit)

    async def _tool_search(
        self, tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
    ) -> Any:
        query = str(params.get("query") or "")
        if not query.strip():
            raise ValueError("query must not be empty")
        limit = params.get("limit", TOOL_SEARCH_LIMIT)
        if not isinstance(limit, int | float) or int(limit) != limit or limit <= 0:
            raise ValueError("limit must be a positive integer")
        await self.wait_all()
        found = self.search(query, int(limit))
        if found:
            self.loaded.update(found)
            self.pi.append_entry(LOADED_ENTRY, {"tools": found})
            self.refresh_active()
        if not found:
            text = "No matching tools found."
        else:
            lines = [
                f"- {n}: {self._description(n).strip().splitlines()[0] if self._description(n).strip() else ''}"
                for n in found
            ]
            plural = "" if len(found) == 1 else "s"
            text = f"Loaded {len(found)} tool{plural}. They are available from your next call:\n" + "\n".join(
                lines
            )
        return {"content": [{"type": "text", "text": text}], "details": {"loaded": found}}

    def _description(self, name: str) -> str:
        entry = self.tools.get(name)
        if entry is not None:
            return entry.tool.description or ""
        return RESOURCE_TOOL_SPECS[name][0] if name in RESOURCE_TOOL_SPECS else ""

    def restore_loaded(self, entries: list[Any]) -> None:
        """What tool_search loaded on the current branch (after resume, fork or /tree)."""
        loaded: set[str] = set()
        for entry in entries:
            if (
                getattr(entry, "type", None) == "custom"
                and getattr(entry, "custom_type", None) == LOADED_ENTRY
            ):
                data = getattr(entry, "data", None) or {}
                loaded.update(str(n) for n in data.get("tools", []) if isinstance(n, str))
        self.loaded = loaded
        self.refresh_active()

    # -- resources -------------------------------------------------------------------------------

    def _resource_reach(self) -> str:
        reaches = {
            model_exposure(s.exposure)
            for s in self.enabled()
            if s.exposure != "hidden" and self.connections[s.name].has_resources
        }
        return "direct" if "direct" in reaches else "deferred"

    def _resource_servers(self, name: str | None) -> list[ServerConnection]:
        if name is not None:
            connection = self.connections.get(name)
            if connection is None or not connection.config.enabled or connection.config.exposure == "hidden":
                raise ValueError(f'unknown MCP server "{name}"')
            return [connection]
        return [
            c for c in self.connections.values()
            if c.config.enabled and c.config.exposure != "hidden" and c.has_resources
        ]  # fmt: skip

    def _register_resource_tools(self) -> None:
        executors = {
            "list_mcp_resources": self._list_resources,
            "list_mcp_resource_templates": self._list_templates,
            "read_mcp_resource": self._read_resource,
        }
        for name, execute in executors.items():
            if name in self.registered:
                continue
            description, parameters = RESOURCE_TOOL_SPECS[name]
            self._add_tool(name, execute, description, parameters, annotations={"readOnlyHint": True})

    async def _list_paged(self, params: dict[str, Any], kind: str) -> Any:
        await self.wait_all()
        server_name = params.get("server")
        cursor = params.get("cursor")
        method = "list_resources" if kind == "resources" else "list_resource_templates"

        def page_of(cursor: str | None) -> Any:
            return lambda s: getattr(s, method)(cursor=cursor) if cursor else getattr(s, method)()

        if server_name:
            connection = self._resource_servers(str(server_name))[0]
            page = await connection.request(page_of(cursor))
            items = [dict(_dump(r), server=connection.name) for r in getattr(page, _items_attr(kind))]
            out: dict[str, Any] = {"server": connection.name, kind: [i for i in items if not _is_app(i)]}
            if page.nextCursor:
                out["nextCursor"] = page.nextCursor
            return _json_result(out)
        everything: list[dict[str, Any]] = []
        for connection in self._resource_servers(None):
            next_cursor: str | None = None
            for _page in range(100):
                page = await connection.request(page_of(next_cursor))
                everything.extend(
                    dict(_dump(r), server=connection.name) for r in getattr(page, _items_attr(kind))
                )
                next_cursor = page.nextCursor
                if not next_cursor:
                    break
        return _json_result({kind: [i for i in everything if not _is_app(i)]})

    async def _list_resources(self, tool_call_id: str, params: dict[str, Any], *_: Any) -> Any:
        return await self._list_paged(params, "resources")

    async def _list_templates(self, tool_call_id: str, params: dict[str, Any], *_: Any) -> Any:
        return await self._list_paged(params, "resourceTemplates")

    async def _read_resource(self, tool_call_id: str, params: dict[str, Any], *_: Any) -> Any:
        from pydantic import AnyUrl

        from piko.plugins.mcp.results import save_temp

        await self.wait_all()
        connection = self._resource_servers(str(params.get("server") or ""))[0]
        uri = str(params.get("uri") or "")
        result = await connection.request(lambda s: s.read_resource(AnyUrl(uri)))
        content: list[dict[str, Any]] = []
        for item in result.contents:
            text = getattr(item, "text", None)
            mime = getattr(item, "mimeType", None) or ""
            if text is not None:
                content.append({"type": "text", "text": text})
            elif mime.startswith("image/"):
                content.append({"type": "image", "data": item.blob, "mimeType": mime})
            else:
                import base64

                path = save_temp(base64.b64decode(getattr(item, "blob", "") or ""), _suffix(mime))
                content.append(
                    {
                        "type": "text",
                        "text": f"[binary resource {item.uri} ({mime or 'unknown type'}) saved to {path}]",
                    }
                )
        return {"content": content, "details": {"server": connection.name, "uri": uri}}

    # -- what the model and the user read --------------------------------------------------------

    def servers_section(self) -> str | None:
        """The ``<mcp_servers>`` section of the system prompt: servers whose tools are not declared,
        a line each, within :data:`SECTION_MAX_CHARS` as pi 1.6 fits it (summaries shortened to
        fit, then the last servers left out and counted)."""
        listed = sorted(
            (
                s
                for s in self.enabled()
                if {model_exposure(s.exposure), *map(model_exposure, s.tool_exposure.values())} & {"deferred"}
            ),
            key=lambda s: s.name,
        )
        if not listed:
            return None
        intro = "MCP servers whose tools are not declared to you. Load the tools of `tool_search` servers with `tool_search`."
        heads = [f"- {namespace(server.name)} (tool_search)" for server in listed]

        def omitted(count: int) -> list[str]:
            plural = "" if count == 1 else "s"
            return [f"- … {count} more server{plural}; find their tools with tool_search"] if count else []

        def size(kept: int) -> int:
            return len("\n".join([intro, *heads[:kept], *omitted(len(listed) - kept)]))

        kept = len(listed)
        while kept > 0 and size(kept) > SECTION_MAX_CHARS:
            kept -= 1
        per_server = 0 if kept == 0 else min(SUMMARY_MAX_CHARS, (SECTION_MAX_CHARS - size(kept)) // kept - 2)
        lines = [intro]
        for server, head in zip(listed[:kept], heads, strict=False):
            connection = self.connections[server.name]
            text = (server.description or "").strip() or (connection.instructions or "").strip()
            summary = _shorten(text.split("\n", 1)[0].strip(), per_server) if per_server > 0 else ""
            lines.append(f"{head}: {summary}" if summary else head)
        lines.extend(omitted(len(listed) - kept))
        return f"<{SECTION}>\n" + "\n".join(lines) + f"\n</{SECTION}>"

    def new_failures(self) -> list[str]:
        """One line for each server that failed since the last call (each is reported once)."""
        lines: list[str] = []
        for name, connection in self.connections.items():
            if connection.state == "failed" and name not in self._reported:
                self._reported.add(name)
                detail = connection.status_line().split(": ", 1)[-1]  # "failed: <error> (stderr: ...)"
                lines.append(f'MCP server "{name}" failed: {detail}')
        return lines

    def status_text(self) -> str:
        """``/mcp`` outside the interactive screen: a server a line, then its tools."""
        if not self.config.servers and not self.config.errors:
            return "No MCP servers configured."
        lines: list[str] = []
        for name, connection in self.connections.items():
            server = connection.config
            lines.append(f"{name}: {connection.status_line()} ({server.exposure}, {server.scope})")
            tools = [e for e in self.tools.values() if e.server == name and not e.withdrawn]
            if tools:
                lines.append("  tools: " + ", ".join(
                    e.tool.name + (f" [{e.exposure}]" if e.exposure != server.exposure else "") for e in tools
                ))  # fmt: skip
        lines.extend(f"config error: {e}" for e in self.config.errors)
        return "\n".join(lines)


def _string(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


_LIST_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "server": _string("MCP server name. Omit to list every server with resources."),
        "cursor": _string(
            "Opaque cursor from a previous call with the same server; omit for the first page."
        ),
    },
    "additionalProperties": False,
}
# the resource tools as pi 1.6 declares them (the wording is the model's, and tool_search ranks by it)
RESOURCE_TOOL_SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "list_mcp_resources": (
        "Lists resources provided by MCP servers. Resources allow servers to share data that provides "
        "context to language models, such as files, database schemas, or application-specific information. "
        "Prefer resources over web search when possible.",
        _LIST_PARAMETERS,
    ),
    "list_mcp_resource_templates": (
        "Lists resource templates provided by MCP servers. Parameterized resource templates allow servers to "
        "share data that takes parameters and provides context to language models, such as files, database "
        "schemas, or application-specific information. Prefer resource templates over web search when possible.",
        _LIST_PARAMETERS,
    ),
    "read_mcp_resource": (
        "Read a specific resource from an MCP server given the server name and resource URI.",
        {
            "type": "object",
            "properties": {
                "server": _string(
                    "MCP server name exactly as configured. Must match the 'server' field returned by "
                    "list_mcp_resources."
                ),
                "uri": _string(
                    "Resource URI to read. Must be one of the URIs returned by list_mcp_resources."
                ),
            },
            "required": ["server", "uri"],
            "additionalProperties": False,
        },
    ),
}


def _shorten(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, ending in ``…`` when cut."""
    if len(text) <= limit:
        return text
    return "" if limit <= 1 else text[: limit - 1].rstrip() + "…"


def _items_attr(kind: str) -> str:
    return "resources" if kind == "resources" else "resourceTemplates"


def _dump(item: Any) -> dict[str, Any]:
    data = item.model_dump(mode="json", exclude_none=True, by_alias=True)
    data.pop("icons", None)
    data.pop("_meta", None)
    return data


def _is_app(item: dict[str, Any]) -> bool:
    uri = str(item.get("uri") or item.get("uriTemplate") or "")
    return uri.startswith("ui://") or item.get("mimeType") == "text/html;profile=mcp-app"


def _json_result(value: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": json.dumps(value, indent=2, ensure_ascii=False)}]}


def _suffix(mime: str) -> str:
    import mimetypes

    return mimetypes.guess_extension(mime) or ".bin"
