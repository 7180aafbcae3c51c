"""The plugin platform, piko's microkernel: hook specs, the plugin manager, dispatch, registries, the extension API, tracing, policy and trust."""
