"""Generate ``docs/api.md``, the reference of everything a plugin touches, from the typed code and its docstrings.

Run it after changing a public name, a signature or a docstring::

    .venv/bin/python scripts/gen_api_doc.py          # rewrite docs/api.md
    .venv/bin/python scripts/gen_api_doc.py --check  # exit 1 when docs/api.md is out of date or a
                                                     # public name lacks a docstring

The public names are ``piko.__all__``, the Protocols of ``piko.platform.protocols``, and the
classes a plugin is handed: ``ExtensionAPI`` (``pi``), ``ExtensionContext`` (``ctx``),
``NoOpUI`` (``ctx.ui`` where there is no UI) and ``SessionManager`` (``ctx.session_manager``).
Each is documented by its docstring (for a value, such as an alias, the string literal after its
assignment); a class by its docstring, its fields (annotations, defaults and the comment on the
line), and its public methods and properties with their signatures and docstrings. A member of a
class that implements a Protocol may take the Protocol's docstring. Every hook is listed from
``kernel/platform/hookspecs/`` with the first sentence of its docstring (``docs/hooks.md`` has
the rest).
"""

from __future__ import annotations

import argparse
import ast
import inspect
import io
import re
import sys
import textwrap
import tokenize
import types
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "docs" / "api.md"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_hooks_doc import _import_kernel  # noqa: E402
from gen_hooks_doc import hook_sections  # noqa: E402
from gen_hooks_doc import rst_to_markdown  # noqa: E402

# (section title, introduction, [(public name, "module:attribute")])
SECTIONS: list[tuple[str, str, list[str]]] = [
    (
        "The `pi` extension API",
        "An extension's `activate(pi)` factory receives `pi`, an `ExtensionAPI` of its own; what it"
        " registers there is compiled into one pluggy plugin. Registration works while the factory"
        " runs and later; session actions (`send_message`, `set_model`, ...) need the session, so"
        " call them from handlers, commands and tools.",
        ["ExtensionAPI"],
    ),
    (
        "`ctx`: what handlers, commands and tools receive",
        "Event handlers get `(event, ctx)`, commands `(args, ctx)`, tools `ctx` as their last"
        " argument. `HandlerContext` is its typed shape; `ExtensionContext` the object piko passes.",
        ["HandlerContext", "ExtensionContext", "ExtensionRuntimeNotInitializedError"],
    ),
    (
        "`ctx.ui`",
        "What an extension may show or ask. Each mode supplies its own; `NoOpUI` is what handlers get"
        " where nothing can be shown (print and JSON modes).",
        ["UI", "NoOpUI"],
    ),
    (
        "Registering tools, commands, flags, modes, providers",
        "Each `piko_register_*` hook receives a `register` callable (`Register[...]`), and the"
        " `pi.register_*` methods build the same definitions. A definition may be given as keyword"
        " arguments, as a dict (pi's camelCase keys or snake_case), or built yourself. Fields that"
        ' take code (`execute`, `run`, `stream`, `command`, `handler`) also take a `"module:attr"`'
        " import string, imported on first use.",
        [
            "Register",
            "RegisterTool",
            "RegisterCommand",
            "RegisterFlag",
            "RegisterShortcut",
            "RegisterMode",
            "RegisterProvider",
            "RegisterProviderApi",
            "RegisterMessageRenderer",
            "RegisterResourceLoader",
            "RegisterPackageSource",
            "RegisterCliCommand",
            "ToolDefinition",
            "ToolExecute",
            "ToolUpdate",
            "CommandDefinition",
            "FlagDefinition",
            "ShortcutDefinition",
            "ModeDefinition",
            "MessageRendererDefinition",
            "ResourceLoaderDefinition",
            "PackageSourceDefinition",
            "CliCommandDefinition",
            "ProviderConfig",
            "ProviderApi",
        ],
    ),
    (
        "Models, messages and content blocks",
        "The data model (`piko.data.messages`): attrs classes with keyword construction;"
        " `attrs.evolve(obj, field=value)` makes a changed copy. `to_wire` and `message_from_wire`"
        " convert to and from pi's JSON (camelCase), as session files and RPC carry them.",
        [
            "Model",
            "ModelCost",
            "UserMessage",
            "AssistantMessage",
            "ToolResultMessage",
            "CustomMessage",
            "BashExecutionMessage",
            "BranchSummaryMessage",
            "CompactionSummaryMessage",
            "TextContent",
            "ThinkingContent",
            "ImageContent",
            "ToolCall",
            "ToolResult",
            "Usage",
            "Cost",
            "to_wire",
            "message_from_wire",
        ],
    ),
    (
        "Streaming, for provider APIs",
        "A provider API's `stream(model, context, options)` is an async iterator of `StreamEvent`s"
        " ([plugins.md](plugins.md#writing-a-provider-api)).",
        ["Context", "StreamOptions", "StreamEvent", "ToolSpec", "AbortSignal", "AbortController"],
    ),
    (
        "Sessions",
        "`ctx.session_manager` is a read-only view of the session's `SessionManager` (the `get_*`"
        " methods and `build_context`); extensions add entries through `pi.append_entry`,"
        " `pi.send_message` and `pi.set_label`.",
        ["SessionManager"],
    ),
    (
        "The application",
        "A mode's `run(app)` and `piko_configure(config)` receive the `App`.",
        ["App"],
    ),
    (
        "The SDK: the agent as a library",
        "`await piko.create_agent_session(**options)` gives an `AgentSession` to prompt, subscribe"
        " to and close ([sdk.md](sdk.md)); `@piko.tool` makes a typed function a tool.",
        [
            "create_agent_session",
            "AgentSession",
            "SessionOptions",
            "EventStream",
            "InlineExtension",
            "ResourceOverrides",
            "Settings",
            "ContextFile",
            "Skill",
            "PromptTemplate",
            "tool",
            "ToolOptions",
            "SessionClosedError",
            "SessionOptionError",
            "SessionSetupError",
            "ToolSchemaError",
        ],
    ),
    ("Hook markers", "", ["hookimpl", "hookspec", "registers"]),
]

# Where the public names that ``piko.__all__`` does not hold live.
EXTRA: dict[str, str] = {
    "SessionManager": "piko.sessions.manager",
}

# A class whose members may take their docstrings from a Protocol it implements.
IMPLEMENTS: dict[str, str] = {"ExtensionContext": "HandlerContext", "NoOpUI": "UI"}

# Members that are not part of the API a plugin uses.
HIDDEN_MEMBERS = frozenset({"FIELDS", "TYPE", "ROLE", "compile"})


# ---------------------------------------------------------------------------
# Reading the code
# ---------------------------------------------------------------------------


@dataclass
class FieldDoc:
    """One field of a record or attrs class, as the class body declares it."""

    name: str
    annotation: str
    default: str | None
    comment: str
    optional: bool = False  # a key a TypedDict may leave out (total=False)


@dataclass
class MemberDoc:
    """A public method or property."""

    name: str
    kind: str  # "method", "async method", "property", "classmethod", "staticmethod"
    signature: str
    doc: str
    owner: str


@dataclass
class NameDoc:
    """One public name."""

    name: str
    module: str
    kind: str  # "class", "Protocol", "function", "alias", "value"
    signature: str
    doc: str
    fields: list[FieldDoc] = field(default_factory=list)
    members: list[MemberDoc] = field(default_factory=list)


def public_names() -> dict[str, tuple[str, Any]]:
    """Public name -> (module it is imported from, the object)."""
    import importlib

    import piko
    from piko.platform import protocols

    found: dict[str, tuple[str, Any]] = {}
    for name in piko.__all__:
        if name == "__version__":
            continue
        where = piko._EXPORTS[name].partition(":")[0]  # type: ignore[attr-defined]
        found[name] = (where, getattr(piko, name))
    for name in protocols.__all__:
        public = "HandlerContext" if name == "Context" else name
        found.setdefault(public, (protocols.__name__, getattr(protocols, name)))
    for name, module in EXTRA.items():
        found[name] = (module, getattr(importlib.import_module(module), name))
    return found


def _source_tree(module: types.ModuleType) -> tuple[ast.Module, str]:
    source = inspect.getsource(module)
    return ast.parse(source), source


def attribute_docstring(module_name: str, name: str) -> str:
    """The string literal right after ``name = ...`` at the top of a module ("" if none)."""
    import importlib

    tree, _source = _source_tree(importlib.import_module(module_name))
    body = tree.body
    for index, node in enumerate(body[:-1]):
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if not any(isinstance(t, ast.Name) and t.id == name for t in targets):
            continue
        following = body[index + 1]
        if isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant):
            value = following.value.value
            return inspect.cleandoc(value) if isinstance(value, str) else ""
    return ""


def _comments(source: str) -> dict[int, str]:
    """Line number -> the comment ending that line."""
    found: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            found[token.start[0]] = token.string.lstrip("#").strip()
    return found


def _default_text(value: ast.expr | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", "")) in (
        "field",
        "_extra",
    ):
        if getattr(value.func, "id", "") == "_extra":
            return "{}"
        for keyword in value.keywords:
            if keyword.arg == "default":
                return ast.unparse(keyword.value)
            if keyword.arg == "factory":
                factory = keyword.value
                if isinstance(factory, ast.Lambda):
                    return ast.unparse(factory.body)
                named = ast.unparse(factory)
                return {"list": "[]", "dict": "{}", "set": "set()"}.get(named, f"{named}()")
        return None
    return ast.unparse(value)


FORWARDED = "Forwarded["
"""How the annotation of a :class:`piko.lib.forwarding.Forwarded` attribute starts."""


def class_fields(cls: type) -> list[FieldDoc]:
    """The annotated fields of ``cls`` and its piko bases (bases first), with defaults and comments."""
    fields: dict[str, FieldDoc] = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith("piko.") or "__annotations__" not in klass.__dict__:
            continue
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        comments = _comments(source)
        node = ast.parse(source).body[0]
        if not isinstance(node, ast.ClassDef):
            continue
        for statement in node.body:
            if not isinstance(statement, ast.AnnAssign) or not isinstance(statement.target, ast.Name):
                continue
            annotation = ast.unparse(statement.annotation)
            if annotation.startswith(("ClassVar", "typing.ClassVar", FORWARDED)):
                continue  # a Forwarded attribute is a property (see class_members), not a field
            name = statement.target.id
            fields[name] = FieldDoc(
                name=name,
                annotation=annotation,
                default=_default_text(statement.value),
                comment=comments.get(statement.end_lineno or statement.lineno, ""),
                optional=name in getattr(klass, "__optional_keys__", ()),
            )
    return list(fields.values())


def _annotation(value: Any) -> str:
    if value is inspect.Parameter.empty:
        return ""
    return value if isinstance(value, str) else inspect.formatannotation(value)


def format_signature(function: Any, *, drop_first: bool = False) -> str:
    """``(a: int, b: str = 'x', *, c=None) -> bool`` with annotations as written."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return "(...)"
    parts: list[str] = []
    params = list(signature.parameters.values())
    if drop_first and params:
        params = params[1:]
    star_done = False
    for index, param in enumerate(params):
        text = param.name
        if param.kind is param.VAR_POSITIONAL:
            text, star_done = "*" + text, True
        elif param.kind is param.VAR_KEYWORD:
            text = "**" + text
        elif param.kind is param.KEYWORD_ONLY and not star_done:
            parts.append("*")
            star_done = True
        annotation = _annotation(param.annotation)
        if annotation:
            text += f": {annotation}"
        if param.default is not param.empty:
            default = re.sub(r"<([\w.]+) object at 0x[0-9a-f]+>", r"<\1>", repr(param.default))
            text += f" = {default}" if annotation else f"={default}"
        parts.append(text)
        if param.kind is param.POSITIONAL_ONLY and (
            index + 1 == len(params) or params[index + 1].kind is not param.POSITIONAL_ONLY
        ):
            parts.append("/")
    returned = _annotation(signature.return_annotation)
    return f"({', '.join(parts)})" + (f" -> {returned}" if returned else "")


def _own_doc(value: Any) -> str:
    doc = value.__dict__.get("__doc__") if isinstance(value, type) else getattr(value, "__doc__", None)
    return inspect.cleandoc(doc) if isinstance(doc, str) and doc.strip() else ""


def class_members(cls: type, field_names: set[str], protocol: type | None) -> list[MemberDoc]:
    """The public methods and properties of ``cls`` and its piko bases, in definition order."""
    members: dict[str, MemberDoc] = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith("piko.") or klass.__name__ in ("Record", "_Shown"):
            continue
        for name, raw in klass.__dict__.items():
            if name.startswith("_") or name in field_names or name in HIDDEN_MEMBERS:
                continue
            if type(raw).__name__ == "Forwarded":  # piko.lib.forwarding: a property read elsewhere
                held = str(inspect.get_annotations(klass).get(name, ""))
                returned = held[len(FORWARDED) : -1] if held.startswith(FORWARDED) else ""
                doc = inspect.cleandoc(raw.__doc__) if raw.__doc__ else ""
                members[name] = MemberDoc(
                    name, "property", f" -> {returned}" if returned else "", doc, klass.__name__
                )
                continue
            if isinstance(raw, property):
                function, kind = raw.fget, "property"
            elif isinstance(raw, classmethod):
                function, kind = raw.__func__, "classmethod"
            elif isinstance(raw, staticmethod):
                function, kind = raw.__func__, "staticmethod"
            elif inspect.isfunction(raw):
                function = raw
                kind = "async method" if inspect.iscoroutinefunction(raw) else "method"
            else:
                continue
            doc = inspect.cleandoc(function.__doc__) if function.__doc__ else ""
            if not doc and protocol is not None and name in protocol.__dict__:
                borrowed = protocol.__dict__[name]
                target = borrowed.fget if isinstance(borrowed, property) else borrowed
                doc = inspect.cleandoc(target.__doc__) if getattr(target, "__doc__", None) else ""
            if kind == "property":
                returned = _annotation(inspect.signature(function).return_annotation)
                signature = f" -> {returned}" if returned else ""
            else:
                signature = format_signature(function, drop_first=kind != "staticmethod")
            members[name] = MemberDoc(name, kind, signature, doc, klass.__name__)
    return list(members.values())


def describe(name: str, module: str, value: Any, names: dict[str, tuple[str, Any]]) -> NameDoc:
    """Everything the reference says about one public name."""
    if isinstance(value, type):
        is_protocol = bool(getattr(value, "_is_protocol", False))
        fields = class_fields(value) if not is_protocol else []
        protocol_name = IMPLEMENTS.get(name)
        protocol = names[protocol_name][1] if protocol_name else None
        members = class_members(value, {f.name for f in fields}, protocol)
        init = value.__dict__.get("__init__")
        built = bool(fields)  # a record or attrs class: its fields table is its constructor
        signature = format_signature(init, drop_first=True) if inspect.isfunction(init) and not built else ""
        return NameDoc(
            name, module, "Protocol" if is_protocol else "class", signature, _own_doc(value), fields, members
        )
    if inspect.isfunction(value):
        return NameDoc(name, module, "function", format_signature(value), _own_doc(value))
    origin = getattr(value, "__origin__", None)
    kind = "alias" if origin is not None else "value"
    shown = _alias_text(value) if origin is not None else ""
    return NameDoc(name, module, kind, shown, attribute_docstring(module, _defined_as(name)))


def _defined_as(name: str) -> str:
    return "Context" if name == "HandlerContext" else name


def _alias_text(value: Any) -> str:
    text = repr(value).replace("piko.platform.protocols.", "").replace("piko.platform.registries.", "")
    return re.sub(r"\btyping\.|\bcollections\.abc\.", "", text)


def reference() -> list[tuple[str, str, list[NameDoc]]]:
    """The sections with their documented names."""
    names = public_names()
    placed = [name for _title, _intro, members in SECTIONS for name in members]
    unplaced = sorted(set(names) - set(placed))
    if unplaced:
        raise SystemExit(f"gen_api_doc.py: public names without a section: {', '.join(unplaced)}")
    return [
        (title, intro, [describe(name, names[name][0], names[name][1], names) for name in members])
        for title, intro, members in SECTIONS
    ]


def missing_docstrings(sections: list[tuple[str, str, list[NameDoc]]] | None = None) -> list[str]:
    """Public names and members without a docstring."""
    missing: list[str] = []
    for _title, _intro, docs in sections if sections is not None else reference():
        for doc in docs:
            if not doc.doc:
                missing.append(doc.name)
            for member in doc.members:
                if not member.doc:
                    missing.append(f"{doc.name}.{member.name}")
    return missing


# ---------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------


def _anchor(title: str) -> str:
    """GitHub's anchor of a heading."""
    return re.sub(r"[^a-z0-9 _-]", "", title.lower()).replace(" ", "-")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _import_line(doc: NameDoc) -> str:
    import piko

    if doc.name in piko.__all__:
        return f"`from piko import {doc.name}`"
    return f"`from {doc.module} import {doc.name}`"


def render_name(doc: NameDoc) -> list[str]:
    out = ["", f"### `{doc.name}`", ""]
    head = f"*{doc.kind}*, {_import_line(doc)}"
    if doc.kind == "alias":
        head += f": `{doc.signature}`"
    out.append(head)
    if doc.kind in ("class", "function") and doc.signature and doc.signature != "()":
        out += ["", "```python", f"{doc.name}{doc.signature}", "```"]
    out += ["", rst_to_markdown(doc.doc) if doc.doc else "(undocumented)"]
    if doc.fields:
        out += ["", "Construct it with keyword arguments (the fields):"]
        out += ["", "| field | type | default | note |", "| --- | --- | --- | --- |"]
        for item in doc.fields:
            default = f"`{_cell(item.default)}`" if item.default is not None else "required"
            default = "optional" if item.optional else default
            out.append(f"| `{item.name}` | `{_cell(item.annotation)}` | {default} | {_cell(item.comment)} |")
    for member in doc.members:
        label = {"property": "property", "classmethod": "classmethod", "async method": "async"}.get(
            member.kind
        )
        prefix = f"*{label}* " if label else ""
        out += ["", f"- {prefix}**`{member.name}{member.signature}`**"]
        body = rst_to_markdown(member.doc) if member.doc else "(not documented yet)"
        out += ["", textwrap.indent(body, "  ")]
    return out


def render_hooks() -> list[str]:
    """Every hook, its signature and the first sentence of its docstring."""
    hookspecs, _semantics = _import_kernel()
    sections = hook_sections(hookspecs.source())
    out = [
        "",
        "## Hooks",
        "",
        "Implement a hook as `@hookimpl def piko_<hook>(...)` in a plugin module; `pi.on(event, handler)`"
        " subscribes to the events among them. The full entry of each, with what a handler may return,"
        " is in [hooks.md](hooks.md).",
    ]
    for title, hooks in sections:
        out += ["", f"**{title}**", "", "| hook | |", "| --- | --- |"]
        for name in hooks:
            spec = getattr(hookspecs, name)
            heading = f"{name}({', '.join(inspect.signature(spec).parameters)})"
            summary = first_sentence(inspect.getdoc(spec) or "")
            out.append(f"| [`{heading}`](hooks.md#{_anchor(heading)}) | {_cell(rst_to_markdown(summary))} |")
    return out


def first_sentence(doc: str) -> str:
    """The docstring's first sentence (up to the first full stop that ends a sentence), one line;
    a first paragraph that introduces a list (``...:``) is given without its colon."""
    paragraph = " ".join(doc.split("\n\n", 1)[0].split())
    match = re.match(r"(.+?\.)(\s|$)", paragraph)
    return match.group(1) if match else paragraph.rstrip(":")


def render() -> str:
    """The whole text of ``docs/api.md``."""
    sections = reference()
    out = [
        "# API reference",
        "",
        "<!-- Generated by scripts/gen_api_doc.py from the typed code and its docstrings."
        " Do not edit: change the docstrings and run the script. -->",
        "",
        "Everything a plugin touches: the `pi` object of an extension, `ctx` and `ctx.ui`, the"
        " definitions it registers, the data model, the session, the application and every hook."
        " The names of `import piko` are typed (piko ships `py.typed`); how to write, package and"
        " test a plugin is in [plugins.md](plugins.md), each hook's full entry in [hooks.md](hooks.md),"
        " recipes in [cookbook.md](cookbook.md).",
        "",
        "## Contents",
        "",
    ]
    for title, _intro, docs in sections:
        out.append(f"- [{title}](#{_anchor(title)}): " + ", ".join(f"`{d.name}`" for d in docs))
    out.append("- [Hooks](#hooks)")
    for title, intro, docs in sections:
        out += ["", f"## {title}"]
        if intro:
            out += ["", intro]
        for doc in docs:
            out += render_name(doc)
    out += render_hooks()
    return "\n".join(out).rstrip() + "\n"


def iter_problems(text: str) -> Iterator[str]:
    """What ``--check`` reports: names without docstrings, then whether the file is out of date."""
    for name in missing_docstrings():
        yield f"no docstring: {name}"
    current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
    if current != text:
        yield f"{OUTPUT.relative_to(ROOT)} is out of date: run scripts/gen_api_doc.py"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is out of date")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        problems = list(iter_problems(text))
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT}")
    for name in missing_docstrings():
        print(f"no docstring: {name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
