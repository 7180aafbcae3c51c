"""Built-in providers plugins: provider APIs (wire protocols), the model catalog, auth, faux.

httpx's package ``__init__`` imports its command-line client (``httpx._main``), which pulls in
click, rich and pygments when they are installed (they are: piko uses them): about 120 ms of a
``pi -p`` run. Marking that module as absent makes httpx fall back to its stub ``main`` (only
the ``httpx`` console script uses it), so importing httpx costs what the client itself costs.
"""

import sys

sys.modules.setdefault("httpx._main", None)  # type: ignore[assignment,arg-type]
