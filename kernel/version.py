"""piko's version string (kept equal to pyproject's by a test; read without importing metadata)."""

__version__ = "0.1.0"
