"""Where piko keeps its files, and the settings layers (global, project, command line)."""
