"""MkDocs hooks (``hooks:`` in mkdocs.yml): the navigation lists every diagnostic code's page, by family.

The pages in docs/codes/ are generated from the catalogue (``policyc codes --format markdown --output-dir
docs/codes``); their navigation is too, here, so that no list of codes is kept by hand beside the catalogue."""

from __future__ import annotations

from typing import Any

CODES = "codes"
"""The reference's directory under docs/; its section of mkdocs.yml's nav holds ``codes/index.md``."""


def on_config(config: Any) -> Any:
    from policyc.commands import codes

    section = next(
        entries
        for item in config.nav
        if isinstance(item, dict)
        for entries in item.values()
        if isinstance(entries, list) and f"{CODES}/index.md" in entries
    )
    section.extend(codes.nav(CODES))
    return config
