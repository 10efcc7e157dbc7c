"""Each yarn-site.xml key of yarn-drf is documented in one place, docs/yarn-site.md, and that table and
the shim (ShimConf.java) name the same keys: a key the shim reads is never undocumented, and the
table never documents a key the shim does not know."""
from __future__ import annotations

import re
from pathlib import Path

from tests.docs.shim_conf import PREFIX, declared_keys

ROOT = Path(__file__).resolve().parents[2]
TABLE_PAGE = ROOT / "docs" / "yarn-site.md"
# A table row that documents a key: its first cell is the key.
KEY_ROW = re.compile(r"^\| `(yarn-drf\.[a-z0-9.-]+)` \|", re.M)


def test_the_key_table_names_exactly_the_keys_the_shim_reads():
    documented = KEY_ROW.findall(TABLE_PAGE.read_text())
    assert len(documented) == len(set(documented)), "a key has two rows"
    shim = declared_keys()
    assert not shim - set(documented), f"read by the shim but not in docs/yarn-site.md: {sorted(shim - set(documented))}"
    assert not set(documented) - shim, f"in docs/yarn-site.md but unknown to the shim: {sorted(set(documented) - shim)}"


def test_no_other_page_has_a_key_table_of_its_own():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        if page != TABLE_PAGE:
            rows = KEY_ROW.findall(page.read_text())
            assert not rows, f"{page.relative_to(ROOT)} documents {rows} again: link to docs/yarn-site.md instead"


def test_every_key_is_under_the_shims_prefix():
    assert all(key.startswith(PREFIX) for key in declared_keys())
