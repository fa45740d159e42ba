"""`doctor --backend ray`: can this Ray cluster run audits? Nodes offering slots, and on each of
them podman, the base image, free disk and the same TestJack version as the operator."""
from __future__ import annotations

import logging
import os
from typing import Any

from ..diagnostics import Check
from .backend import SLOT_RESOURCE, slot_nodes


def node_facts() -> dict[str, Any]:
    """Runs on a node: the light checks (no container is started)."""
    from testjack_tui import __version__

    from .. import base_image
    from ..diagnostics import check_disk, check_podman

    podman = check_podman()
    image = base_image.base_image_ready() if podman.status == "ok" else False
    return {"podman": podman, "base_image": image, "disk": check_disk(), "version": __version__,
            "cores": os.cpu_count() or 1}


def cluster_checks(address: str | None) -> list[Check]:
    try:
        import ray
    except ImportError:
        return [Check("ray", "fail", "Ray is not installed", "pip install 'testjack-tui[ray]'")]
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from testjack_tui import __version__

    started = False
    try:
        if not ray.is_initialized():
            target = address or os.environ.get("RAY_ADDRESS") or "auto"
            ray.init(address=target, logging_level=logging.WARNING, log_to_driver=False)
            started = True
    except Exception as exc:  # no cluster there, wrong address, version mismatch
        return [Check("ray cluster", "fail", f"cannot connect to {address or 'auto'}: {exc}"[:300],
                      "start it (ray start --head) or pass --ray-address ray://HOST:10001")]
    try:
        infos = ray.nodes()
        alive = [n for n in infos if n.get("Alive")]
        nodes = slot_nodes(infos)
        checks = [Check("ray cluster", "ok" if nodes else "fail",
                        f"{len(alive)} node(s) alive, {len(nodes)} offer {SLOT_RESOURCE} "
                        f"({sum(n.slots for n in nodes)} slots)",
                        "" if nodes else f"start Ray on each node with --resources "
                                         f"'{{\"{SLOT_RESOURCE}\": CORES}}'")]
        probe = ray.remote(num_cpus=0)(node_facts)
        refs = [probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n.node_id, soft=False)).remote()
                for n in nodes]
        for node, ref in zip(nodes, refs):
            try:
                facts = ray.get(ref, timeout=120)
            except Exception as exc:  # the node cannot run our code at all
                checks.append(Check(f"node {node.label}", "fail", f"{type(exc).__name__}: {exc}"[:300],
                                    "install testjack-tui[ray] in the Python that runs Ray there"))
                continue
            checks.append(_named(node.label, facts["podman"]))
            checks.append(Check(f"node {node.label}: base image", "ok" if facts["base_image"] else "warn",
                                "present" if facts["base_image"] else "missing: built on first use",
                                "" if facts["base_image"] else "run `testjack-tui doctor --fix` on that node"))
            checks.append(_named(node.label, facts["disk"]))
            same = facts["version"] == __version__
            checks.append(Check(f"node {node.label}: testjack-tui", "ok" if same else "fail",
                                f"{facts['version']}, {node.slots} slot(s) on {facts['cores']} core(s)",
                                "" if same else f"install testjack-tui {__version__} there"))
        return checks
    finally:
        if started:
            ray.shutdown()


def _named(label: str, check: Check) -> Check:
    return Check(f"node {label}: {check.name}", check.status, check.detail, check.hint)
