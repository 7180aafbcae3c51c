"""AWS Signature Version 4 request signing (header form), with hashlib and hmac only.

Follows the published algorithm: a canonical request (method, doubly escaped path for services
other than S3, sorted query, lower-cased trimmed headers, payload hash), the string to sign, and
the HMAC chain ``AWS4<secret> -> date -> region -> service -> aws4_request``.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import hmac
import re
from collections.abc import Mapping
from urllib.parse import quote
from urllib.parse import unquote
from urllib.parse import urlsplit

from attrs import define

ALGORITHM = "AWS4-HMAC-SHA256"
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

# Headers the AWS SDKs never sign (they may change in transit).
UNSIGNABLE_HEADERS = frozenset(
    {
        "authorization", "cache-control", "connection", "expect", "from", "keep-alive", "max-forwards",
        "pragma", "referer", "te", "trailer", "transfer-encoding", "upgrade", "user-agent", "x-amzn-trace-id",
    }
)  # fmt: skip

_SPACES = re.compile(r"\s+")


@define(frozen=True, kw_only=True)
class Credentials:
    """An access key pair, with the session token of temporary credentials."""

    access_key_id: str
    secret_access_key: str
    session_token: str | None = None


@define(frozen=True, kw_only=True)
class SignedRequest:
    """What signing produced: the headers to send and the intermediate strings (for tests)."""

    headers: dict[str, str]
    canonical_request: str
    string_to_sign: str
    signature: str
    signed_headers: str


def escape(value: str) -> str:
    """RFC 3986 escaping of everything but unreserved characters (AWS's ``UriEncode``)."""
    return quote(value, safe="-_.~")


def canonical_path(path: str, *, double_escape: bool = True) -> str:
    """The canonical URI: dot segments removed, and escaped once more unless the service is S3."""
    if not double_escape:
        return path or "/"
    segments: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if segments:
                segments.pop()
        else:
            segments.append(segment)
    normalized = ("/" if path.startswith("/") else "") + "/".join(segments)
    if segments and path.endswith("/"):
        normalized += "/"
    return escape(normalized).replace("%2F", "/") or "/"


def canonical_query(query: str) -> str:
    """Query parameters decoded, escaped again, and sorted by key then value."""
    if not query:
        return ""
    pairs: list[tuple[str, str]] = []
    for part in query.split("&"):
        if not part:
            continue
        key, _, value = part.partition("=")
        pairs.append((escape(unquote(key.replace("+", " "))), escape(unquote(value.replace("+", " ")))))
    pairs.sort()
    return "&".join(f"{k}={v}" for k, v in pairs)


def signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    """The derived key for one day, region and service."""
    key = hmac.new(f"AWS4{secret}".encode(), date.encode(), hashlib.sha256).digest()
    for part in (region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def amz_date(now: _dt.datetime | None = None) -> str:
    """``YYYYMMDDTHHMMSSZ`` in UTC."""
    moment = now or _dt.datetime.now(_dt.UTC)
    if moment.tzinfo is not None:
        moment = moment.astimezone(_dt.UTC)
    return moment.strftime("%Y%m%dT%H%M%SZ")


def sign(
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes | None,
    credentials: Credentials,
    *,
    region: str,
    service: str,
    now: _dt.datetime | None = None,
    add_content_sha256: bool = True,
) -> SignedRequest:
    """Sign a request; returns every header to send (the given ones plus ``host``, ``x-amz-date``,
    ``x-amz-security-token``, ``x-amz-content-sha256`` and ``authorization``)."""
    parts = urlsplit(url)
    out: dict[str, str] = {}
    lower_names = {name.lower() for name in headers}
    if "host" not in lower_names:
        out["host"] = parts.netloc
    out.update(headers)
    date = None
    for name, value in out.items():
        if name.lower() == "x-amz-date":
            date = value
    if date is None:
        date = amz_date(now)
        out["x-amz-date"] = date
    if credentials.session_token and "x-amz-security-token" not in lower_names:
        out["x-amz-security-token"] = credentials.session_token
    payload_hash = next((v for k, v in out.items() if k.lower() == "x-amz-content-sha256"), None)
    if payload_hash is None:
        payload_hash = hashlib.sha256(body).hexdigest() if body is not None else EMPTY_SHA256
        if add_content_sha256:
            out["x-amz-content-sha256"] = payload_hash

    canonical_headers: dict[str, str] = {}
    for name, value in out.items():
        lower = name.lower()
        if lower in UNSIGNABLE_HEADERS or lower.startswith(("proxy-", "sec-")):
            continue
        canonical_headers[lower] = _SPACES.sub(" ", str(value).strip())
    names = sorted(canonical_headers)
    signed_headers = ";".join(names)
    canonical_request = "\n".join(
        [
            method.upper(),
            canonical_path(parts.path or "/", double_escape=service != "s3"),
            canonical_query(parts.query),
            "".join(f"{n}:{canonical_headers[n]}\n" for n in names),
            signed_headers,
            payload_hash,
        ]
    )
    short_date = date[:8]
    scope = f"{short_date}/{region}/{service}/aws4_request"
    string_to_sign = "\n".join(
        [ALGORITHM, date, scope, hashlib.sha256(canonical_request.encode("utf-8")).hexdigest()]
    )
    key = signing_key(credentials.secret_access_key, short_date, region, service)
    signature = hmac.new(key, string_to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
    out["authorization"] = (
        f"{ALGORITHM} Credential={credentials.access_key_id}/{scope}, "
        f"SignedHeaders={signed_headers}, Signature={signature}"
    )
    return SignedRequest(
        headers=out,
        canonical_request=canonical_request,
        string_to_sign=string_to_sign,
        signature=signature,
        signed_headers=signed_headers,
    )
