"""Built-in resources plugins."""
