"""RPC mode (``pi --mode rpc``): pi's JSON protocol over stdin/stdout for front ends and embedders.

This module only registers the mode; the protocol lives in ``rpc_*`` modules imported when the
mode runs, so loading the plugin costs nothing at start-up.
"""

from __future__ import annotations

from piko import registers

piko_register_modes = registers(
    name="rpc",
    run="piko.plugins.modes.rpc.mode:run_rpc",
    description="JSON commands on stdin, responses and events on stdout (pi's RPC protocol)",
)
