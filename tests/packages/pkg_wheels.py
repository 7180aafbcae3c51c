"""Build small wheels by hand (a wheel is a zip with a ``.dist-info``), offline and in milliseconds."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

HELLO_PLUGIN = '''"""A test plugin: one tool."""
from piko import hookimpl


@hookimpl
def piko_register_tools(register):
    register(
        name="{tool}",
        label="{tool}",
        description="A tool of a test plugin ({version})",
        parameters={{"type": "object", "properties": {{}}}},
        execute=lambda *args, **kwargs: {{"content": [{{"type": "text", "text": "{tool} {version}"}}]}},
    )
'''


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(
    dest: Path,
    name: str,
    version: str,
    files: dict[str, str],
    entry_points: dict[str, dict[str, str]] | None = None,
    requires: list[str] | None = None,
) -> Path:
    """Write ``{name}-{version}-py3-none-any.whl`` into ``dest`` and return its path."""
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    metadata = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    metadata += [f"Requires-Dist: {r}" for r in requires or []]
    contents: dict[str, bytes] = {path: text.encode() for path, text in files.items()}
    contents[f"{info}/METADATA"] = ("\n".join(metadata) + "\n").encode()
    contents[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: piko-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    if entry_points:
        lines = []
        for group, entries in entry_points.items():
            lines.append(f"[{group}]")
            lines += [f"{k} = {v}" for k, v in entries.items()]
            lines.append("")
        contents[f"{info}/entry_points.txt"] = "\n".join(lines).encode()
    record = [f"{path},{_digest(data)},{len(data)}" for path, data in contents.items()]
    record.append(f"{info}/RECORD,,")
    contents[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    dest.mkdir(parents=True, exist_ok=True)
    wheel = dest / f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in contents.items():
            zf.writestr(path, data)
    return wheel


def tool_plugin_wheel(
    dest: Path, name: str, version: str, plugin: str, tool: str, *, skills: bool = False
) -> Path:
    """A plugin distribution ``name`` with entry point ``plugin`` registering the tool ``tool``."""
    module = name.replace("-", "_")
    files = {f"{module}/__init__.py": HELLO_PLUGIN.format(tool=tool, version=version)}
    entry_points = {"piko": {plugin: module}}
    if skills:
        files[f"{module}/skills/{tool}-skill/SKILL.md"] = (
            f"---\nname: {tool}-skill\ndescription: A skill shipped by {name}\n---\nUse {tool}.\n"
        )
        entry_points["piko.skills"] = {"bundled": f"{module}.skills"}
    return build_wheel(dest, name, version, files, entry_points, requires=["piko"])
