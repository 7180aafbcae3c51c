"""Generate ``docs/hooks.md`` from ``kernel/platform/hookspecs/``: its docstrings and the events'
declarations (``@event(...)``, :mod:`piko.platform.semantics`).

Run it after adding or changing a hook::

    .venv/bin/python scripts/gen_hooks_doc.py          # rewrite docs/hooks.md
    .venv/bin/python scripts/gen_hooks_doc.py --check  # exit 1 when docs/hooks.md is out of date

The banners of the hookspecs modules (``# ---`` / ``# Title`` / ``# ---``) become the sections, each
hookspec's docstring its entry. The event table says what a handler may return; its semantics,
"modify" and "cancel" columns come from each event's declaration.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "docs" / "hooks.md"

_BANNER = re.compile(r"^# -{10,}\n# (?P<title>[^\n]+)\n# -{10,}$", re.MULTILINE)
_DEF = re.compile(r"^def (piko_\w+)\(", re.MULTILINE)


def _import_kernel() -> tuple[Any, Any]:
    try:
        from piko.platform import hookspecs
        from piko.platform import semantics
    except ImportError:  # run from a checkout without piko installed
        sys.path.insert(0, str(ROOT))
        import importlib

        sys.modules.setdefault("piko", importlib.import_module("kernel"))
        from piko.platform import hookspecs
        from piko.platform import semantics
    return hookspecs, semantics


# ---------------------------------------------------------------------------
# Reading the specs
# ---------------------------------------------------------------------------


def hook_sections(source: str) -> list[tuple[str, list[str]]]:
    """``[(banner title, [hook names in source order])]`` from the hookspecs modules' text."""
    marks: list[tuple[int, str, str]] = [
        (m.start(), "banner", m.group("title")) for m in _BANNER.finditer(source)
    ]
    marks += [(m.start(), "hook", m.group(1)) for m in _DEF.finditer(source)]
    sections: list[tuple[str, list[str]]] = []
    for _pos, kind, value in sorted(marks):
        if kind == "banner":
            sections.append((value, []))
        elif sections:
            sections[-1][1].append(value)
        else:
            sections.append(("Hooks", [value]))
    return [(title, hooks) for title, hooks in sections if hooks]


def rst_to_markdown(text: str) -> str:
    """The reST of the docstrings as Markdown: literals, roles, ``:param:`` lists, labels."""
    text = re.sub(r":(?:class|mod|func|meth|data|attr):`~?([^`]+)`", r"`\1`", text)
    text = text.replace("``", "`")
    lines: list[str] = []
    for line in text.splitlines():
        param = re.match(r"^:param (\w+):\s*(.*)$", line)
        if param:
            lines.append(f"- **`{param.group(1)}`**: {param.group(2)}")
        elif line.startswith("    ") and lines and lines[-1].startswith("- **"):
            lines[-1] += " " + line.strip()
        elif re.match(r"^(Return value|Semantics):", line):
            label, rest = line.split(":", 1)
            if lines and lines[-1].strip():
                lines.append("")
            lines.append(f"**{label}:**{rest}")
        elif lines and lines[-1].startswith("**") and line.strip() and not line.startswith(("*", "-")):
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return "\n".join(lines).strip()


def return_value(doc: str) -> str:
    """The "Return value:" paragraph of a docstring (one line), or "" when it has none."""
    match = re.search(
        r"^Return value:(.*?)(?=^(?:[A-Z][\w ]*:\s|:param)|\Z|^\s*$)", doc, re.MULTILINE | re.DOTALL
    )
    if not match:
        return ""
    return " ".join(match.group(1).split())


# ---------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------


def _cell(text: str) -> str:
    return rst_to_markdown(text).replace("|", "\\|").replace("\n", " ")


def _signature(spec: Any) -> str:
    params = ", ".join(inspect.signature(spec).parameters)
    return f"{spec.__name__}({params})"


def _anchor(title: str) -> str:
    return re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")


def _with_semantics(hook: str, doc: str, events: dict[str, Any]) -> str:
    """``doc`` with its event's semantics at the end, from the ``@event`` declaration, unless the
    docstring has a ``Semantics:`` line of its own (one that qualifies the word)."""
    declared = events.get(hook.removeprefix("piko_"))
    if declared is None or declared.service or re.search(r"^Semantics:", doc, re.MULTILINE):
        return doc
    return f"{doc}\nSemantics: {declared.semantics.value}."


def _with_event_fields(spec: Any, doc: str) -> str:
    """``doc`` with its ``event`` parameter's fields, read from the event class the spec names.

    The docstrings do not list an event's fields (a list beside the class drifts from it); a
    ``:param event:`` line they keep says only what the fields alone do not."""
    parameter = inspect.signature(spec).parameters.get("event")
    annotation = parameter.annotation if parameter is not None else None
    from piko.data import events as event_classes
    from piko.lib.records import record_fields

    cls = getattr(event_classes, annotation, None) if isinstance(annotation, str) else None
    if cls is None:
        return doc
    fields = ", ".join(field.name for field in record_fields(cls))
    listed = f":param event: ``{cls.__name__}({fields})``"
    if re.search(r"^:param event:", doc, re.MULTILINE):
        return re.sub(r"^:param event:", f"{listed};", doc, count=1, flags=re.MULTILINE)
    label = re.search(r"^(?:Return value|Semantics):", doc, re.MULTILINE)
    prose, labels = (doc[: label.start()], doc[label.start() :]) if label else (doc, "")
    return f"{prose.rstrip()}\n\n{listed}.\n{labels}".rstrip()


def render() -> str:
    """The whole text of ``docs/hooks.md``."""
    hookspecs, semantics = _import_kernel()
    source = hookspecs.source()
    sections = hook_sections(source)
    specs = {name: getattr(hookspecs, name) for _title, hooks in sections for name in hooks}
    out: list[str] = [
        "# Hooks reference",
        "",
        "<!-- Generated by scripts/gen_hooks_doc.py from kernel/platform/hookspecs/ and kernel/data/events.py."
        " Do not edit: change the docstrings and run the script. -->",
        "",
        rst_to_markdown(inspect.getdoc(hookspecs) or ""),
        "",
        "How to write, package and block plugins: [plugins.md](plugins.md).",
        "",
        "## Contents",
        "",
        "- [Events and what a handler may return](#events-and-what-a-handler-may-return)",
        "- [Services fired through the dispatcher](#services-fired-through-the-dispatcher)",
    ]
    out += [f"- [{title}](#{_anchor(title)})" for title, _hooks in sections]
    out += [
        "",
        "## Events and what a handler may return",
        "",
        'Subscribe with `pi.on("<event>", handler)` in an extension or implement `piko_<event>(event, ctx)`'
        " in a hook plugin. *Semantics* is how the dispatcher combines results, declared beside each hook spec"
        " (`@event(...)`, `piko.platform.semantics`):"
        " **notify** ignores them; **modify** chains them (each handler sees the previous one's change);"
        " **cancel** stops at the first cancel; **block** stops at the first block and fails closed;"
        " **first result** stops at the first answer; **collect** gathers every handler's contribution."
        " *Modify* and *Cancel* say what pi's extension reference allows.",
        "",
        "| Event | Hook | Semantics | Modify | Cancel | A handler may return |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    services: list[str] = []
    events = semantics.declared()
    in_source_order = [hook.removeprefix("piko_") for hook in specs if hook.removeprefix("piko_") in events]
    for name in in_source_order + sorted(set(events) - set(in_source_order)):
        declared = events[name]
        spec = specs.get(f"piko_{name}")
        doc = inspect.getdoc(spec) or "" if spec is not None else ""
        returned = return_value(doc)
        word = declared.semantics.value
        if declared.service:
            services.append(f"| `{name}` | `piko_{name}` | {word} | {_cell(returned) or '-'} |")
            continue
        returns = _cell(returned) if returned else "nothing (return values are ignored)"
        out.append(
            f"| `{name}` | `piko_{name}` | {word} | {declared.modify} | {declared.cancel} | {returns} |"
        )
    out += [
        "",
        "## Services fired through the dispatcher",
        "",
        "These take a request object instead of an event; the first useful answer wins.",
        "",
        "| Service | Hook | Semantics | Return value |",
        "| --- | --- | --- | --- |",
        *services,
    ]
    for title, hooks in sections:
        out += ["", f"## {title}"]
        for name in hooks:
            spec = specs[name]
            options = getattr(spec, "piko_spec", None) or {}
            flags = [flag for flag in ("historic", "firstresult") if options.get(flag)]
            out += ["", f"### `{_signature(spec)}`", ""]
            if flags:
                out += [" ".join(f"*{flag}*" for flag in flags), ""]
            out.append(
                rst_to_markdown(
                    _with_semantics(name, _with_event_fields(spec, inspect.getdoc(spec) or ""), events)
                )
            )
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is out of date")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is out of date: run scripts/gen_hooks_doc.py", file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
