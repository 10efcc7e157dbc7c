#!/usr/bin/env bash
# Container start: write the Hadoop configuration from the environment, prepare the shared volume,
# then run the role: `resourcemanager`, `nodemanager`, `router` (YARN Federation), `namenode` and `datanode` (HDFS),
# `zookeeper` and `publish-conf` (HA clusters, below), or any command (a client).
set -euo pipefail
python3 /opt/hadoop/bin/render_conf.py "${1:-}"
# The shared volume holds the job staging area and the user's home (LocalFileSystem's home
# directory, where distributed shell uploads its jar), at the same path in every container.
mkdir -p /shared/staging "$(getent passwd "$(id -un)" | cut -d: -f6)" || {
  echo "entrypoint: /shared is not writable by $(id -un) (uid $(id -u)); mount a volume owned by it" >&2; exit 1; }
case "${1:-}" in
  # In an HA cluster every RM reads the same yarn-site.xml: the container names its RM id on the
  # command line (a generic -D option, which the RM's configuration files do not override).
  resourcemanager) exec yarn resourcemanager ${RM_HA_ID:+"-Dyarn.resourcemanager.ha.id=$RM_HA_ID"} ;;
  nodemanager) exec yarn "$1" ;;
  # YARN Federation's Router (federation_conf.py): client, admin and web entry points.
  router) exec yarn router ;;
  # The ZooKeeper 3.8 server among Hadoop's jars, standalone and on loopback: the HA cluster's
  # state store and leader election. No admin server (it would take port 8080).
  zookeeper)
    ZK_DATA_DIR="${ZK_DATA_DIR:-/var/lib/hadoop/zookeeper}"
    mkdir -p "$ZK_DATA_DIR"
    printf '%s\n' "tickTime=${ZK_TICK_MS:-2000}" "dataDir=$ZK_DATA_DIR" "clientPort=${ZK_PORT:-2181}" \
      "clientPortAddress=127.0.0.1" "admin.enableServer=false" "4lw.commands.whitelist=ruok,srvr" \
      > "$HADOOP_CONF_DIR/zoo.cfg"
    exec yarn org.apache.zookeeper.server.ZooKeeperServerMain "$HADOOP_CONF_DIR/zoo.cfg" ;;
  # HDFS (docker/DOCKER.md, "HDFS"): a NameNode formatted at its first start, and a DataNode per
  # NodeManager host.
  namenode)
    [ -f /var/lib/hadoop/dfs/name/current/VERSION ] || hdfs namenode -format -nonInteractive
    exec hdfs namenode ;;
  datanode) exec hdfs datanode ;;
  # HA: the configuration store every RM reads was written above (render_conf.py publish-conf).
  publish-conf) ;;
  "") exec bash ;;
  *) exec "$@" ;;
esac
