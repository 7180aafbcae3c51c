"""A tiny PEP 517/660 build backend for test projects: wheels in milliseconds, no setuptools.

Copied into a test project's ``_backend/`` folder and named in its ``pyproject.toml`` with
``backend-path``; it reads ``[project]`` (name, version, dependencies, entry points) and packs
the project's top-level packages (a ``.pth`` file pointing at the project for editable installs).
"""

from __future__ import annotations

import base64
import hashlib
import os
import tomllib
import zipfile


def _project() -> dict:
    with open("pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["project"]


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _wheel(directory: str, editable: bool) -> str:
    project = _project()
    name, version = project["name"], project["version"]
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    files: dict[str, bytes] = {}
    if editable:
        files[f"__editable__.{dist}.pth"] = (os.path.abspath(".") + "\n").encode()
    else:
        for entry in sorted(os.listdir(".")):
            if os.path.isfile(os.path.join(entry, "__init__.py")):
                for folder, _dirs, names in os.walk(entry):
                    for filename in names:
                        path = os.path.join(folder, filename)
                        with open(path, "rb") as fh:
                            files[path.replace(os.sep, "/")] = fh.read()
    metadata = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    metadata += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    files[f"{info}/METADATA"] = ("\n".join(metadata) + "\n").encode()
    files[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: mini\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    groups = project.get("entry-points", {})
    if groups:
        lines = []
        for group, entries in groups.items():
            lines += [f"[{group}]", *(f"{k} = {v}" for k, v in entries.items()), ""]
        files[f"{info}/entry_points.txt"] = "\n".join(lines).encode()
    record = [f"{p},{_digest(d)},{len(d)}" for p, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    filename = f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, filename), "w") as zf:
        for path, data in files.items():
            zf.writestr(path, data)
    return filename


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, editable=False)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, editable=True)
