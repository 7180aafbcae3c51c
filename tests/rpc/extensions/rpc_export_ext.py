"""Test extension answering ``piko_export_html``: writes a small page naming what it was given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from piko import hookimpl


@hookimpl
def piko_export_html(request: Any, ctx: Any) -> str:
    path = Path(request.output_path or "export.html")
    path.write_text(
        f"<html><body>entries={len(request.entries or [])} file={request.session_file}</body></html>"
    )
    return str(path)
