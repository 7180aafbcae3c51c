"""``pi --export <session.jsonl> [output.html]``: write a session file as an HTML page and exit.

Registered as a flag that runs instead of a mode; the page itself is ``export.html``'s answer
to ``piko_export_html``.
"""

from __future__ import annotations

import sys
from typing import Any
from typing import TextIO

from piko import registers

piko_register_flags = registers(
    name="export",
    description="Export a session file to HTML and exit",
    type="string",
    value_name="<file>",
    run="piko.plugins.export.cli:run_export",
)


def run_export(app: Any, session_file: str, stream: TextIO) -> int:
    """The flag's action: the output path is the first argument that is not an ``@file``."""
    output = next((a for a in app.options.get("args") or () if not a.startswith("@")), None)
    return export_session(app, session_file, output, stream)


def export_session(app: Any, session_file: str, output_path: str | None, stream: TextIO) -> int:
    """``--export``: print ``Exported to: <path>`` on ``stream`` (0) or ``Error: <message>`` on stderr (1)."""
    import asyncio

    from piko.data.events import ExportRequest
    from piko.engine.export import ExportFailed
    from piko.engine.export import request_export

    request = ExportRequest(session_file=session_file, output_path=output_path or None)
    try:
        path = asyncio.run(request_export(app, request, app.context()))
    except ExportFailed as exc:
        sys.stderr.write(f"Error: {exc}\n")
        return 1
    stream.write(f"Exported to: {path}\n")
    stream.flush()
    return 0
