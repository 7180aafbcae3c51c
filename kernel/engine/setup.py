"""Building the agent session a mode runs: session file, model, thinking level, tools, resources.

This is pi's start-up sequence after argument parsing (its execution flow, steps 9-14):
choose the session (``--no-session``, ``--session``, ``--fork``, ``--continue``, new), resolve
the model (``--provider``/``--model``, ``--models`` scope, the session's, settings, defaults),
the thinking level (clamped to the model), the active tools (:mod:`~piko.engine.tool_selection`:
``--tools``, ``--exclude-tools``, ``--no-tools``, ``--no-builtin-tools``, ``defaultTools``, the
session's recorded loadout), resources (context files, skills, templates, through their plugins and
``resources_discover``), then create the :class:`~piko.engine.session.AgentSession`, bind it
as the runtime of extensions and fire ``session_start``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from piko.config.paths import SESSION_DIR_ENV
from piko.config.paths import expand_user
from piko.data.events import ResourcesDiscoverEvent
from piko.data.events import SessionStartEvent
from piko.engine.session import AgentSession
from piko.models.resolver import DEFAULT_THINKING_LEVEL
from piko.models.resolver import ModelResolutionError
from piko.models.resolver import default_available_model
from piko.models.resolver import is_valid_thinking_level
from piko.models.resolver import resolve_cli_model
from piko.models.resolver import resolve_model_scope
from piko.models.resolver import same_model
from piko.resources.loader import ResourceRequest
from piko.resources.loader import Resources
from piko.resources.loader import load_resources


class SetupError(Exception):
    """Start-up cannot continue (unknown model, missing session file...); the message says why.

    ``bare`` messages are printed as they are; the others get pi's ``Error: `` prefix.
    """

    def __init__(self, message: str, *, bare: bool = False) -> None:
        super().__init__(message)
        self.bare = bare


def session_dir(app: Any) -> str | None:
    """``--session-dir``, else ``$PI_CODING_AGENT_SESSION_DIR``, else settings ``sessionDir``."""
    value = (
        app.options.get("session_dir") or os.environ.get(SESSION_DIR_ENV) or app.settings.get("sessionDir")
    )
    return expand_user(str(value)) if value else None


def check_fork_options(options: dict[str, Any]) -> None:
    """``--fork`` starts a new session: it cannot go with the options that pick one."""
    if not options.get("fork"):
        return
    clashing = [
        flag
        for flag, key in (
            ("--session", "session"),
            ("--continue", "continue"),
            ("--resume", "resume"),
            ("--no-session", "no_session"),
        )
        if options.get(key)
    ]
    if clashing:
        raise SetupError(f"--fork cannot be combined with {', '.join(clashing)}")


def check_session_id_options(options: dict[str, Any]) -> str | None:
    """``--session-id``, checked: it names the session to use or create, so it cannot go with
    the options that pick another one, and must be a valid id."""
    from piko.sessions.ids import check_session_id

    session_id = options.get("session_id")
    if session_id is None:
        return None
    clashing = [
        flag
        for flag, key in (("--session", "session"), ("--continue", "continue"), ("--resume", "resume"))
        if options.get(key)
    ]
    if clashing:
        raise SetupError(f"--session-id cannot be combined with {', '.join(clashing)}")
    try:
        return check_session_id(str(session_id))
    except ValueError as exc:
        raise SetupError(str(exc)) from exc


def open_session_manager(app: Any) -> Any:
    """The session manager the options ask for."""
    from piko.sessions.manager import SessionInOtherProjectError
    from piko.sessions.manager import SessionManager
    from piko.sessions.manager import SessionNotFoundError
    from piko.sessions.migrations import migrate_sessions_from_agent_root

    options = app.options
    check_fork_options(options)
    session_id = check_session_id_options(options)
    cwd = str(app.cwd)
    directory = session_dir(app)
    migrate_sessions_from_agent_root(app.agent_dir)
    try:
        if options.get("no_session"):
            return SessionManager.in_memory(cwd, session_id=session_id)
        if options.get("fork"):
            if session_id and SessionManager.find_by_id(cwd, session_id, directory):
                raise SetupError(f"Session already exists with id '{session_id}'")
            return SessionManager.fork_from(
                options["fork"], cwd, session_dir=directory, session_id=session_id
            )
        if options.get("session"):
            return SessionManager.open(options["session"], cwd=cwd, session_dir=directory)
        if options.get("continue"):
            return SessionManager.continue_recent(cwd, session_dir=directory)
        if session_id:
            existing = SessionManager.find_by_id(cwd, session_id, directory)
            if existing:
                return SessionManager.open(existing, cwd=cwd, session_dir=directory)
            sys.stderr.write(
                f"Warning: No project session found with id '{session_id}'; creating a new session with that id.\n"
            )
            return SessionManager.create(cwd, session_dir=directory, session_id=session_id)
    except SessionNotFoundError as exc:
        raise SetupError(str(exc), bare=True) from exc
    except SessionInOtherProjectError as exc:
        raise SetupError(
            f"Session found in different project: {exc.cwd}. Use --fork {exc.path} to fork it into this directory."
        ) from exc
    except (FileNotFoundError, ValueError) as exc:
        raise SetupError(str(exc)) from exc
    return SessionManager.create(cwd, session_dir=directory)


def default_tool_order(tools: list[Any]) -> list[Any]:
    """Tools with an ``order`` first, lowest first, then the others in load order."""
    return sorted(tools, key=lambda t: (t.order is None, t.order or 0))


def is_builtin_tool(app: Any, tool: Any) -> bool:
    """A tool of one of piko's own ``tools`` plugins (what ``--no-builtin-tools`` leaves out).

    Decided by where the plugin came from, not by its name: a third-party plugin named
    ``tools.x`` is not built-in.
    """
    info = app.pm.infos.get(tool.plugin)
    return info is not None and info.builtin and info.kind == "tools"


def registered_tools(app: Any) -> list[Any]:
    """The registered tools as :mod:`~piko.engine.tool_selection` sees them, in the order pi lists them."""
    from piko.engine.tool_selection import ToolInfo

    return [
        ToolInfo(t.name, is_builtin_tool(app, t), bool(t.default_active))
        for t in default_tool_order(list(app.registries.tools))
    ]


def select_tools(app: Any, manager: Any = None) -> list[str]:
    """Names of the tools to activate (see :mod:`~piko.engine.tool_selection`), for ``manager``'s
    session when given (its recorded loadout applies).

    Entries of ``--tools``/``--exclude-tools`` that name no tool, and that no plugin says it
    registers later (``piko_tool_registers_later``), are reported once, with why when a blocked
    or broken plugin provides them."""
    from piko.engine.tool_selection import ToolSelectionError
    from piko.engine.tool_selection import choose_tools
    from piko.engine.tool_selection import recorded_loadout
    from piko.engine.tool_selection import request_from

    try:
        request = request_from(app.options, app.settings)
    except ToolSelectionError as exc:
        raise SetupError(str(exc)) from exc
    recorded = recorded_loadout(manager.get_branch()) if manager is not None else None
    choice = choose_tools(registered_tools(app), request, recorded)
    unknown = {
        option: kept
        for option, entries in choice.unknown.items()
        if (
            kept := [
                e for e in entries if not app.pm.hook.piko_tool_registers_later(name=e.lstrip("+-"), app=app)
            ]
        )
    }
    if unknown:
        from piko.platform.provenance import explain

        for option, entries in unknown.items():
            # a tool of a blocked or broken plugin is said with why; only the others are "unknown"
            explained = {entry: explain(app, "tools", entry.lstrip("+-")) for entry in entries}
            nobody_provides = [entry for entry, why in explained.items() if why is None]
            if nobody_provides:
                app.notices.append(f"Unknown tool(s) in {option}: {', '.join(nobody_provides)}")
            app.notices.extend(
                why for why in explained.values() if why is not None and why not in app.notices
            )
    return choice.active


def tool_declaration(app: Any, name: str) -> dict[str, Any]:
    """A registered tool as pi 1.6's tool records declare it: name, description, parameters."""
    from piko.data.wire import to_wire

    tool = app.registries.tools.get(name)
    if tool is None:
        return {"name": name}
    return {"name": name, "description": tool.description or "", "parameters": to_wire(tool.parameters or {})}


def default_selection(app: Any) -> list[str]:
    """The tools of the default selection (``defaultTools`` and the tools plugins switch on): what
    a session that records no tools gets without tool flags."""
    from piko.engine.tool_selection import ToolRequest
    from piko.engine.tool_selection import choose_tools
    from piko.engine.tool_selection import request_from

    configured = request_from({}, app.settings).default_tools
    return choose_tools(registered_tools(app), ToolRequest(default_tools=configured)).active


def tools_for_branch(app: Any, manager: Any, *, keep_unrecorded: bool = False) -> list[str] | None:
    """The tools a session switched to (``/resume``, ``/new``, a fork) or navigated in (``/tree``)
    should have: its recorded loadout under this run's options, else the start-up selection;
    None with ``keep_unrecorded`` when the branch recorded none (keep what is active)."""
    from piko.engine.tool_selection import ToolSelectionError
    from piko.engine.tool_selection import choose_tools
    from piko.engine.tool_selection import recorded_loadout
    from piko.engine.tool_selection import request_from

    recorded = recorded_loadout(manager.get_branch())
    if recorded is None and keep_unrecorded:
        return None
    try:
        request = request_from(app.options, app.settings)
    except ToolSelectionError:  # refused at start-up already
        return None
    if recorded is not None and not request.keeps_recorded:
        return None if keep_unrecorded else choose_tools(registered_tools(app), request).active
    return choose_tools(registered_tools(app), request, recorded).active


def _text_or_file(value: str, cwd: Path) -> str:
    """``--append-system-prompt`` takes text or a file's path."""
    path = Path(expand_user(value))
    if not path.is_absolute():
        path = cwd / path
    try:
        if path.is_file():
            return path.read_text(encoding="utf-8")
    except OSError:
        pass
    return value


async def load_session_resources(app: Any, reason: str = "startup") -> Resources:
    """Context files, skills, templates and themes, including paths extensions add, then changed
    by ``app.adjust_resources(found)`` when the app has one (at start-up and on ``/reload``)."""
    extra: dict[str, list[str]] = {"skill_paths": [], "prompt_paths": [], "theme_paths": []}
    sources: dict[str, str] = {}
    if app.dispatcher.has_handlers("resources_discover"):
        found = await app.dispatcher.emit(
            "resources_discover", ResourcesDiscoverEvent(cwd=str(app.cwd), reason=reason), app.context()
        )
        for key in extra:
            for path, source in found.get(key, []):
                base = Path(expand_user(str(path)))
                resolved = str(base if base.is_absolute() else Path(app.cwd) / base)
                extra[key].append(resolved)
                sources.setdefault(resolved, str(source))
    request = ResourceRequest(
        cwd=str(app.cwd),
        agent_dir=str(app.agent_dir),
        settings=app.settings,
        options=dict(app.options),
        extra_paths=extra,
        extra_sources=sources,
        project_trusted=app.project_trusted,
    )
    resources = load_resources(app, request)
    adjust = getattr(app, "adjust_resources", None)  # the SDK's ``resources=`` overrides
    return adjust(resources) if adjust is not None else resources


def choose_model(app: Any, context: Any, scoped: list[Any]) -> tuple[Any, str | None, list[str]]:
    """``(model, thinking level asked for or None, warnings)``; raises :class:`SetupError`."""
    model, level, warnings, _from_cli = _choose_model(app, context, scoped)
    return model, level, warnings


def _choose_model(app: Any, context: Any, scoped: list[Any]) -> tuple[Any, str | None, list[str], bool]:
    """:func:`choose_model`, plus whether the command line chose it (what ``--api-key`` needs)."""
    registry = app.model_registry
    options = app.options
    warnings: list[str] = []
    if options.get("model"):
        try:
            model, level, warning = resolve_cli_model(registry, options.get("provider"), options["model"])
        except ModelResolutionError as exc:
            raise SetupError(str(exc)) from exc
        if warning:
            warnings.append(warning)
        return model, level, warnings, True
    if options.get("provider"):
        from piko.models.resolver import DEFAULT_MODEL_PER_PROVIDER

        provider = str(options["provider"])
        name = next((n for n in registry.model_providers() if n.lower() == provider.lower()), None)
        own = registry.models_of(name) if name is not None else []
        if not own:
            why = registry.unavailable(provider)
            raise SetupError(
                why or f'Unknown provider "{provider}". Use --list-models to see available providers/models.'
            )
        preferred = DEFAULT_MODEL_PER_PROVIDER.get(own[0].provider)
        return next((m for m in own if m.id == preferred), own[0]), None, warnings, True
    has_history = bool(context.messages)
    if scoped and not has_history:
        saved = registry.find(
            str(app.settings.get("defaultProvider") or ""), str(app.settings.get("defaultModel") or "")
        )
        pick = next((s for s in scoped if same_model(s.model, saved)), scoped[0])
        return pick.model, pick.thinking_level, warnings, True
    if context.model:
        provider, model_id = context.model
        restored = registry.find(provider, model_id)
        if restored is not None and registry.has_auth(restored.provider):
            return restored, None, warnings, False
        reason = "model no longer exists" if restored is None else "no auth configured"
        warnings.append(f"Could not restore model {provider}/{model_id} ({reason}).")
    saved_provider = str(app.settings.get("defaultProvider") or "")
    saved = registry.find(saved_provider, str(app.settings.get("defaultModel") or ""))
    if saved is not None:
        return saved, None, warnings, False
    fallback = default_available_model(registry)
    why = _why_not_available(app, saved_provider)
    if why and fallback is None:  # the one line, not the getting-started screen
        raise SetupError(why)
    if why:
        warnings.append(why)
    return fallback, None, warnings, False


def _why_not_available(app: Any, saved_provider: str) -> str | None:
    """Why the provider the user chose (settings ``defaultProvider``, a ``--models`` or
    ``enabledModels`` pattern's provider) is missing, when a policy or a blocked or broken plugin
    is the cause."""
    from piko.models.resolver import unavailable_provider

    registry = app.model_registry
    if saved_provider and not registry.models_of(saved_provider):
        why = registry.unavailable(saved_provider)
        if why:
            return str(why)
    patterns = app.options.get("models")
    listed = str(patterns).split(",") if patterns else app.settings.get("enabledModels") or []
    return next((why for p in listed if (why := unavailable_provider(registry, str(p).strip()))), None)


async def create_agent_session(
    app: Any,
    *,
    ui: Any = None,
    mode: str = "print",
    session_manager: Any = None,
    freeze_startup: bool = True,
) -> AgentSession:
    """The agent session for this run, bound as the extensions' runtime, after ``session_start``.

    ``session_manager``: one :func:`open_session_manager` gave earlier (a mode that, as pi, looks
    the session up before it reads ``@file`` arguments); by default it is opened here.
    ``freeze_startup``: move start-up objects out of the collector's reach (a
    process that makes one session; a program making many must not, or their cycles stay).
    """
    options = app.options
    manager = session_manager if session_manager is not None else open_session_manager(app)
    context = manager.build_context()  # before the report: building it reads the messages
    for message in getattr(manager, "diagnostics", []):
        app.notices.append(message)
    registry = app.model_registry.load()
    patterns = options.get("models")
    pattern_list = (
        [p.strip() for p in str(patterns).split(",") if p.strip()]
        if patterns
        else app.settings.get("enabledModels") or []
    )
    scoped, scope_warnings = resolve_model_scope(list(pattern_list), registry) if pattern_list else ([], [])
    model, level_from_pattern, warnings, from_cli = _choose_model(app, context, scoped)
    app.notices.extend(scope_warnings + warnings)
    if options.get("api_key"):
        if model is None or not from_cli:
            raise SetupError(
                "--api-key requires a model to be specified via --model, --provider/--model, or --models"
            )
        registry.runtime_api_keys[model.provider] = str(options["api_key"])
    thinking = options.get("thinking")
    if thinking and not is_valid_thinking_level(str(thinking)):
        app.notices.append(
            f'Invalid thinking level "{thinking}". Valid values: off, minimal, low, medium, high, xhigh, max'
        )
        thinking = None
    level = (
        thinking
        or level_from_pattern
        or (context.thinking_level if context.messages and context.thinking_level else None)
        or app.settings.get("defaultThinkingLevel")
        or DEFAULT_THINKING_LEVEL
    )
    resources = await load_session_resources(app)
    app.notices.extend(resources.diagnostics)
    custom_prompt = options.get("system_prompt")
    if custom_prompt:
        custom_prompt = _text_or_file(str(custom_prompt), Path(app.cwd))
    appended = [_text_or_file(str(v), Path(app.cwd)) for v in options.get("append_system_prompt") or ()]
    active_tools = select_tools(app, manager)
    # the commands are registered at start-up, as the tools are (a prompt may be a /command), so
    # a plugin whose piko_register_commands raises is reported on every run, not only interactively
    _ = app.registries.commands
    session = AgentSession(
        app,
        manager,
        model=model,
        thinking_level=str(level),
        active_tools=active_tools,
        resources=resources,
        scoped_models=scoped,
        ui=ui,
        mode=mode,
        custom_system_prompt=custom_prompt,
        append_system_prompt=appended,
    )
    fresh = not manager.get_entries()
    if model is not None and (
        fresh or context.model is None or tuple(context.model) != (model.provider, model.id)
    ):
        manager.append_model_change(model.provider, model.id)
    if model is not None and (fresh or context.thinking_level != session.thinking_level):
        manager.append_thinking_level_change(session.thinking_level)
    from piko.engine.tool_selection import LoadoutRecorder

    session.loadout = LoadoutRecorder(
        lambda: session.session_manager, default_selection(app), lambda name: tool_declaration(app, name)
    )  # noted as runs start
    app.runtime = session
    await app.dispatcher.emit("session_start", SessionStartEvent(reason="startup"), session.ctx)
    if not freeze_startup:
        return session
    import gc

    gc.freeze()  # start-up objects (catalog, session history) are long-lived: keep them out of GC passes
    return session
