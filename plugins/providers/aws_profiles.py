"""Named AWS profiles: the static keys of a profile in the shared credentials and config files
(``~/.aws/credentials``, ``~/.aws/config``, or ``AWS_SHARED_CREDENTIALS_FILE`` / ``AWS_CONFIG_FILE``),
as the AWS SDK's profile credential source reads them for Bedrock's ``AWS_PROFILE``."""

from __future__ import annotations

import configparser
from collections.abc import Callable
from pathlib import Path

from attrs import define


@define(frozen=True)
class ProfileKeys:
    """A profile's static keys (``session_token`` for temporary ones)."""

    access_key_id: str
    secret_access_key: str
    session_token: str | None = None


def _read(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, configparser.Error):
        pass  # an unreadable or malformed file holds no profile, as the SDK treats it
    return parser


def profile_keys(profile: str, getenv: Callable[[str], str | None]) -> ProfileKeys | None:
    """``profile``'s keys: the credentials file's ``[profile]`` first, then the config file's
    ``[profile NAME]`` (``[default]`` for ``default``); None when neither holds both keys."""
    home = Path.home() / ".aws"
    credentials = Path(getenv("AWS_SHARED_CREDENTIALS_FILE") or home / "credentials").expanduser()
    config = Path(getenv("AWS_CONFIG_FILE") or home / "config").expanduser()
    sources = ((credentials, profile), (config, profile if profile == "default" else f"profile {profile}"))
    for path, section in sources:
        parser = _read(path)
        if not parser.has_section(section):
            continue
        values = parser[section]
        key_id, secret = values.get("aws_access_key_id"), values.get("aws_secret_access_key")
        if key_id and secret:
            return ProfileKeys(
                key_id.strip(), secret.strip(), (values.get("aws_session_token") or "").strip() or None
            )
    return None
