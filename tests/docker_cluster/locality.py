"""Data locality of MapReduce over HDFS on the Docker cluster, for the e2e test and the benchmark
(benchmarks/locality/run.py): input files spread by HDFS over the DataNodes, wordcount over them,
its locality counters, and what random placement would give on the same blocks (the oracle).
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from tests.docker_cluster.cluster import MR_EXAMPLES_JAR, Cluster
from tests.docker_cluster.hdfs import Hdfs

BLOCK = 1 << 20  # the NameNode's smallest block size: many blocks from little data
COUNTERS = {"maps": "Launched map tasks", "data_local": "Data-local map tasks",
            "rack_local": "Rack-local map tasks", "other_local": "Other local map tasks"}


@dataclass(frozen=True)
class Input:
    directory: str
    blocks: list[tuple[str, ...]]  # each block's hosts, as HDFS tells clients
    words: int  # how many words the files hold (wordcount's counts sum to it)


@dataclass(frozen=True)
class Baseline:
    """The expected fractions of maps that land data-local and rack-local when each map goes to a
    NodeManager drawn uniformly at random, whatever its split's hosts; and the variance, per map,
    of the data-local count (the mean of each block's p(1-p))."""
    data_local: float
    rack_local: float
    data_local_variance: float


@dataclass(frozen=True)
class Run:
    maps: int
    data_local: int
    rack_local: int
    other_local: int
    seconds: float  # the app's elapsed time in the RM (submission to finish)
    am_host: str  # the host (HDFS's name for it) of the NodeManager that ran the job's AM

    @property
    def data_local_fraction(self) -> float:
        return self.data_local / self.maps

    @property
    def rack_local_fraction(self) -> float:
        return self.rack_local / self.maps


def load_input(cluster: Cluster, hdfs: Hdfs, directory: str, *, files: int, blocks_per_file: int,
               replication: int = 1) -> Input:
    """Writes `files` text files of `blocks_per_file` 1 MiB blocks into HDFS from the RM container
    (a client on no DataNode's host, so HDFS picks each block's first DataNode at random)."""
    # Each file stops 1000 bytes short of its last block's end, so its last split is a block of its
    # own (FileInputFormat merges a tail under a tenth of a block into the split before).
    size = blocks_per_file * BLOCK - 1000
    make = ("import random,sys\n"
            "r=random.Random(int(sys.argv[1])); n=int(sys.argv[2]); out=open(sys.argv[3],'w'); words=0\n"
            "while out.tell() < n - 80:\n"
            "    line=' '.join('w%d' % r.randrange(1000) for _ in range(8)); out.write(line+'\\n'); words+=8\n"
            "out.write('x'*(n-out.tell()-1)+'\\n'); print(words+1)\n")
    local = f"/tmp{directory}"
    words = 0
    code, out = cluster.exec(["bash", "-c", f"rm -rf {local} && mkdir -p {local}"])
    assert code == 0, out
    for i in range(files):
        code, out = cluster.exec(["python3", "-c", make, str(i), str(size), f"{local}/part-{i:03d}.txt"])
        assert code == 0, out
        words += int(out.split()[-1])
    put = (f"hdfs dfs -mkdir -p {shlex.quote(directory)} && hdfs dfs -D dfs.blocksize={BLOCK} "
           f"-D dfs.replication={replication} -put {local}/* {shlex.quote(directory)}/")
    code, out = cluster.exec(["bash", "-c", put])
    assert code == 0, f"hdfs dfs -put failed:\n{out[-3000:]}"
    blocks = hdfs.block_hosts(directory)
    assert len(blocks) == files * blocks_per_file, f"{len(blocks)} blocks, expected {files * blocks_per_file}"
    return Input(directory, blocks, words)


def random_baseline(blocks: list[tuple[str, ...]], hdfs: Hdfs) -> Baseline:
    """The oracle: per block, the chance that a NodeManager drawn uniformly holds a replica
    (data-local), or is in a rack of one without holding it (rack-local); averaged over blocks."""
    nodes = {h.name: h.rack for h in hdfs.hosts}
    data = rack = variance = 0.0
    for hosts in blocks:
        local = {h for h in hosts if h in nodes}
        racks = {nodes[h] for h in local}
        p = len(local) / len(nodes)
        data += p
        variance += p * (1 - p)
        rack += sum(1 for n, r in nodes.items() if n not in local and r in racks) / len(nodes)
    return Baseline(data / len(blocks), rack / len(blocks), variance / len(blocks))


def data_local_ceiling(blocks: list[tuple[str, ...]], slots: dict[str, int], am_host: str) -> int:
    """The most maps that can run data-local at once: a map needs a free vcore (`slots`: each
    host's, one a map) on a host of its block, and the AM's host has one vcore fewer. Where the AM
    runs moves it: an AM on a host whose blocks outnumber its vcores costs a data-local map that no
    locality rule can win back without waiting for a map to end. A maximum matching of blocks to
    vcores (augmenting paths), so replicas on several hosts count right."""
    free = {h: n - (h == am_host) for h, n in slots.items()}
    holder: dict[tuple[str, int], int] = {}  # (host, vcore) -> the block matched to it

    def place(b: int, seen: set[tuple[str, int]]) -> bool:
        for h in blocks[b]:
            for v in range(max(free.get(h, 0), 0)):
                slot = (h, v)
                if slot not in seen:
                    seen.add(slot)
                    if slot not in holder or place(holder[slot], seen):
                        holder[slot] = b
                        return True
        return False

    return sum(place(b, set()) for b in range(len(blocks)))


def wordcount(cluster: Cluster, data: Input, output: str, queue: str = "root.research.dev") -> Run:
    """Runs wordcount over the input, checks its result, and returns its locality counters and
    time. Speculative maps are off: each split's map runs once, so the counters count splits. The
    queue by its full path: FairScheduler reads a short name as a queue under root (it would create
    root.dev beside the tree's root.research.dev)."""
    cmd = ["yarn", "jar", MR_EXAMPLES_JAR, "wordcount", f"-Dmapreduce.job.queuename={queue}",
           "-Dmapreduce.map.speculative=false", "-Dmapreduce.job.reduces=1", data.directory, output]
    code, out = cluster.exec(cmd)
    assert code == 0, f"wordcount into {output} failed:\n{out[-4000:]}"
    counters = {key: _counter(out, label) for key, label in COUNTERS.items()}
    assert counters["maps"] == len(data.blocks), f"{counters} for {len(data.blocks)} blocks:\n{out[-3000:]}"
    code, text = cluster.exec(["bash", "-c", f"hdfs dfs -cat {shlex.quote(output)}/part-r-*"])
    assert code == 0, text
    counted = sum(int(line.rsplit("\t", 1)[1]) for line in text.splitlines() if "\t" in line)
    assert counted == data.words, f"wordcount counted {counted} words, the input has {data.words}"
    submitted = re.search(r"Submitted application (application_\d+_\d+)", out)
    assert submitted, out[-3000:]
    app = cluster.rest(f"/apps/{submitted.group(1)}")["app"]
    assert app["finalStatus"] == "SUCCEEDED", app
    am_address = app.get("amHostHttpAddress", "").rsplit(":", 1)[0]
    return Run(seconds=app["elapsedTime"] / 1000, am_host=_host_name(cluster, am_address), **counters)


def _host_name(cluster: Cluster, address: str) -> str:
    """A NodeManager's host name (as HDFS names it) from the address the RM reports it by."""
    for node in cluster.nodes():
        if address in (node.get("nodeHostName"), node.get("nodeHTTPAddress", "").rsplit(":", 1)[0]):
            return node.get("nodeHostName", address)
    return address


def _counter(output: str, label: str) -> int:
    """A job counter from the client's report (a counter that stayed 0 is not printed)."""
    found = re.search(rf"^\s*{re.escape(label)}=(\d+)\s*$", output, re.M)
    return int(found.group(1)) if found else 0
