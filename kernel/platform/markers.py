"""The two pluggy markers of the ``piko`` project: ``hookspec`` for the kernel, ``hookimpl`` for plugins."""

import pluggy

PROJECT_NAME = "piko"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
"""Mark a hook specification (``@hookspec``, ``@hookspec(firstresult=True)``); a plugin that adds
hooks of its own declares them with it in ``piko_addhooks``."""
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Mark a plugin's function as the implementation of the hook it is named after (``@hookimpl``);
``@hookimpl(tryfirst=True)`` / ``trylast=True`` move it to the front or the back of the call order,
``optionalhook=True`` lets it name a hook that may not exist."""
