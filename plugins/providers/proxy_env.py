"""The proxy a provider's request goes through when its ``auth.json`` ``env`` map names one:
``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY`` and ``NO_PROXY`` (any case) read from that map
first, then from the process environment, matched against the request's URL as pi 1.6 does."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from piko.lib.provider_env import provider_env

__all__ = ["PROXY_VARIABLES", "scoped_proxy"]

PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def _lookup(scoped: dict[str, str], name: str) -> str:
    """``name`` (lower case, then upper) from the provider's map, then from the process."""
    for source in (scoped, os.environ):
        value = source.get(name) or source.get(name.upper())
        if value:
            return value
    return ""


def _no_proxy_entry(entry: str) -> tuple[str, int]:
    """A ``NO_PROXY`` entry as ``(host, port)``; port 0 matches any port."""
    entry = entry.strip().lower()
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
        return host, int(port) if port.isdigit() else 0
    if entry.count(":") == 1:
        host, _, port = entry.partition(":")
        if port.isdigit():
            return host, int(port)
    return entry, 0


def _bypassed(host: str, port: int, no_proxy: str) -> bool:
    no_proxy = no_proxy.strip().lower()
    if not no_proxy:
        return False
    if no_proxy == "*":
        return True
    for raw in no_proxy.replace(",", " ").split():
        domain, entry_port = _no_proxy_entry(raw)
        if entry_port and entry_port != port:
            continue
        domain = domain[2:] if domain.startswith("*.") else domain.lstrip(".*")
        if domain and (host == domain or host.endswith("." + domain)):
            return True
    return False


def scoped_proxy(provider: str | None, url: str) -> str | None:
    """The proxy for ``provider``'s request to ``url`` when its env map sets a proxy variable:
    the proxy URL, or ``""`` for a direct connection (``NO_PROXY`` matched, or no proxy for that
    scheme); None when the map names none, so the process's settings apply as usual."""
    scoped = {k: v for k, v in provider_env(provider).items() if k.lower() in PROXY_VARIABLES}
    if not scoped:
        return None
    parts = urlsplit(url)
    scheme = (parts.scheme or "").lower()
    host = (parts.hostname or "").lower()
    if not scheme or not host:
        return ""
    port = parts.port or _DEFAULT_PORTS.get(scheme, 0)
    if _bypassed(host, port, _lookup(scoped, "no_proxy")):
        return ""
    proxy = _lookup(scoped, f"{scheme}_proxy") or _lookup(scoped, "all_proxy")
    if proxy and "://" not in proxy:
        proxy = f"{scheme}://{proxy}"
    return proxy
