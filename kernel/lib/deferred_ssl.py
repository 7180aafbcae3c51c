"""Start asyncio without the ``ssl`` module, and give it ``ssl`` the moment anything needs TLS.

``import asyncio`` imports ``ssl`` (``asyncio.base_events``, ``selector_events`` and ``sslproto``
each ``try: import ssl``), and ``ssl`` loads OpenSSL: 29 M of the 254 M instructions of
``python -c "import asyncio"`` (callgrind, ``PYTHONHASHSEED=0``), about 4 ms of every ``pi``
start. A ``pi -p`` turn against a plain-``http`` server and an RPC start never use TLS, so the
``pi`` command calls :func:`import_asyncio_without_ssl` before anything imports asyncio:

1. asyncio is imported while ``import ssl`` fails, so its modules take the branch CPython has
   for builds without ``ssl`` (their ``ssl`` global is ``None``); the failure is lifted right
   after, so any other ``import ssl`` works as always;
2. those ``ssl`` globals are set to a stand-in that imports the real module on first use, so
   asyncio code that reaches for TLS without anyone having imported ``ssl`` (``open_connection
   (host, 443, ssl=True)`` in an extension) still gets it;
3. a finder on ``sys.meta_path`` watches the first real ``import ssl`` (httpx's, an https
   provider's, the stand-in's) and, once the module has run, puts it into asyncio's modules and
   runs ``asyncio.sslproto`` again so that what it defines only with ``ssl`` exists. From then on
   asyncio is exactly as if ``ssl`` had been imported with it.

Nothing here runs for library users of :mod:`piko` (the SDK): only the ``pi`` command asks.
``tests/kernel/test_deferred_ssl.py`` checks an https request through httpx and asyncio TLS
connections with and without an earlier ``import ssl``; ``tests/kernel/test_startup_imports.py``
that a ``pi -p`` turn against a plain-``http`` server and an RPC start do not load ``ssl``.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

_ASYNCIO_MODULES_WITH_SSL = ("asyncio.base_events", "asyncio.selector_events", "asyncio.sslproto")


class _NoSocketIsTls:
    """``ssl.SSLSocket`` while ``ssl`` is not imported: no socket can be one."""


class _SslOnFirstUse:
    """What asyncio's modules hold as ``ssl`` until the real module is imported: any attribute
    read imports it (and the finder then replaces this stand-in everywhere), except the check
    every plain socket call makes (``isinstance(sock, ssl.SSLSocket)``, asyncio refusing TLS
    sockets in ``sock_connect`` and the like), which is answered without ``ssl``."""

    def __getattr__(self, name: str) -> Any:
        if name == "SSLSocket" and "ssl" not in sys.modules:
            return _NoSocketIsTls
        return getattr(importlib.import_module("ssl"), name)

    def __repr__(self) -> str:
        return "<ssl, imported on first use>"


class _HandOverLoader:
    """Runs the real ``ssl`` module, then gives it to asyncio (a loader by duck typing:
    ``importlib.abc`` would import ``importlib.resources``, 15 ms of ``-X importtime``)."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        _hand_over(module)


class _SslImportWatcher:
    """Finds ``ssl`` as the other finders would, with a loader that hands it over to asyncio."""

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "ssl":
            return None
        _stop_watching()
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _HandOverLoader(spec.loader)  # type: ignore[assignment]
        return spec


_watcher = _SslImportWatcher()


def _stop_watching() -> None:
    try:
        sys.meta_path.remove(_watcher)
    except ValueError:
        pass


def _replace_asyncio_ssl(replaces: Callable[[Any], bool], value: Any) -> None:
    """Set the ``ssl`` global of asyncio's modules to ``value`` where ``replaces`` accepts what it
    holds (a module without that global is left alone)."""
    for name in _ASYNCIO_MODULES_WITH_SSL:
        module = sys.modules.get(name)
        namespace = vars(module) if module is not None else {}
        if "ssl" in namespace and replaces(namespace["ssl"]):
            namespace["ssl"] = value


def _hand_over(ssl_module: ModuleType) -> None:
    """Put ``ssl`` where asyncio's modules looked for it, and define what ``sslproto`` defines
    only with it (``SSLAgainErrors`` in CPython 3.11 to 3.13) by running that module again."""
    _replace_asyncio_ssl(lambda held: isinstance(held, _SslOnFirstUse), ssl_module)
    sslproto = sys.modules.get("asyncio.sslproto")
    if sslproto is not None:
        importlib.reload(sslproto)


def import_asyncio_without_ssl() -> None:
    """Import asyncio with ``ssl`` left for later (see the module's docstring). Does nothing when
    asyncio or ``ssl`` is already imported."""
    if "asyncio" in sys.modules or "ssl" in sys.modules:
        return
    sys.modules["ssl"] = None  # type: ignore[assignment]  # ``import ssl`` raises ImportError
    try:
        import asyncio
        import asyncio.sslproto  # noqa: F401
    finally:
        del sys.modules["ssl"]
    _replace_asyncio_ssl(lambda held: held is None, _SslOnFirstUse())
    sys.meta_path.insert(0, _watcher)
