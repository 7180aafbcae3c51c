"""Package management: ``pi install``/``remove``/``update``/``list``/``config``, sources, trust commands.

Plugins: ``packages.cli`` (the subcommands), ``packages.pip``, ``packages.git``,
``packages.path``, ``packages.npm`` (one package source each) and ``packages.resources``
(skills, prompt templates and themes of installed packages, through ``resources_discover``).
"""
