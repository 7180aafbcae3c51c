"""Package sources as written (``pip:x``, ``git:host/repo@v1``, ``./dir``, ``npm:@a/b``) and parsed.

A source names its scheme with a prefix. Without one, pi's forms still work: a protocol URL
(``https://``, ``ssh://``, ``git://``) is a git repository, a path (``/abs``, ``./rel``,
``../rel``, ``~/dir``) is a local package used in place (a wheel or sdist file goes to pip),
and a bare name is a Python requirement for pip.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlparse

from piko.lib.records import Record
from piko.lib.records import field

SCHEMES = ("pip", "git", "path", "npm")
ARCHIVE_SUFFIXES = (".whl", ".tar.gz", ".tgz", ".zip", ".tar.bz2")
PROTOCOL_URL = re.compile(r"^(https?|ssh|git)://", re.IGNORECASE)
SCHEME_PREFIX = re.compile(r"^([a-z][a-z0-9+.-]*):(?!//)", re.IGNORECASE)
REQUIREMENT = re.compile(
    r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(\[[^\]]*\])?\s*(.*)$", re.DOTALL
)


class SourceError(ValueError):
    """A source that cannot be understood."""


class PackageRef(Record, kw_only=False):
    """One package source, parsed.

    ``identity`` names the package regardless of version or ref (``pip:piko-foo``,
    ``git:github.com/acme/tools``, ``path:/abs/dir``, ``npm:@acme/skills``): the same package
    listed globally and in a project is one package, and the project's entry wins.
    """

    scheme: str
    source: str  # as written
    spec: str  # the part after the scheme
    identity: str
    pinned: bool = False
    name: str | None = None  # pip distribution or npm package name
    requirement: str | None = None  # pip: what to hand the installer
    local_path: Path | None = None  # path: the folder or file; pip: a wheel, sdist or project path
    repo: str | None = None  # git: what to clone
    host: str = ""
    repo_path: str = ""
    ref: str | None = None
    extras: dict[str, str] = field(factory=dict)


def normalize_dist_name(name: str) -> str:
    """PEP 503 normalization: ``Piko_Foo.bar`` -> ``piko-foo-bar``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def expand_home(value: str) -> str:
    if value == "~" or value.startswith("~/"):
        return str(Path.home()) + value[1:]
    return value


def looks_like_path(value: str) -> bool:
    """pi's local paths: absolute, ``./``, ``../``, ``~``, ``.``, ``..`` (and Windows drives)."""
    v = value.strip()
    return (
        v in (".", "..", "~")
        or v.startswith(("/", "./", "../", "~/", ".\\", "..\\"))
        or bool(re.match(r"^[A-Za-z]:[\\/]", v))
    )


def scheme_of(source: str, known: tuple[str, ...] = SCHEMES) -> str:
    """The scheme a source belongs to (see the module docstring)."""
    text = source.strip()
    match = SCHEME_PREFIX.match(text)
    if match and match.group(1).lower() in known:
        return match.group(1).lower()
    if PROTOCOL_URL.match(text):
        return "git"
    if looks_like_path(text):
        return "pip" if text.lower().endswith(ARCHIVE_SUFFIXES) else "path"
    if match and not re.match(r"^[A-Za-z]:[\\/]", text):
        raise SourceError(f"Unknown package source scheme '{match.group(1)}:' in {source}")
    return "pip"


def strip_scheme(source: str, scheme: str) -> str:
    text = source.strip()
    prefix = f"{scheme}:"
    return text[len(prefix) :].strip() if text.lower().startswith(prefix) else text


def resolve_path(value: str, base: Path) -> Path:
    """A path from a source, relative to ``base`` (the settings file's folder or the cwd)."""
    path = Path(expand_home(value.strip()))
    return Path(os.path.normpath(path if path.is_absolute() else base / path))


# ---------------------------------------------------------------------------
# pip
# ---------------------------------------------------------------------------


def _archive_name(filename: str) -> str | None:
    """The distribution name in a wheel or sdist file name."""
    lower = filename.lower()
    if lower.endswith(".whl"):
        return normalize_dist_name(filename.split("-", 1)[0])
    for suffix in ARCHIVE_SUFFIXES:
        if lower.endswith(suffix):
            stem = filename[: -len(suffix)]
            if "-" in stem:
                return normalize_dist_name(stem.rsplit("-", 1)[0])
    return None


def parse_pip(source: str, base: Path) -> PackageRef:
    """``pip:<requirement>``: a name with a version specifier, ``name @ url``, or a file/URL."""
    spec = strip_scheme(source, "pip")
    if not spec:
        raise SourceError(f"Missing requirement in {source}")
    if looks_like_path(spec) or (("/" in spec or "\\" in spec) and "://" not in spec and " @ " not in spec):
        path = resolve_path(spec, base)
        name = (
            _archive_name(path.name) if path.suffix or path.name.lower().endswith(ARCHIVE_SUFFIXES) else None
        )
        identity = f"pip:{name}" if name else f"pip:{path}"
        pinned = path.name.lower().endswith(ARCHIVE_SUFFIXES)
        return PackageRef("pip", source, spec, identity, pinned=pinned, name=name,
                          requirement=str(path), local_path=path)  # fmt: skip
    if re.match(
        r"^[A-Za-z][A-Za-z0-9+.-]*://", spec
    ):  # a URL without a name: git+https://..., https://.../x.whl
        url = spec.split("#", 1)[0]
        name = _archive_name(urlparse(url).path.rsplit("/", 1)[-1])
        egg = re.search(r"[#&]egg=([A-Za-z0-9._-]+)", spec)
        name = name or (normalize_dist_name(egg.group(1)) if egg else None)
        identity = f"pip:{name}" if name else f"pip:{url}"
        pinned = url.lower().endswith(ARCHIVE_SUFFIXES) or bool(re.search(r"@[0-9a-f]{7,40}$", url))
        return PackageRef("pip", source, spec, identity, pinned=pinned, name=name, requirement=spec)
    match = REQUIREMENT.match(spec)
    if not match:
        raise SourceError(f"Not a Python requirement: {spec}")
    name = normalize_dist_name(match.group(1))
    rest = match.group(3).strip()
    if rest and not re.match(r"^(\(|[<>=!~;@]|\s)", rest):
        raise SourceError(f"Not a Python requirement: {spec}")
    version_part = rest.split(";", 1)[0].strip().strip("()")
    pinned = version_part.startswith("@") or any(
        re.match(r"^===?\s*[^*\s]+$", clause.strip()) for clause in version_part.split(",")
    )
    return PackageRef("pip", source, spec, f"pip:{name}", pinned=pinned, name=name, requirement=spec)


# ---------------------------------------------------------------------------
# git
# ---------------------------------------------------------------------------


def _split_ref(url: str) -> tuple[str, str | None]:
    """``repo#ref`` (piko) or pi's ``repo@ref`` (after the host part)."""
    if "#" in url:
        repo, ref = url.split("#", 1)
        return repo, ref or None
    scp = re.match(r"^(git@[^:]+:)(.+)$", url)
    if scp:
        head, rest = scp.group(1), scp.group(2)
    elif "://" in url:
        parsed = urlparse(url)
        head = f"{parsed.scheme}://{parsed.netloc}"
        rest = url[len(head) :]
    else:
        head, rest = "", url
    if "@" in rest:
        path, ref = rest.rsplit("@", 1)
        if path and ref and "/" not in ref:
            return head + path, ref
    return url, None


def parse_git(source: str, base: Path) -> PackageRef:
    """``git:<url>[#ref]`` and pi's forms (``git:github.com/u/r@v1``, ``https://...``, ``git@host:u/r``)."""
    spec = strip_scheme(source, "git")
    if not spec:
        raise SourceError(f"Missing repository in {source}")
    url, ref = _split_ref(spec)
    if url.startswith("file://") or looks_like_path(url):
        local = Path(urlparse(url).path) if url.startswith("file://") else resolve_path(url, base)
        repo = str(local)
        host, repo_path = "local", str(local).strip("/\\").replace("\\", "/")
    else:
        scp = re.match(r"^git@([^:]+):(.+)$", url)
        if scp:
            repo, host, repo_path = url, scp.group(1), scp.group(2)
        elif "://" in url:
            parsed = urlparse(url)
            repo, host, repo_path = url, parsed.hostname or "", parsed.path
        else:
            host, _, repo_path = url.partition("/")
            if not repo_path or ("." not in host and host != "localhost"):
                raise SourceError(f"Not a git repository URL: {spec}")
            repo = f"https://{url}"
        repo_path = repo_path.strip("/")
        if repo_path.endswith(".git"):
            repo_path = repo_path[:-4]
        if not host or not repo_path:
            raise SourceError(f"Not a git repository URL: {spec}")
    if ".." in Path(repo_path).parts:
        raise SourceError(f"Not a git repository URL: {spec}")
    return PackageRef("git", source, spec, f"git:{host}/{repo_path}", pinned=bool(ref), repo=repo,
                      host=host, repo_path=repo_path, ref=ref)  # fmt: skip


# ---------------------------------------------------------------------------
# path and npm
# ---------------------------------------------------------------------------


def parse_path(source: str, base: Path) -> PackageRef:
    """``path:<dir>`` or a bare path: a folder (or one extension file) used where it is."""
    spec = strip_scheme(source, "path")
    if not spec:
        raise SourceError(f"Missing path in {source}")
    path = resolve_path(spec, base)
    return PackageRef("path", source, spec, f"path:{path}", pinned=True, local_path=path)


def split_npm_spec(spec: str) -> tuple[str, str | None]:
    """``@scope/name@1.2`` -> (``@scope/name``, ``1.2``)."""
    match = re.match(r"^(@?[^@]+(?:/[^@]+)?)(?:@(.+))?$", spec)
    if not match:
        return spec, None
    return match.group(1), match.group(2)


def parse_npm(source: str, base: Path) -> PackageRef:
    """``npm:<package>[@version]``."""
    spec = strip_scheme(source, "npm")
    name, version = split_npm_spec(spec)
    if not name or not re.match(r"^(@[a-z0-9._~-]+/)?[a-z0-9._~-]+$", name, re.IGNORECASE):
        raise SourceError(f"Not an npm package name: {spec}")
    return PackageRef("npm", source, spec, f"npm:{name}", pinned=bool(version), name=name)


PARSERS = {"pip": parse_pip, "git": parse_git, "path": parse_path, "npm": parse_npm}


def settings_form(ref: PackageRef, base: Path) -> str:
    """How a source is written to settings: local paths relative to the settings folder, as pi does."""
    if ref.scheme == "git" and ref.host == "local":  # a repository on disk: absolute, whatever the cwd
        return f"git:{ref.repo}" + (f"#{ref.ref}" if ref.ref else "")
    if ref.local_path is None or ref.scheme not in ("path", "pip"):
        return ref.source.strip()
    try:
        rel = os.path.relpath(ref.local_path, base)
    except ValueError:  # another drive on Windows
        rel = str(ref.local_path)
    if not os.path.isabs(rel) and rel != "." and not rel.startswith(".."):
        rel = f"./{rel}"
    return f"pip:{rel}" if ref.scheme == "pip" else rel
