#!/usr/bin/env python3
"""Several hosts on one machine: one network namespace per host, joined by veth to a bridge.

Each host has its own address on a /24 of its own, its own host name, its own /tmp, /dev/shm,
System V IPC, process ids and boot id, so that nothing between two hosts can go through shared
memory or a cross-memory read: what two ranks on different hosts exchange crosses the veth links,
over TCP. The folders a job needs under /tmp stay seen in every host's /tmp: the repository, the
working folder and those in $PACER_HOSTS_KEEP (colon-separated).
A host's link can be shaped with tc (tbf caps its rate, netem adds delay) in both directions.

mpirun reaches the hosts through an rsh agent that enters a host's namespaces (`pacer-hosts-agent
HOST COMMAND`): `run` exports Open MPI's settings for it (the agent, a hostfile of the hosts'
addresses, TCP over the bridge's subnet), so a plain `mpirun -np N prog` inside starts its ranks
on the hosts.

As a program, it makes the hosts, runs a command under them and removes them, even when the
command fails or is interrupted:

    pacer_hosts.py --hosts 2 [--slots 4] [--shape 2:rate=1gbit,delay=1ms] -- mpirun -np 6 prog

The command sees PACER_HOSTS (the hosts' addresses, comma-separated) and PACER_HOSTS_DIR. Exits
with 77 (skipped) and the reason where namespaces cannot be made (not root, no iproute2).
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid

SKIP = 77
AGENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pacer-hosts-agent")


class Unavailable(Exception):
    """Namespaces cannot be made here; the message says why."""


def sh(*args, check=True):
    return subprocess.run(args, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)


def tc(prefix, args):
    """Runs tc, raising ValueError with tc's own words where it refuses (a bad rate, or a qdisc
    this kernel lacks: netem needs CONFIG_NET_SCH_NETEM)."""
    done = sh(*prefix, *args, check=False)
    if done.returncode != 0:
        raise ValueError(f"{' '.join(args)}: {done.stderr.strip()}")


def why_unavailable():
    """The reason this machine cannot make hosts, or None."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "tc", "unshare"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (iproute2, util-linux)"
    probe = f"pacer-probe-{os.getpid()}"
    made = sh("ip", "netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"ip netns add failed: {made.stderr.strip()}"
    sh("ip", "netns", "delete", probe, check=False)
    return None


def parse_shape(text):
    """'rate=1gbit,delay=2ms' -> {'rate': '1gbit', 'delay': '2ms'}; anything else is an error."""
    shape = {}
    for item in text.split(","):
        key, _, value = item.partition("=")
        if key not in ("rate", "delay") or not value:
            raise ValueError(f"bad shape '{text}': expected rate=RATE and/or delay=TIME")
        shape[key] = value
    return shape


class Hosts:
    """`count` hosts named h1..hN, made on entering and removed on leaving."""

    def __init__(self, count, slots=4, shapes=None):
        if not 1 <= count <= 16:
            raise ValueError(f"--hosts={count}: between 1 and 16 hosts")
        self.count = count
        self.slots = slots
        self.shapes = shapes or {}
        # A subnet and names of this process's own, so that two harnesses never meet.
        tag = os.getpid() % 200 + 20
        self.tag = tag
        self.bridge = f"pcbr{tag}"
        self.subnet = f"10.231.{tag}"
        self.names = [f"h{i}" for i in range(1, count + 1)]
        self.namespaces = [f"pacer-{tag}-{name}" for name in self.names]
        self.addresses = [f"{self.subnet}.{10 + i}" for i in range(1, count + 1)]
        self.dir = None

    def __enter__(self):
        reason = why_unavailable()
        if reason:
            raise Unavailable(reason)
        # Not under /tmp, which each host has its own of.
        self.dir = tempfile.mkdtemp(prefix="pacer-hosts.", dir="/run")
        try:
            self._make()
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, *exc):
        self.remove()

    def _make(self):
        sh("ip", "link", "add", self.bridge, "type", "bridge")
        sh("ip", "addr", "add", f"{self.subnet}.1/24", "dev", self.bridge)
        sh("ip", "link", "set", self.bridge, "up")
        for i, (ns, address) in enumerate(zip(self.namespaces, self.addresses), start=1):
            outside = self._outside(i)
            sh("ip", "netns", "add", ns)
            sh("ip", "link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns", ns)
            sh("ip", "link", "set", outside, "master", self.bridge, "up")
            inside = ("ip", "netns", "exec", ns)
            sh(*inside, "ip", "addr", "add", f"{address}/24", "dev", "eth0")
            sh(*inside, "ip", "link", "set", "eth0", "up")
            sh(*inside, "ip", "link", "set", "lo", "up")
            if i in self.shapes:
                self.shape(i, self.shapes[i])
        with open(os.path.join(self.dir, "hostfile"), "w") as out:
            for address in self.addresses:
                out.write(f"{address} slots={self.slots}\n")
        for name in self.names:
            with open(os.path.join(self.dir, f"boot_id.{name}"), "w") as out:
                out.write(f"{uuid.uuid4()}\n")
            os.mkdir(os.path.join(self.dir, f"tmp.{name}"))  # where the agent keeps /tmp seen
        with open(os.path.join(self.dir, "namespaces"), "w") as out:
            for address, ns, name in zip(self.addresses, self.namespaces, self.names):
                out.write(f"{address} {ns} {name}\n")

    def _link_ends(self, host):
        """(command prefix, device) of host `host`'s (from 1) two ends of its link."""
        ns = self.namespaces[host - 1]
        return ((("ip", "netns", "exec", ns), "eth0"), ((), self._outside(host)))

    def _outside(self, host):
        """The name of host `host`'s end of its link on the bridge."""
        return f"pc{self.tag}h{host}"

    def shape(self, host, shape):
        """Shapes what leaves host `host` (from 1; its eth0) and what reaches it (the bridge's
        end): {'rate': tc's rate, e.g. '80mbit', 'delay': e.g. '2ms'}."""
        for prefix, device in self._link_ends(host):
            args = ["tc", "qdisc", "add", "dev", device, "root", "handle", "1:"]
            if "delay" in shape:
                tc(prefix, args + ["netem", "delay", shape["delay"]])
                args = ["tc", "qdisc", "add", "dev", device, "parent", "1:1", "handle", "10:"]
            if "rate" in shape:
                tc(prefix, args + ["tbf", "rate", shape["rate"], "burst", "256kb", "latency",
                                   "50ms"])

    def unshape(self, host):
        """Takes host `host`'s shaping off."""
        for prefix, device in self._link_ends(host):
            sh(*prefix, "tc", "qdisc", "del", "dev", device, "root", check=False)

    def remove(self):
        """Removes whatever was made; a namespace's processes end with it (they are its pid 1's)."""
        for ns in self.namespaces:
            pids = sh("ip", "netns", "pids", ns, check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            sh("ip", "netns", "delete", ns, check=False)
        sh("ip", "link", "delete", self.bridge, check=False)
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def environment(self):
        """What a command needs for mpirun to start its ranks on these hosts."""
        env = dict(os.environ)
        env.update({
            "PACER_HOSTS": ",".join(self.addresses),
            "PACER_HOSTS_DIR": self.dir,
            "OMPI_MCA_plm_rsh_agent": AGENT,
            "OMPI_MCA_orte_default_hostfile": os.path.join(self.dir, "hostfile"),
            "OMPI_MCA_oob_tcp_if_include": f"{self.subnet}.0/24",
            "OMPI_MCA_btl_tcp_if_include": f"{self.subnet}.0/24",
            # mpirun's ranks start in its working folder, which the hosts' /tmp must show.
            "PACER_HOSTS_KEEP": ":".join(
                p for p in (os.getcwd(), os.environ.get("PACER_HOSTS_KEEP")) if p),
        })
        return env

    def run(self, command):
        return subprocess.run(command, env=self.environment()).returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=2)
    parser.add_argument("--slots", type=int, default=4, help="ranks each host takes")
    parser.add_argument("--shape", action="append", default=[],
                        help="HOST:rate=RATE,delay=TIME (HOST counts from 1), repeatable")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")
    shapes = {}
    for spec in args.shape:
        host, _, shape = spec.partition(":")
        if not host.isdigit() or not 1 <= int(host) <= args.hosts:
            parser.error(f"--shape={spec}: host must be 1..{args.hosts}")
        shapes[int(host)] = parse_shape(shape)
    # An interrupt or a kill ends the command and still removes the hosts.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        with Hosts(args.hosts, args.slots, shapes) as hosts:
            return hosts.run(command)
    except Unavailable as e:
        print(f"SKIP: cannot make hosts: {e}", file=sys.stderr)
        return SKIP
    except ValueError as e:
        parser.error(str(e))


if __name__ == "__main__":
    sys.exit(main())
