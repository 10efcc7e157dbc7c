"""Data locality over a real HDFS: a NameNode and a DataNode on each NodeManager's host (two racks),
input files spread by HDFS, MapReduce wordcount, and its DATA_LOCAL_MAPS / RACK_LOCAL_MAPS counters
against what random placement gives on the same blocks (tests/docker_cluster/locality.py).

A cluster of its own (the other e2e tests run without HDFS): three equal NodeManagers, each with
room for every map whose block it holds, so that a map off its data is the scheduler's choice, not
the lack of a slot (benchmarks/locality/run.py measures the cluster of unequal nodes).
"""
from __future__ import annotations

import math

import pytest

from tests.docker_cluster.cluster import Cluster, NodeShape
from tests.docker_cluster.conftest import QUEUES, running, scheduler_class
from tests.docker_cluster.hdfs import Hdfs, running_hdfs
from tests.docker_cluster.locality import load_input, random_baseline, wordcount

HOSTS = tuple(NodeShape(f"nm-{i}", vcores=8, memory_mb=8192, gpu_mem=0) for i in (1, 2, 3))


@pytest.fixture(scope="module")
def hdfs_cluster(docker_client, scheduler_name):
    with running_hdfs(Hdfs.create([s.name for s in HOSTS])) as hdfs:
        with running(Cluster.create(scheduler_class(scheduler_name), QUEUES, HOSTS, hdfs=hdfs)) as cluster:
            yield cluster, hdfs


def test_hdfs_block_locations_name_the_yarn_nodes_and_their_racks(hdfs_cluster):
    cluster, hdfs = hdfs_cluster
    nodes = {n["nodeHostName"]: n["rack"] for n in cluster.running_nodes()}
    assert nodes == {h.name: h.rack for h in hdfs.hosts}
    assert len(set(nodes.values())) >= 2
    data = load_input(cluster, hdfs, "/locality/names", files=1, blocks_per_file=3)
    assert {h for hosts in data.blocks for h in hosts} <= set(nodes)


def test_wordcount_maps_are_data_local_well_above_random_placement(hdfs_cluster):
    cluster, hdfs = hdfs_cluster
    data = load_input(cluster, hdfs, "/locality/in", files=2, blocks_per_file=6)
    spread = {hosts for hosts in data.blocks}
    assert len(spread) >= 2, f"HDFS put every block on {spread}: no locality to choose"
    baseline = random_baseline(data.blocks, hdfs)

    run = wordcount(cluster, data, "/locality/out")

    assert run.data_local + run.rack_local + run.other_local == run.maps
    # Random placement makes each map data-local with its block's chance (the oracle): the count is
    # a sum of such draws; three standard deviations above its mean, random placement gets there
    # less than once in 300 runs.
    sd = math.sqrt(run.maps * baseline.data_local_variance)
    assert run.data_local >= run.maps * baseline.data_local + 3 * sd, (run, baseline)
