"""The extension runtime: pi's extension API mapped to Python, compiled onto the platform's hooks.

An extension file's ``activate(pi)`` factory, its registration shapes, ``@piko.tool`` function
tools, the ``ctx`` handlers receive, the do-nothing ``ctx.ui`` every mode builds on, managed
timers, ``pi.events`` and dynamic provider models. Everything here is a client of
:mod:`piko.platform`: it registers through the same registries and hooks a pip-installed
plugin uses, so the microkernel itself stays small.
"""
