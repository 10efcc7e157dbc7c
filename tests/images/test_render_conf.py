"""The Hadoop configuration docker/hadoop/render_conf.py writes at container start, for the
ResourceManager HA variant: run as the image runs it (a subprocess with an environment), read back
from the XML it wrote. No Docker needed."""
from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RENDER = ROOT / "docker" / "hadoop" / "render_conf.py"
QUEUES = ROOT / "conf" / "docker-queues.yaml"
CAPACITY = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler"
HA = {"RM_HA_IDS": "rm1,rm2", "ZK_ADDRESS": "127.0.0.1:40001", "RM_WEB_PORT_RM2": "40002",
      "YARN_DRF_STATUS_PORT_RM1": "40003"}


def run(tmp: Path, name: str, role: str, **env: str) -> subprocess.CompletedProcess:
    """render_conf.py for `role`, writing into tmp/name, its store tmp/store."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("RM_", "YARN", "ZK_", "QUEUES"))}
    full.update(HADOOP_CONF_DIR=str(tmp / name), RM_CONF_STORE=str(tmp / "store"), QUEUES_YAML=str(QUEUES))
    full.update(env)
    return subprocess.run([sys.executable, str(RENDER), role], env=full, capture_output=True, text=True)


def render(tmp: Path, name: str, role: str, **env: str) -> dict[str, dict[str, str]]:
    """{file name: {key: value}} as render_conf.py writes them for `role`."""
    out = run(tmp, name, role, **env)
    assert out.returncode == 0, out.stderr
    return {f.name: _props(f) for f in (tmp / name).glob("*.xml")}


def _props(path: Path) -> dict[str, str]:
    return {p.findtext("name"): p.findtext("value") for p in ET.parse(path).getroot().iter("property")}


def test_both_resourcemanagers_get_one_identical_yarn_site(tmp_path):
    rm1 = render(tmp_path, "rm1", "resourcemanager", **HA, RM_HA_ID="rm1")
    rm2 = render(tmp_path, "rm2", "resourcemanager", **HA, RM_HA_ID="rm2")
    assert (tmp_path / "rm1" / "yarn-site.xml").read_bytes() == (tmp_path / "rm2" / "yarn-site.xml").read_bytes()
    yarn = rm1["yarn-site.xml"]
    assert "yarn.resourcemanager.ha.id" not in yarn  # each RM names itself on its command line
    assert yarn["yarn.resourcemanager.ha.enabled"] == "true"
    assert yarn["yarn.resourcemanager.ha.rm-ids"] == "rm1,rm2"
    assert yarn["yarn.resourcemanager.store.class"].endswith("ZKRMStateStore")
    assert yarn["yarn.resourcemanager.ha.automatic-failover.embedded"] == "true"
    assert rm2["core-site.xml"]["hadoop.zk.address"] == "127.0.0.1:40001"


def test_each_rm_id_has_its_own_addresses_and_yarn_drf_ports(tmp_path):
    yarn = render(tmp_path, "rm", "resourcemanager", **HA)["yarn-site.xml"]
    assert yarn["yarn.resourcemanager.webapp.address.rm1"] == "127.0.0.1:8088"
    assert yarn["yarn.resourcemanager.webapp.address.rm2"] == "127.0.0.1:40002"
    assert yarn["yarn.resourcemanager.address.rm2"] == "127.0.0.1:18032"
    assert yarn["yarn-drf.bridge.port.rm1"] != yarn["yarn-drf.bridge.port.rm2"]
    assert yarn["yarn-drf.serve.command.rm1"] == "yarn-drf serve --status-port 40003"
    assert yarn["yarn-drf.serve.command.rm2"] == "yarn-drf serve --status-port 25345"
    # the single RM's keys would name one address for both: gone
    assert not {"yarn.resourcemanager.address", "yarn.resourcemanager.hostname", "yarn-drf.bridge.port",
                "yarn-drf.serve.command"} & set(yarn)


def test_only_resourcemanagers_read_the_shared_store(tmp_path):
    """NodeManagers must not: YARN reads node-resources.xml through the same provider, and that
    file differs per node."""
    rm = render(tmp_path, "rm", "resourcemanager", **HA)["yarn-site.xml"]
    nm = render(tmp_path, "nm", "nodemanager", **HA)["yarn-site.xml"]
    key = "yarn.resourcemanager.configuration.provider-class"
    assert rm[key].endswith("FileSystemBasedConfigurationProvider")
    assert rm["yarn.resourcemanager.configuration.file-system-based-store"] == str(tmp_path / "store")
    assert rm["yarn-drf.queues.file"] == "queues.yaml"  # read from that store
    assert key not in nm
    assert nm["yarn.resourcemanager.ha.rm-ids"] == "rm1,rm2"  # the failover proxy still finds the RMs


def test_publish_conf_writes_the_rms_files_and_the_queue_file_into_the_store(tmp_path):
    written = render(tmp_path, "pub", "publish-conf", **HA, YARN_SCHEDULER_CLASS=CAPACITY)
    store = tmp_path / "store"
    assert sorted(p.name for p in store.iterdir()) == [
        "capacity-scheduler.xml", "core-site.xml", "queues.yaml", "resource-types.xml", "yarn-site.xml"]
    assert _props(store / "yarn-site.xml") == written["yarn-site.xml"]
    assert (store / "queues.yaml").read_bytes() == QUEUES.read_bytes()
    assert _props(store / "capacity-scheduler.xml")["yarn.scheduler.capacity.root.prod.user-limit-factor"] == "100"


def test_publish_conf_without_a_queue_file_says_which_file_is_missing(tmp_path):
    out = run(tmp_path, "pub", "publish-conf", **HA, QUEUES_YAML=str(tmp_path / "none.yaml"))
    assert out.returncode != 0 and "none.yaml" in out.stderr and "QUEUES_YAML" in out.stderr
    assert not (tmp_path / "store" / "yarn-site.xml").exists()


@pytest.mark.parametrize("role", ["resourcemanager", "nodemanager"])
def test_without_rm_ha_ids_the_single_rm_configuration_is_unchanged(tmp_path, role):
    yarn = render(tmp_path, role, role)["yarn-site.xml"]
    assert yarn["yarn.resourcemanager.address"] == "127.0.0.1:8032"
    assert yarn["yarn-drf.bridge.port"] == "25334"
    assert not [k for k in yarn if ".ha." in k or k.endswith((".rm1", ".rm2"))]
    assert "yarn.resourcemanager.configuration.provider-class" not in yarn


def test_a_status_token_reaches_every_rm_ids_core(tmp_path):
    """The secure variant's status token (render_conf's add_security) with HA: each RM id's
    command, not the single RM's key the HA configuration drops."""
    token = tmp_path / "status.token"
    yarn = render(tmp_path, "rm", "resourcemanager", **HA, YARN_DRF_STATUS_TOKEN_FILE=str(token))["yarn-site.xml"]
    for rm_id in ("rm1", "rm2"):
        assert yarn[f"yarn-drf.serve.command.{rm_id}"].endswith(f"--status-token-file {token}"), yarn
    assert token.exists()


def test_capacity_scheduler_gets_the_default_queue_tree_its_user_weights_and_created_user_queues(tmp_path):
    """The stock baseline runs the same tree: nested queues by weight, dev's user weights, and an app
    naming no queue mapped to root.users.<user>, which CapacityScheduler creates under a parent that
    has no static children."""
    render(tmp_path, "pub", "publish-conf", **HA, YARN_SCHEDULER_CLASS=CAPACITY)
    cs = _props(tmp_path / "store" / "capacity-scheduler.xml")
    key = "yarn.scheduler.capacity."
    assert cs[key + "root.queues"] == "prod,research,users"
    assert cs[key + "root.research.queues"] == "dev,ml"
    assert cs[key + "root.prod.capacity"] == "2w" and cs[key + "root.research.capacity"] == "1w"
    assert cs[key + "root.research.ml.capacity"] == "2w"  # per-resource weights: the largest
    assert cs[key + "root.research.dev.user-settings.alice.weight"] == "2"
    assert cs[key + "root.research.dev.minimum-user-limit-percent"] == "50"  # CapacityScheduler's bound on weights
    assert cs[key + "root.users.auto-queue-creation-v2.enabled"] == "true"
    assert key + "root.users.queues" not in cs and key + "root.research.auto-queue-creation-v2.enabled" not in cs
    assert cs[key + "queue-mappings"] == "u:%user:root.users.%user"
    assert cs[key + "root.research.dev.user-limit-factor"] == "100"
    assert key + "root.research.user-limit-factor" not in cs
