"""``pi --list-models [search]``: the models that have credentials, as pi prints them."""

from __future__ import annotations

from typing import Any, TextIO

from piko.fuzzy import fuzzy_filter
from piko.guidance import no_models_message


def format_token_count(count: int) -> str:
    """200000 -> 200K, 1000000 -> 1M, 1048576 -> 1.0M (pi's rounding)."""
    for size, suffix in ((1_000_000, "M"), (1_000, "K")):
        if count >= size:
            value = count / size
            return f"{int(value)}{suffix}" if value == int(value) else f"{value:.1f}{suffix}"
    return str(count)


def list_models(app: Any, pattern: str | None, stream: TextIO) -> int:
    """Print the table (provider, model, context, max-out, thinking, images); returns 0."""
    registry = app.model_registry
    models = registry.available_models()
    for message in registry.diagnostics:
        stream.write(f"Warning: {message}\n")
    if not models:
        stream.write(no_models_message() + "\n")
        return 0
    if pattern:
        models = fuzzy_filter(models, pattern, lambda m: f"{m.provider} {m.id}")
        if not models:
            stream.write(f'No models matching "{pattern}"\n')
            return 0
    models.sort(key=lambda m: (m.provider, m.id))
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
    stream.write("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + "\n")
    for row in rows:
        stream.write("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) + "\n")
    return 0
