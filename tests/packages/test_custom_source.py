"""A plugin's own package source (``piko_register_package_sources``): install, start-up, resources."""

from __future__ import annotations

import shutil

from pkg_env import PiEnv
from pkg_wheels import build_wheel

SOURCE_MODULE = '''"""A package source that makes packages out of thin air (scheme demo:)."""
import shutil

from piko.plugins.packages.sources import PackageRef

EXTENSION = """from piko import hookimpl


@hookimpl
def piko_register_tools(register):
    register(name="{name}_tool", description="from demo:{name}", execute=lambda *a, **k: None)
"""


class Demo:
    def parse(self, source, base):
        name = source.split(":", 1)[1]
        return PackageRef("demo", source, name, f"demo:{name}", name=name)

    def _dir(self, ref, ctx):
        return ctx.agent_dir / "demo" / ref.name

    def install(self, ref, ctx):
        root = self._dir(ref, ctx)
        (root / "skills" / ref.name).mkdir(parents=True, exist_ok=True)
        (root / "skills" / ref.name / "SKILL.md").write_text(f"---\\nname: {ref.name}\\ndescription: demo\\n---\\n")
        (root / "extensions").mkdir(exist_ok=True)
        (root / "extensions" / f"{ref.name}_ext.py").write_text(EXTENSION.format(name=ref.name))

    def update(self, ref, ctx):
        self.install(ref, ctx)

    def remove(self, ref, ctx):
        shutil.rmtree(self._dir(ref, ctx), ignore_errors=True)

    def is_installed(self, ref, ctx):
        return self._dir(ref, ctx).is_dir()

    def installed_path(self, ref, ctx):
        return self._dir(ref, ctx) if self._dir(ref, ctx).is_dir() else None

    def package_root(self, ref, ctx):
        return self.installed_path(ref, ctx)

    def declared_resources(self, ref, ctx):
        return {}

    def details(self, ref, ctx):
        return {"version": "demo"}


SOURCE = Demo()
'''

PLUGIN_MODULE = """from piko import hookimpl


@hookimpl
def piko_register_package_sources(register):
    register("demo", "piko_demo_source.handler:SOURCE")
"""


def test_a_plugin_can_add_a_package_source(pienv: PiEnv) -> None:
    files = {"piko_demo_source/__init__.py": PLUGIN_MODULE, "piko_demo_source/handler.py": SOURCE_MODULE}
    build_wheel(
        pienv.wheelhouse, "piko-demo-source", "1.0", files, {"piko": {"demo-source": "piko_demo_source"}}
    )
    pienv.pi("install", "pip:piko-demo-source")
    assert pienv.pi("install", "demo:alpha").stdout.strip() == "Installed demo:alpha"
    assert pienv.settings()["packages"] == ["pip:piko-demo-source", "demo:alpha"]
    probe = pienv.probe()
    assert "alpha_tool" in probe["tools"]  # its extension file loaded at start-up
    assert [p.split("/")[-2] for p in probe["skills"] if "/demo/" in p] == ["alpha"]
    assert "  demo:alpha" in pienv.pi("list").stdout
    shutil.rmtree(pienv.agent_dir / "demo")
    assert "alpha_tool" in pienv.probe()["tools"]  # missing: installed again at start-up
    pienv.pi("remove", "demo:alpha")
    assert not (pienv.agent_dir / "demo" / "alpha").exists()
    unknown = pienv.pi("install", "frob:x", check=False)
    assert unknown.returncode == 1 and "Unknown package source scheme 'frob:' in frob:x" in unknown.stderr
