"""docs/production.md's configuration examples are the ones the project runs: every key its XML
blocks set is one the HA Docker cluster's render_conf.py sets (with the same value, unless the value
names a host, a port, the cluster or the core's command line, which each site chooses), every
yarn-drf key is one the shim reads, and every `yarn-drf serve` command line parses."""
from __future__ import annotations

import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.docs.shim_conf import declared_keys
from tests.images.test_render_conf import HA, render
from yarn_bridge.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "production.md"

# Values each site chooses for itself: host names, addresses, the cluster's id, the core's command.
SITE_SPECIFIC = re.compile(r"(hostname|address)\.rm\d$|^yarn\.resourcemanager\.cluster-id$|"
                           r"^hadoop\.zk\.address$|^yarn-drf\.serve\.command(\.rm\d)?$|file-system-based-store$")


def doc_blocks() -> list[dict[str, str]]:
    """Each ```xml block of the page as {name: value}."""
    blocks = re.findall(r"```xml\n(.*?)```", DOC.read_text(), re.S)
    assert blocks, f"{DOC} has no xml examples"
    return [{p.findtext("name"): p.findtext("value") for p in ET.fromstring(f"<c>{b}</c>").iter("property")}
            for b in blocks]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> dict[str, str]:
    """Every key the HA Docker cluster's RM reads, from all its site files."""
    files = render(tmp_path_factory.mktemp("ha"), "rm1", "resourcemanager", **HA, RM_HA_ID="rm1",
                   YARN_SCHEDULER_CLASS="org.yarndrf.shim.YarnDrfScheduler")
    return {k: v for props in files.values() for k, v in props.items()}


def test_every_example_key_is_one_the_ha_cluster_sets_with_the_same_meaning(rendered):
    secure_only = {"yarn-drf.serve.command"}  # the secure example: the single-RM key, checked below
    for block in doc_blocks():
        for key, value in block.items():
            if key in secure_only:
                continue
            assert key in rendered, f"docs/production.md sets {key}, which the HA Docker cluster never sets"
            if not SITE_SPECIFIC.search(key):
                assert value == rendered[key], f"{key}: the page says {value!r}, the HA cluster runs {rendered[key]!r}"


def test_every_yarn_drf_key_of_the_page_is_one_the_shim_reads():
    declared = declared_keys()
    for block in doc_blocks():
        for key in block:
            if key.startswith("yarn-drf."):
                base = re.sub(r"\.rm\d$", "", key)
                assert base in declared, f"docs/production.md sets {key}; ShimConf declares no such key"


def test_every_core_command_line_of_the_page_parses():
    commands = [v for block in doc_blocks() for k, v in block.items() if k.startswith("yarn-drf.serve.command")]
    assert commands
    for command in commands:
        argv = shlex.split(command)
        assert argv[:2] == ["yarn-drf", "serve"], command
        # the shim appends these (docs/yarn-site.md: yarn-drf.serve.command)
        build_parser("serve").parse_args(argv[1:] + ["--queues", "q.yaml", "--token-file", "t"])
