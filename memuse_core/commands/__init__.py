"""Subcommands of `memuse`, one module per area. Modules define plain functions; `memuse_core.cli`
registers them explicitly, in workflow order."""
