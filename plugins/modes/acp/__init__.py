"""ACP mode (``pi --mode acp``): piko inside editors that speak the Agent Client Protocol.

This module only registers the mode; the protocol (the ``agent-client-protocol`` package and
pydantic under it) is imported when the mode runs, so loading the plugin costs nothing.
"""

from __future__ import annotations

from piko import registers

piko_register_modes = registers(
    name="acp",
    run="piko.plugins.modes.acp.agent:run_acp",
    description="Agent Client Protocol over stdin/stdout, for editors (Zed, JetBrains, Neovim)",
)
