"""The two pluggy markers of the ``piko`` project: ``hookspec`` for the kernel, ``hookimpl`` for plugins."""

import pluggy

PROJECT_NAME = "piko"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
