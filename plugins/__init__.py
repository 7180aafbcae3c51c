"""piko's built-in plugins; each is registered through an entry point of the ``piko`` group."""
