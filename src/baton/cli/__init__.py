"""Baton's command line. Each verb lives in its own module under :mod:`baton.cli.commands`."""
