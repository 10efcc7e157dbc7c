#!/usr/bin/env python3
"""The Kerberos-secured mini-cluster by hand (`make cluster-secure`; docker/DOCKER.md, "The
Kerberos-secured cluster").

Starts the cluster the secure end-to-end tests run on (tests/docker_cluster/secure_cluster.py): a KDC of its
own, a ResourceManager running yarn-drf and one NodeManager, every port a free one on 127.0.0.1, and
prints how to get a ticket and submit as the realm's users. Ctrl-C (or end of input) tears it down;
--keep leaves it running and prints how to remove it.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
os.environ.setdefault("TESTCONTAINERS_CONNECTION_MODE", "docker_host")
os.environ.setdefault("TC_HOST", "127.0.0.1")

from tests.docker_cluster.cluster import YARN_DRF_SCHEDULER, NodeShape  # noqa: E402
from tests.docker_cluster.secure_cluster import REALM, STATUS_TOKEN_FILE, SecureCluster  # noqa: E402

SHAPES = (NodeShape("nm-secure", vcores=8, memory_mb=12288, gpu_mem=0),)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--queues", type=Path, default=ROOT / "conf" / "docker-secure-queues.yaml",
                   help="the queue YAML (default: conf/docker-secure-queues.yaml)")
    p.add_argument("--keep", action="store_true", help="leave the cluster running and exit")
    args = p.parse_args()
    cluster = SecureCluster.create(YARN_DRF_SCHEDULER, args.queues.resolve(), shapes=SHAPES)
    print(f"starting the secure cluster (realm {REALM}, KDC on 127.0.0.1:{cluster.kdc_port})...", flush=True)
    try:
        cluster.start()
    except BaseException:
        cluster.stop()
        raise
    rm = cluster.rm.get_wrapped_container().name
    print(f"""
ResourceManager: http://127.0.0.1:{cluster.web_port}   yarn-drf status: http://127.0.0.1:{cluster.status_port()}/
Users and their passwords: {", ".join(f"{u} {p}" for u, p in cluster.passwords.items())}
A ticket and a job as alice (group analysts), in the RM container (kinit asks for the password;
`kinit -kt /etc/security/keytabs/alice.keytab alice` takes her keytab instead):
  docker exec -it -u alice -w /shared/home/alice {rm} kinit alice
  docker exec -u alice -w /shared/home/alice {rm} yarn org.apache.hadoop.mapreduce.SleepJob \\
      -Dmapreduce.job.queuename=analytics -m 2 -r 0 -mt 1000
The status server's token (POST /v1/reload; `yarn-drf reload` in the RM container reads it): {STATUS_TOKEN_FILE}
""", flush=True)
    if args.keep:
        names = " ".join(c.get_wrapped_container().name for c in (cluster.kdc, cluster.rm, *cluster.nms.values()))
        print(f"left running; remove it with: docker rm -f {names} && docker volume rm {cluster.volume} {cluster.keytabs}")
        return 0
    print("Ctrl-C (or Ctrl-D) stops the cluster.", flush=True)
    try:
        sys.stdin.read()
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
