"""Built-in modes plugins."""
