"""The application: bootstrap (``App``), the command line and its subcommands."""
