"""YARN Federation settings of one container (docker/DOCKER.md, "YARN Federation"), applied by
render_conf.py when ROUTER_CLIENTRM_PORT is set: every container of a federated cluster gets it.

The parts and what each container reads:
- the state store: ZooKeeper at ZK_ADDRESS (`ZookeeperFederationStateStore`), where each sub-cluster
  RM registers its addresses and heartbeats, the Router keeps each app's home sub-cluster, and the
  policies per queue live (set with `yarn routeradmin -policy`);
- a sub-cluster RM (FEDERATION_SUBCLUSTER_ID): its sub-cluster id is its cluster id; its epoch
  (FEDERATION_EPOCH) seeds container ids, which must not collide between sub-clusters because the
  containers of one app can come from several;
- a NodeManager (FEDERATION_SUBCLUSTER_ID, AMRM_PROXY_PORT): the AMRMProxy with the
  FederationInterceptor between the AMs it runs and the RMs; the AMs find it as their scheduler
  address, and it asks the home sub-cluster's RM and, through unmanaged AMs, the others;
- the Router (role `router`): the client, admin and web entry points, each a federation interceptor;
- any other container is a client of the Router: its RM addresses are the Router's.
"""
from __future__ import annotations

import json
from collections.abc import Callable

ZK_FEDERATION_STATE_STORE = "org.apache.hadoop.yarn.server.federation.store.impl.ZookeeperFederationStateStore"
# The manager whose per-queue weights `yarn routeradmin -policy -s` saves (the Router accepts weights
# only for this one and two others); its router policy picks an app's home sub-cluster by weight, its
# AMRM policy splits an app's asks over the sub-clusters by weight and headroom.
WEIGHTED_LOCALITY = "org.apache.hadoop.yarn.server.federation.policies.manager.WeightedLocalityPolicyManager"
ROUTER = "org.apache.hadoop.yarn.server.router"
# NodeManager keys its AMs must not take from their job's configuration: a MapReduce AM loads the
# job.xml its client wrote (every key the client had, its scheduler address among them) over this
# yarn-site.xml, and only a final key holds.
NODEMANAGER_FINAL = frozenset({"yarn.resourcemanager.scheduler.address"})
FEDERATION_INTERCEPTOR = "org.apache.hadoop.yarn.server.nodemanager.amrmproxy.FederationInterceptor"


def federation_files(env: Callable[[str, str], str], env_int: Callable[[str, int], int],
                     role: str) -> dict[str, dict[str, str]]:
    """The properties of a federated cluster's container in role `role`, by file."""
    host = env("RM_HOST", "127.0.0.1")
    router = {
        "yarn.router.clientrm.address": f"{host}:{env_int('ROUTER_CLIENTRM_PORT', 8050)}",
        "yarn.router.rmadmin.address": f"{host}:{env_int('ROUTER_ADMIN_PORT', 8052)}",
        "yarn.router.webapp.address": f"{host}:{env_int('ROUTER_WEB_PORT', 8089)}",
    }
    yarn = {
        "yarn.federation.enabled": "true",
        "yarn.federation.state-store.class": ZK_FEDERATION_STATE_STORE,
        "yarn.federation.policy-manager": WEIGHTED_LOCALITY,
        # No cache of the store's sub-clusters and policies: a weight saved with routeradmin (and a
        # sub-cluster that went away) counts for the next app, not five minutes later.
        "yarn.federation.cache-ttl.secs": "0",
        **router,
    }
    subcluster = env("FEDERATION_SUBCLUSTER_ID", "")
    if role == "resourcemanager":
        yarn.update({
            "yarn.resourcemanager.cluster-id": subcluster,
            "yarn.resourcemanager.epoch": str(env_int("FEDERATION_EPOCH", 0)),
            # The RM's heartbeat to the store: the Router drops a sub-cluster whose last heartbeat
            # is older than its expiration (below); Hadoop's defaults are 30 s and 5 minutes.
            "yarn.federation.state-store.heartbeat.initial-delay": "2",
            "yarn.federation.state-store.heartbeat-interval-secs": "5",
            # The distributed-shell client asks for the RMs' resource profiles and treats "not
            # enabled" as none; through the Router that answer arrives wrapped in another
            # exception and the client gives up. On, with the three profiles Hadoop requires.
            "yarn.resourcemanager.resource-profiles.enabled": "true",
        })
    elif role == "nodemanager":
        amrm_proxy = f"{env('NM_HOST', '127.0.0.1')}:{env_int('AMRM_PROXY_PORT', 8049)}"
        yarn.update({
            # The AMRMProxy's home sub-cluster is the NodeManager's cluster id.
            "yarn.resourcemanager.cluster-id": subcluster,
            "yarn.nodemanager.amrmproxy.enabled": "true",
            "yarn.nodemanager.amrmproxy.address": amrm_proxy,
            "yarn.nodemanager.amrmproxy.interceptor-class.pipeline": FEDERATION_INTERCEPTOR,
            # The AMs this NodeManager runs read its configuration: their scheduler is the proxy.
            "yarn.resourcemanager.scheduler.address": amrm_proxy,
            # Off for the NodeManager's own RM client and its AMs (which read this file): with it on,
            # Hadoop's RM clients fail over, an AM through the state store straight to its RM past
            # the proxy (whose token that RM refuses). The FederationInterceptor turns it on in its
            # own copy of the configuration to reach the sub-clusters' RMs.
            "yarn.federation.enabled": "false",
        })
    elif role == "router":
        yarn.update({
            "yarn.router.clientrm.interceptor-class.pipeline": f"{ROUTER}.clientrm.FederationClientInterceptor",
            "yarn.router.rmadmin.interceptor-class.pipeline": f"{ROUTER}.rmadmin.FederationRMAdminInterceptor",
            "yarn.router.webapp.interceptor-class.pipeline": f"{ROUTER}.webapp.FederationInterceptorREST",
            # A killed sub-cluster RM stops heartbeating: after this long the Router marks it lost
            # and places new apps elsewhere (a new app's submission to it fails over to another
            # sub-cluster before that, up to yarn.router.submit.retry times).
            "yarn.router.subcluster.heartbeat.expiration.time": "20s",
            "yarn.router.subcluster.cleaner.interval.time": "5s",
        })
    else:
        # A client: `yarn application`, `yarn jar`, `yarn routeradmin` talk to the Router, one
        # address, no failover (the Router and the AMRMProxy use the store's RM addresses, which
        # they find only with federation failover on, Hadoop's default).
        yarn.update({
            "yarn.federation.failover.enabled": "false",
            "yarn.resourcemanager.address": router["yarn.router.clientrm.address"],
            "yarn.resourcemanager.admin.address": router["yarn.router.rmadmin.address"],
            "yarn.resourcemanager.webapp.address": router["yarn.router.webapp.address"],
        })
    core = {"hadoop.zk.address": env("ZK_ADDRESS", "127.0.0.1:2181")}
    return {"yarn-site.xml": yarn, "core-site.xml": core}


def resource_profiles() -> str:
    """resource-profiles.json of a sub-cluster RM (on its classpath, the configuration directory):
    the `default` profile Hadoop requires once profiles are on (it derives `minimum` and `maximum`
    from the scheduler's allocation limits); apps here name their resources instead."""
    return json.dumps({"default": {"memory-mb": 1024, "vcores": 1}}, indent=2) + "\n"
