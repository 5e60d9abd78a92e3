"""Subcommands of `memuse`, one module per area (imported by `memuse_core.cli.main`)."""
