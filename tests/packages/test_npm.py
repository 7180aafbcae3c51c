"""``npm:`` pi packages, served by a small npm registry on 127.0.0.1: skills, prompts, themes; TS reported."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import shutil
import tarfile
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from urllib.parse import unquote

import pytest
from pkg_env import PiEnv
from support.http_servers import QuietHandler
from support.http_servers import serving

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")

PACKAGE_FILES = {
    "package.json": json.dumps(
        {
            "name": "pi-demo-pack",
            "version": "1.0.0",
            "keywords": ["pi-package"],
            "pi": {"skills": ["./skills"], "prompts": ["./prompts"], "extensions": ["./extensions"]},
        }
    ),
    "skills/triage/SKILL.md": "---\nname: triage\ndescription: Triage issues\n---\nSteps\n",
    "prompts/standup.md": "---\ndescription: Standup\n---\nWrite a standup\n",
    "themes/unused.json": "{}",
    "extensions/notify.ts": "export default function () {}\n",
}


def _tarball(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class Registry(QuietHandler):
    """Just enough of the npm registry: a packument per package and its tarballs."""

    tarballs: dict[str, bytes] = {}
    packuments: dict[str, dict[str, object]] = {}

    def do_GET(self) -> None:
        path = unquote(self.path.split("?", 1)[0]).lstrip("/")
        if path in self.tarballs:
            body, kind = self.tarballs[path], "application/octet-stream"
        elif path in self.packuments:
            body, kind = json.dumps(self.packuments[path]).encode(), "application/json"
        else:
            self.reply(404, b'{"error":"not found"}', "application/json")
            return
        self.reply(200, body, kind)


@pytest.fixture
def registry() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    data = _tarball(PACKAGE_FILES)
    tar_path = "pi-demo-pack/-/pi-demo-pack-1.0.0.tgz"
    Registry.tarballs = {tar_path: data}
    Registry.packuments = {
        "pi-demo-pack": {
            "name": "pi-demo-pack",
            "dist-tags": {"latest": "1.0.0"},
            "versions": {
                "1.0.0": {
                    "name": "pi-demo-pack",
                    "version": "1.0.0",
                    "dist": {
                        "tarball": url + tar_path,
                        "shasum": hashlib.sha1(data).hexdigest(),
                        "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode(),
                    },
                }
            },
        }
    }
    with serving(server):
        yield url


def _npm_env(pienv: PiEnv, url: str) -> dict[str, str]:
    return {
        "NPM_CONFIG_REGISTRY": url,
        "NPM_CONFIG_PREFIX": str(pienv.root / "npm-global"),
        "NPM_CONFIG_CACHE": str(pienv.root / "npm-cache"),
        "NPM_CONFIG_GLOBALCONFIG": str(pienv.root / "no-global-npmrc"),
        "NPM_CONFIG_USERCONFIG": str(pienv.root / "no-npmrc"),
        "NPM_CONFIG_AUDIT": "false",
        "NPM_CONFIG_FUND": "false",
        "NPM_CONFIG_UPDATE_NOTIFIER": "false",
        "NPM_CONFIG_OFFLINE": "false",
    }


def test_npm_package_global_and_project(pienv: PiEnv, registry: str) -> None:
    env = _npm_env(pienv, registry)
    pienv.pi("install", "npm:pi-demo-pack", **env)
    root = pienv.root / "npm-global" / "lib" / "node_modules" / "pi-demo-pack"
    assert (root / "package.json").is_file()
    assert pienv.settings() == {"packages": ["npm:pi-demo-pack"]}
    listing = pienv.pi("list", **env).stdout
    assert f"  npm:pi-demo-pack\n    {root}\n    1.0.0" in listing
    probe = pienv.probe(**env)
    assert probe["skills"] == [str(root / "skills" / "triage" / "SKILL.md")]
    assert probe["prompts"] == [str(root / "prompts" / "standup.md")]
    assert probe["themes"] == []  # the manifest lists no themes
    assert any(
        "npm:pi-demo-pack: TypeScript/JavaScript extensions are not supported" in n for n in probe["notices"]
    )

    project = pienv.root / "proj"
    project.mkdir()
    pienv.pi("install", "-l", "npm:pi-demo-pack@1.0.0", cwd=project, **env)
    local = project / ".pi" / "npm" / "node_modules" / "pi-demo-pack"
    assert (local / "package.json").is_file()
    pienv.pi("trust", cwd=project)
    assert pienv.probe(cwd=project, **env)["skills"] == [
        str(local / "skills" / "triage" / "SKILL.md")
    ]  # the project's wins

    pienv.pi("remove", "npm:pi-demo-pack", **env)
    assert not root.exists()
    assert pienv.probe(**env)["skills"] == []
