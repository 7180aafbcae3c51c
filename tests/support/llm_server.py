"""The scripted LLM server of the suite: :mod:`piko.testing.llm_server` (public since plugin authors
test with it), plus the suite's own formats, ``support/wire_*.py`` (Bedrock's event stream needs a
provider plugin's encoder; Google's token endpoint is not an LLM API).

The suite's many ``from support.llm_server import LLMServer`` keep working through this module.
``python tests/support/llm_server.py turns.json`` serves a script from another process.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script: make ``support`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from piko.testing.llm_server import *  # noqa: F403
from piko.testing.llm_server import main

for _info in pkgutil.iter_modules([str(Path(__file__).resolve().parent)]):
    if _info.name.startswith("wire_"):
        importlib.import_module(f"support.{_info.name}")  # each registers its format

if __name__ == "__main__":
    sys.exit(main(sys.argv))
