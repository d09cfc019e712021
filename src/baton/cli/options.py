"""The option blocks several verbs share, defined once: where the records are (``--data-dir``,
``--store``), whether to go through a running `baton serve` (``--no-server``), and the JSON
output switch (``--json``, whose help says what each verb prints).
"""

from __future__ import annotations

import argparse
from typing import Final

from baton.cli.store_access import add_store_option

#: The help of ``--data-dir`` on every verb that reads or writes the data directory.
DATA_DIR_HELP: Final = "Baton's data directory (or BATON_HOME)"
#: The help of ``--no-server`` on a verb that only reads records.
READ_HERE_HELP: Final = (
    "read the store in this process even when a `baton serve` runs on the data directory"
)


def add_record_options(
    parser: argparse.ArgumentParser,
    *,
    json_help: str | None = None,
    no_server_help: str | None = None,
    store: bool = False,
) -> None:
    """Add the shared block to a verb's parser, in this order: ``--json`` (when
    ``json_help`` says what it prints), ``--data-dir``, ``--no-server`` (when
    ``no_server_help`` says what it changes), ``--store`` (when ``store``)."""
    if json_help is not None:
        parser.add_argument("--json", action="store_true", help=json_help)
    parser.add_argument("--data-dir", metavar="DIR", help=DATA_DIR_HELP)
    if no_server_help is not None:
        parser.add_argument("--no-server", action="store_true", help=no_server_help)
    if store:
        add_store_option(parser)
