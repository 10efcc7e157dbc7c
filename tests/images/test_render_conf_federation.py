"""The configuration render_conf.py writes for a YARN Federation (federation_conf.py): each role of a
federated cluster, run as the image runs it, read back. No Docker needed."""
from __future__ import annotations

import xml.etree.ElementTree as ET

from tests.images.test_render_conf import render

FEDERATION = {"ROUTER_CLIENTRM_PORT": "41050", "ROUTER_ADMIN_PORT": "41052", "ROUTER_WEB_PORT": "41089",
              "ZK_ADDRESS": "127.0.0.1:41181"}
STORE = "org.apache.hadoop.yarn.server.federation.store.impl.ZookeeperFederationStateStore"


def test_every_role_of_a_federation_shares_the_zookeeper_state_store_and_the_weighted_policy(tmp_path):
    for role in ("resourcemanager", "nodemanager", "router", "client"):
        files = render(tmp_path, role, role, **FEDERATION, FEDERATION_SUBCLUSTER_ID="SC-1")
        yarn = files["yarn-site.xml"]
        assert yarn["yarn.federation.enabled"] == ("false" if role == "nodemanager" else "true"), role
        assert yarn["yarn.federation.state-store.class"] == STORE, role
        assert yarn["yarn.federation.policy-manager"].endswith(".WeightedLocalityPolicyManager"), role
        assert files["core-site.xml"]["hadoop.zk.address"] == "127.0.0.1:41181", role


def test_a_subcluster_rm_is_its_subcluster_and_seeds_its_container_ids_with_its_epoch(tmp_path):
    yarn = render(tmp_path, "rm", "resourcemanager", **FEDERATION, FEDERATION_SUBCLUSTER_ID="SC-2",
                  FEDERATION_EPOCH="1000", RM_RPC_PORT="41032")["yarn-site.xml"]
    assert yarn["yarn.resourcemanager.cluster-id"] == "SC-2"
    assert yarn["yarn.resourcemanager.epoch"] == "1000"
    assert yarn["yarn.resourcemanager.address"] == "127.0.0.1:41032"  # its own, not the Router's


def test_a_nodemanagers_ams_reach_its_amrmproxy_which_runs_the_federation_interceptor(tmp_path):
    yarn = render(tmp_path, "nm", "nodemanager", **FEDERATION, FEDERATION_SUBCLUSTER_ID="SC-2",
                  AMRM_PROXY_PORT="41049", RM_TRACKER_PORT="41031")["yarn-site.xml"]
    assert yarn["yarn.resourcemanager.cluster-id"] == "SC-2"  # the proxy's home sub-cluster
    assert yarn["yarn.nodemanager.amrmproxy.enabled"] == "true"
    assert yarn["yarn.nodemanager.amrmproxy.interceptor-class.pipeline"].endswith(".FederationInterceptor")
    assert yarn["yarn.nodemanager.amrmproxy.address"] == "127.0.0.1:41049"
    assert yarn["yarn.resourcemanager.scheduler.address"] == "127.0.0.1:41049"
    assert yarn["yarn.resourcemanager.resource-tracker.address"] == "127.0.0.1:41031"  # its own RM
    # a MapReduce AM loads its job.xml (the client's scheduler address) over this file: final holds
    final = {p.findtext("name") for p in ET.parse(tmp_path / "nm" / "yarn-site.xml").getroot().iter("property")
             if p.findtext("final") == "true"}
    assert final == {"yarn.resourcemanager.scheduler.address"}
    # its AMs read this file: on, their RM client would go past the proxy to the RM
    assert yarn["yarn.federation.enabled"] == "false"


def test_the_router_runs_the_federation_interceptors_and_a_client_talks_to_the_router(tmp_path):
    router = render(tmp_path, "router", "router", **FEDERATION)["yarn-site.xml"]
    for part in ("clientrm.FederationClientInterceptor", "rmadmin.FederationRMAdminInterceptor",
                 "webapp.FederationInterceptorREST"):
        kind = part.split(".")[0]
        assert router[f"yarn.router.{kind}.interceptor-class.pipeline"].endswith(part)
    assert router["yarn.router.clientrm.address"] == "127.0.0.1:41050"
    client = render(tmp_path, "client", "", **FEDERATION)["yarn-site.xml"]
    assert client["yarn.resourcemanager.address"] == "127.0.0.1:41050"
    assert client["yarn.resourcemanager.admin.address"] == "127.0.0.1:41052"
    assert client["yarn.resourcemanager.webapp.address"] == "127.0.0.1:41089"
    # one Router address: no failover for the client (the Router keeps Hadoop's default, on)
    assert client["yarn.federation.failover.enabled"] == "false"
    assert "yarn.federation.failover.enabled" not in router


def test_without_the_router_ports_nothing_is_federated(tmp_path):
    yarn = render(tmp_path, "rm", "resourcemanager")["yarn-site.xml"]
    assert not any(key.startswith(("yarn.federation.", "yarn.router.")) for key in yarn)
    assert "yarn.nodemanager.amrmproxy.enabled" not in yarn
