"""Where the stock's files sit: `stock/<ruleset>/<cells>x<adds>/<file>`. Apart from `index` (which
loads sqlite3) so the validator can tell a stock file by its path without loading the index."""

from __future__ import annotations

import re
from collections.abc import Sequence

STOCK_DIR = "stock"
_GROUP = re.compile(r"[0-9]+x[0-9]+", re.ASCII)


def is_stock_path(parts: Sequence[str]) -> bool:
    """Whether a file (given by its path parts) is in the stock's layout,
    `stock/<ruleset>/<cells>x<adds>/<file>`."""
    return (
        len(parts) >= 4
        and parts[-4] == STOCK_DIR
        and parts[-3].isascii()
        and parts[-3].isdigit()
        and _GROUP.fullmatch(parts[-2]) is not None
    )
