"""The plugin platform, piko's microkernel: hook specs, the plugin manager, discovery, ordering, dispatch, registries, provenance and tracing."""
