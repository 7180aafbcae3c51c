"""``pi --list-models [search]``: the models that have credentials, as pi prints them.

A plugin flag that runs instead of a mode, like ``--export``: the kernel knows nothing of it.
"""

from __future__ import annotations

import sys
from typing import Any
from typing import TextIO

from piko import registers

piko_register_flags = registers(
    name="list-models",
    description="List available models (optionally fuzzy-filtered)",
    type="optional",
    value_name="[search]",
    run="piko.plugins.providers.list_models:run_list_models",
)


def run_list_models(app: Any, pattern: str, stream: TextIO) -> int:
    """The flag's action: ``--list-models`` alone (an empty value) lists every model, with a search only the matches."""
    return list_models(app, pattern or None, stream)


def _to_fixed_1(value: float) -> str:
    """JavaScript's ``value.toFixed(1)`` (ties on the exact binary value round up)."""
    from decimal import ROUND_HALF_UP  # here: every start imports this plugin
    from decimal import Decimal  # here: every start imports this plugin

    return str(Decimal(value).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def format_token_count(count: int) -> str:
    """200000 -> 200K, 1000000 -> 1M, 16384 -> 16.4K, 1048576 -> 1.0M (pi's rounding)."""
    for size, suffix in ((1_000_000, "M"), (1_000, "K")):
        if count >= size:
            value = count / size
            return f"{int(value)}{suffix}" if value == int(value) else f"{_to_fixed_1(value)}{suffix}"
    return str(int(count))


def list_models(app: Any, pattern: str | None, stream: TextIO) -> int:
    """Print the table (provider, model, context, max-out, thinking, images); returns 0.

    Problems loading models (a broken ``models.json``) go to stderr first, as pi's.
    """
    from piko.lib.collation import locale_key
    from piko.lib.fuzzy import fuzzy_filter
    from piko.models.guidance import no_models_message

    registry = app.model_registry
    models = registry.available_models()
    for message in registry.diagnostics:
        sys.stderr.write(f"Warning: {message}\n")
    if not models:
        stream.write(no_models_message() + "\n")
        return 0
    if pattern:
        models = fuzzy_filter(models, pattern, lambda m: f"{m.provider} {m.id}")
        if not models:
            stream.write(f'No models matching "{pattern}"\n')
            return 0
    models.sort(key=lambda m: (locale_key(m.provider), locale_key(m.id)))
    headers = ("provider", "model", "context", "max-out", "thinking", "images")
    rows = [
        (
            m.provider,
            m.id,
            format_token_count(m.context_window),
            format_token_count(m.max_tokens),
            "yes" if m.reasoning else "no",
            "yes" if "image" in m.input else "no",
        )
        for m in models
    ]
    widths = [max(len(headers[i]), *(len(r[i]) for r in rows)) for i in range(len(headers))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in rows]
    stream.write("\n".join(lines) + "\n")
    return 0
