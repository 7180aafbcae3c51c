"""The options of ``piko.create_agent_session``: their names and types, checked before anything starts.

Everything here turns what a program passed into what the CLI's boot path takes (an
:class:`~piko.app.application.App`, its :class:`~piko.app.application.BootOptions` and
``app.options``), so an SDK session starts exactly as ``pi`` does in that directory.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import TypedDict

from piko.lib.records import Record
from piko.lib.records import field

if TYPE_CHECKING:
    from piko.data.messages import Model
    from piko.extensions.extension_api import ExtensionAPI
    from piko.platform.protocols import UI
    from piko.platform.registries import ToolDefinition
    from piko.resources.loader import ContextFile
    from piko.resources.loader import PromptTemplate
    from piko.resources.loader import Resources
    from piko.resources.loader import Skill
    from piko.sessions.manager import SessionManager


ExtensionFactory = Callable[["ExtensionAPI"], Any]
"""An ``activate(pi)`` function, as an extension file's (it may be async)."""


class SessionOptionError(ValueError):
    """An option of ``create_agent_session`` is unknown or wrong; ``option`` names it."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"create_agent_session({option}=...): {message}")
        self.option = option


class InlineExtension(Record):
    """An extension given as code, with the name diagnostics and ``pi plugins`` show for it."""

    name: str
    factory: Callable[[ExtensionAPI], Any]


class ResourceOverrides(Record):
    """What to use instead of (or made from) the resources found in the project and agent dir.

    ``skills``, ``prompt_templates`` and ``context_files`` each take a list (used instead of
    what was found) or a function given the list found and returning the list to use (to
    filter or add). ``system_prompt`` replaces the system prompt's base (as ``SYSTEM.md``);
    ``append_system_prompt`` replaces what ``APPEND_SYSTEM.md`` would append.
    """

    skills: list[Skill] | Callable[[list[Skill]], list[Skill]] | None = None
    prompt_templates: list[PromptTemplate] | Callable[[list[PromptTemplate]], list[PromptTemplate]] | None = (
        None
    )
    context_files: list[ContextFile] | Callable[[list[ContextFile]], list[ContextFile]] | None = None
    system_prompt: str | None = None
    append_system_prompt: list[str] | None = field(default=None)


class SessionOptions(TypedDict, total=False):
    """Every option of ``create_agent_session``; each is optional (see ``docs/sdk.md``)."""

    cwd: str | os.PathLike[str]
    agent_dir: str | os.PathLike[str]
    model: str | Model
    thinking_level: str
    api_key: str
    scoped_models: list[str]
    session_manager: SessionManager
    settings: dict[str, Any]
    tools: list[str]
    custom_tools: list[ToolDefinition | Callable[..., Any]]
    extensions: list[ExtensionFactory | InlineExtension | str | os.PathLike[str]]
    no_extensions: bool
    disable_plugins: list[str]
    resources: ResourceOverrides
    ui: UI


OPTION_NAMES = tuple(SessionOptions.__annotations__)


def check_names(options: dict[str, Any]) -> None:
    """Raise :class:`SessionOptionError` for the first option that does not exist (with a suggestion)."""
    for name in options:
        if name not in OPTION_NAMES:
            close = difflib.get_close_matches(name, OPTION_NAMES, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise SessionOptionError(name, f"unknown option{hint} Options: {', '.join(OPTION_NAMES)}")


def _strings(option: str, value: Any) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise SessionOptionError(option, f"expected a list of strings, not {type(value).__name__}")
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise SessionOptionError(option, f"expected a list of names, got {item!r}")
    return [item.strip() for item in value]


def _path(option: str, value: Any) -> Path:
    if not isinstance(value, (str, os.PathLike)):
        raise SessionOptionError(option, f"expected a path, not {type(value).__name__}")
    return Path(os.fspath(value)).expanduser()


class Prepared(Record):
    """The options, checked and turned into what the boot path takes."""

    cwd: Path
    agent_dir: Path | None
    settings: Any  # piko.config.settings.Settings in memory, or None for the files
    app_options: dict[str, Any] = field(factory=dict)
    extension_paths: list[str] = field(factory=list)
    inline_extensions: list[tuple[str, Any]] = field(factory=list)
    custom_tools: list[Any] = field(factory=list)
    tools: list[str] | None = None
    no_extensions: bool = False
    disable_plugins: list[str] = field(factory=list)
    model: Any = None  # a piko.Model to add to the registry when it is not there
    resources: ResourceOverrides | None = None
    session_manager: Any = None
    ui: Any = None


def prepare(options: dict[str, Any]) -> Prepared:
    """Check every option's type and shape; no file is read and no plugin loaded yet."""
    check_names(options)
    cwd = _path("cwd", options["cwd"]).absolute() if "cwd" in options else Path(os.getcwd())
    if not cwd.is_dir():
        raise SessionOptionError("cwd", f"{cwd} is not a directory")
    agent_dir = _path("agent_dir", options["agent_dir"]).absolute() if "agent_dir" in options else None
    prepared = Prepared(cwd=cwd, agent_dir=agent_dir, settings=None)
    if options.get("settings") is not None:
        if not isinstance(options["settings"], dict):
            raise SessionOptionError("settings", f"expected a dict, not {type(options['settings']).__name__}")
        from piko.config.settings import Settings

        prepared.settings = Settings.in_memory(options["settings"], cwd, agent_dir)
    _prepare_model(prepared, options)
    if options.get("scoped_models") is not None:
        prepared.app_options["models"] = ",".join(_strings("scoped_models", options["scoped_models"]))
    if options.get("api_key") is not None:
        if not isinstance(options["api_key"], str) or not options["api_key"]:
            raise SessionOptionError("api_key", "expected a non-empty string")
        if "model" not in prepared.app_options:
            raise SessionOptionError("api_key", "needs model=... (the key is for that model's provider)")
        prepared.app_options["api_key"] = options["api_key"]
    if options.get("tools") is not None:
        prepared.tools = list(dict.fromkeys(_strings("tools", options["tools"])))
    prepared.custom_tools = _custom_tools(options.get("custom_tools"))
    _prepare_extensions(prepared, options.get("extensions"))
    prepared.no_extensions = bool(options.get("no_extensions", False))
    if options.get("disable_plugins") is not None:
        prepared.disable_plugins = _strings("disable_plugins", options["disable_plugins"])
    prepared.resources = _resources(options.get("resources"))
    manager = options.get("session_manager")
    if manager is not None:
        from piko.sessions.manager import SessionManager

        if not isinstance(manager, SessionManager):
            raise SessionOptionError(
                "session_manager", f"expected a piko.SessionManager, not {type(manager).__name__}"
            )
        prepared.session_manager = manager
    prepared.ui = options.get("ui")
    return prepared


def _prepare_model(prepared: Prepared, options: dict[str, Any]) -> None:
    from piko.data.messages import Model
    from piko.models.resolver import is_valid_thinking_level

    model = options.get("model")
    if isinstance(model, Model):
        if not model.provider or not model.id:
            raise SessionOptionError("model", "a piko.Model needs a provider and an id")
        prepared.model = model
        prepared.app_options["model"] = model.key
    elif isinstance(model, str) and model.strip():
        prepared.app_options["model"] = model.strip()
    elif model is not None:
        raise SessionOptionError("model", f'expected "provider/id" or a piko.Model, not {model!r}')
    level = options.get("thinking_level")
    if level is not None:
        if not isinstance(level, str) or not is_valid_thinking_level(level):
            raise SessionOptionError(
                "thinking_level", f"{level!r} is not one of off, minimal, low, medium, high, xhigh"
            )
        prepared.app_options["thinking"] = level


def _custom_tools(value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise SessionOptionError("custom_tools", f"expected a list of tools, not {type(value).__name__}")
    from piko.extensions.function_tools import ToolSchemaError
    from piko.extensions.function_tools import function_tool
    from piko.lib.records import replace
    from piko.platform.registries import ToolDefinition

    tools: list[Any] = []
    for item in value:
        if isinstance(item, ToolDefinition):
            if item.execute is None:
                raise SessionOptionError("custom_tools", f"tool '{item.name}' has no execute")
            definition = replace(item, default_active=True)  # each session its own copy
        elif callable(item):
            try:
                definition = function_tool(item)
            except ToolSchemaError as exc:
                raise SessionOptionError("custom_tools", str(exc)) from exc
        else:
            raise SessionOptionError("custom_tools", f"expected a tool or a function, not {item!r}")
        if any(t.name == definition.name for t in tools):
            raise SessionOptionError("custom_tools", f"two tools are named '{definition.name}'")
        tools.append(definition)
    return tools


def _prepare_extensions(prepared: Prepared, value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise SessionOptionError("extensions", f"expected a list, not {type(value).__name__}")
    names: set[str] = set()
    for index, item in enumerate(value, 1):
        if isinstance(item, (str, os.PathLike)):
            path = _path("extensions", item)
            path = path if path.is_absolute() else prepared.cwd / path
            if not path.exists():
                raise SessionOptionError("extensions", f"extension file {path} does not exist")
            prepared.extension_paths.append(str(path))
            continue
        if isinstance(item, InlineExtension):
            name, factory = item.name, item.factory
        elif callable(item):
            name, factory = f"<inline:{index}>", item
        else:
            raise SessionOptionError(
                "extensions", f"expected a factory, an InlineExtension or a path, not {item!r}"
            )
        if not isinstance(name, str) or not name:
            raise SessionOptionError("extensions", "an InlineExtension needs a name")
        if not callable(factory):
            raise SessionOptionError("extensions", f"the factory of '{name}' is not callable")
        if name in names:
            raise SessionOptionError("extensions", f"two inline extensions are named '{name}'")
        names.add(name)
        prepared.inline_extensions.append((name, _as_function(factory)))


def _as_function(factory: Callable[..., Any]) -> Callable[..., Any]:
    """A plain function (the plugin manager runs functions as ``activate``; a partial or a callable
    object would be taken for a plugin module)."""
    import inspect

    if inspect.isfunction(factory):
        return factory

    def activate(pi: Any) -> Any:
        return factory(pi)

    return activate


_RESOURCE_TYPES = {"skills": "Skill", "prompt_templates": "PromptTemplate", "context_files": "ContextFile"}


def _resources(value: Any) -> ResourceOverrides | None:
    if value is None:
        return None
    if isinstance(value, dict):
        try:
            value = ResourceOverrides(**value)
        except TypeError as exc:
            raise SessionOptionError("resources", str(exc)) from exc
    if not isinstance(value, ResourceOverrides):
        raise SessionOptionError("resources", f"expected piko.ResourceOverrides, not {type(value).__name__}")
    from piko.resources import loader

    for attr, type_name in _RESOURCE_TYPES.items():
        items = getattr(value, attr)
        if items is None or callable(items):
            continue
        kind = getattr(loader, type_name)
        if not isinstance(items, list) or not all(isinstance(i, kind) for i in items):
            raise SessionOptionError(
                f"resources.{attr}", f"expected a list of piko.{type_name} or a function"
            )
    if value.system_prompt is not None and not isinstance(value.system_prompt, str):
        raise SessionOptionError("resources.system_prompt", "expected a string")
    if value.append_system_prompt is not None:
        _strings("resources.append_system_prompt", value.append_system_prompt)
    return value


def adjuster(overrides: ResourceOverrides) -> Callable[[Resources], Resources]:
    """``resources found -> resources used`` for ``app.adjust_resources``."""
    from piko.lib.records import replace
    from piko.resources import loader

    def adjust(found: Resources) -> Resources:
        changes: dict[str, Any] = {}
        for attr, type_name in _RESOURCE_TYPES.items():
            override = getattr(overrides, attr)
            if override is None:
                continue
            items = override(list(getattr(found, attr))) if callable(override) else list(override)
            kind = getattr(loader, type_name)
            if not isinstance(items, list) or not all(isinstance(i, kind) for i in items):
                raise SessionOptionError(
                    f"resources.{attr}", f"the function must return a list of piko.{type_name}"
                )
            changes[attr] = items
        prompts = found.system_prompts
        if overrides.system_prompt is not None or overrides.append_system_prompt is not None:
            prompts = replace(
                prompts,
                system=overrides.system_prompt if overrides.system_prompt is not None else prompts.system,
                append=list(overrides.append_system_prompt)
                if overrides.append_system_prompt is not None
                else list(prompts.append),
            )
            changes["system_prompts"] = prompts
        return replace(found, **changes) if changes else found

    return adjust
