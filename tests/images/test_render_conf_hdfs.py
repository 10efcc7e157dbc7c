"""The configuration render_conf.py writes for the cluster's optional HDFS and its hosts
(HDFS_NAMENODE, CLUSTER_HOSTS, NM_HOST) and for FairScheduler: run as the image runs it, read back.
No Docker needed."""
from __future__ import annotations

import xml.etree.ElementTree as ET

from tests.images.test_render_conf import render, run

FAIR = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler"
# names that resolve on any machine (the cluster's own come from docker --add-host)
HDFS = {"HDFS_NAMENODE": "127.0.0.1:40010", "NN_HTTP_PORT": "40011",
        "CLUSTER_HOSTS": "localhost=/rack-a,127.0.0.1=/rack-b"}


def test_without_hdfs_the_file_system_is_the_shared_volume_and_nodes_carry_their_port(tmp_path):
    files = render(tmp_path, "nm", "nodemanager")
    assert files["core-site.xml"]["fs.defaultFS"] == "file:///"
    assert "hdfs-site.xml" not in files
    assert files["yarn-site.xml"]["yarn.scheduler.include-port-in-node-name"] == "true"
    assert "net.topology.node.switch.mapping.impl" not in files["core-site.xml"]


def test_a_datanode_reports_its_nodemanagers_host_name_and_binds_its_address(tmp_path):
    files = render(tmp_path, "dn", "datanode", **HDFS, NM_HOST="localhost", DN_PORT="40012",
                   DN_HTTP_PORT="40013", DN_IPC_PORT="40014")
    hdfs = files["hdfs-site.xml"]
    assert files["core-site.xml"]["fs.defaultFS"] == "hdfs://127.0.0.1:40010"
    assert hdfs["dfs.namenode.rpc-address"] == "127.0.0.1:40010"
    assert hdfs["dfs.namenode.http-address"] == "127.0.0.1:40011"
    assert hdfs["dfs.datanode.hostname"] == "localhost"
    assert hdfs["dfs.datanode.address"] == "localhost:40012"
    assert hdfs["dfs.datanode.http.address"] == "localhost:40013"
    assert hdfs["dfs.datanode.ipc.address"] == "localhost:40014"
    assert hdfs["dfs.client.use.datanode.hostname"] == "true"


def test_hosts_of_their_own_drop_the_port_from_node_names_and_get_racks_by_name_and_address(tmp_path):
    files = render(tmp_path, "rm", "resourcemanager", **HDFS)
    assert files["yarn-site.xml"]["yarn.scheduler.include-port-in-node-name"] == "false"
    core = files["core-site.xml"]
    assert core["net.topology.node.switch.mapping.impl"] == "org.apache.hadoop.net.TableMapping"
    table = (tmp_path / "rm" / "topology.table").read_text().split("\n")
    assert core["net.topology.table.file.name"] == str(tmp_path / "rm" / "topology.table")
    # Hadoop looks a name up by its address: the last line for an address wins in TableMapping
    assert table == ["localhost /rack-a", "127.0.0.1 /rack-a", "127.0.0.1 /rack-b", "127.0.0.1 /rack-b", ""]


def test_a_cluster_host_without_a_rack_or_an_address_is_refused_by_name(tmp_path):
    bad = run(tmp_path, "rm", "resourcemanager", CLUSTER_HOSTS="nm-cpu")
    assert bad.returncode != 0 and "CLUSTER_HOSTS item 'nm-cpu' is not NAME=/RACK" in bad.stderr
    unresolved = run(tmp_path, "rm2", "resourcemanager", CLUSTER_HOSTS="no-such-host.invalid=/rack-a")
    assert unresolved.returncode != 0 and "'no-such-host.invalid' does not resolve" in unresolved.stderr


def test_fairscheduler_gets_an_allocation_file_with_the_yaml_queues_weights_and_acls(tmp_path):
    files = render(tmp_path, "rm", "resourcemanager", YARN_SCHEDULER_CLASS=FAIR)
    path = files["yarn-site.xml"]["yarn.scheduler.fair.allocation.file"]
    root = ET.parse(path).getroot()
    assert root.findtext("defaultQueueSchedulingPolicy") == "drf"
    top = root.find("queue")
    assert top.get("name") == "root" and top.findtext("aclSubmitApps") == " "
    queues = {q.get("name"): q for q in top.iter("queue")}
    # the default tree: the per-resource weight vector of ml counts by its largest weight
    assert {n: q.findtext("weight") for n, q in queues.items() if n != "root"} == {
        "prod": "2", "research": "1", "dev": "1", "ml": "2", "users": "1"}
    assert [q.get("name") for q in queues["research"].findall("queue")] == ["dev", "ml"]
    assert queues["prod"].findtext("aclSubmitApps") == "hadoop,alice"
    # the parent placement fills (`children: {}`) stays a parent, as FairScheduler reads type="parent"
    assert queues["users"].get("type") == "parent" and queues["dev"].get("type") is None
    assert "capacity-scheduler.xml" not in files
