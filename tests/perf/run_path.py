"""13/13b. Cuts on an audit's run path, each side by side with what it replaced (issue 32):

13.  An image id (what every Sandbox start asks three times: environment, base recipe, user
    base) through the podman service's API the Sandbox already talks to vs a `podman image
    inspect` CLI process. Interleaved, medians; target <= 0.25x.
13b. The oracle's flaky control (engine/oracle.py `_flaky`): its three re-runs of a
    discriminating candidate in fresh containers at once (the sandbox's slots bound them) vs one
    after another. Interleaved rounds, medians; target <= 0.9x (2 slots: about 2/3).
"""
from __future__ import annotations

import asyncio
import time

from .common import fmt_s, median, ratio, row
from .demo import DEMO_TASK, demo_benchmark, witnesses

ID_TARGET = 0.25
RERUN_TARGET = 0.9


async def _measure(id_rounds: int, rerun_rounds: int) -> dict:
    from testjack_tui.sandbox import Sandbox
    from testjack_tui.sandbox.images import _image_id, api_image_id

    task = demo_benchmark().tasks[DEMO_TASK]
    files = witnesses(1)
    ids = list(files)
    api, cli, together, apart = [], [], [], []
    async with Sandbox(session="perf-run-path") as sb:
        world = await sb.prepare(task, "reference")
        env = sb.service.cli_env()
        lookup = api_image_id(sb.service.client)
        image = await sb.env_image(task)
        for _ in range(id_rounds):
            t = time.perf_counter()
            found_cli = await asyncio.to_thread(_image_id, image, env)
            cli.append(time.perf_counter() - t)
            t = time.perf_counter()
            found_api = await asyncio.to_thread(lookup, image)
            api.append(time.perf_counter() - t)
            if found_api != found_cli or not found_api:
                raise RuntimeError(f"{image}: the API says {found_api}, the CLI {found_cli}")
        await sb.run_tests(world, ids, files=files)  # warm-up: page cache, connections
        for _ in range(rerun_rounds):
            await _drain(sb)
            t = time.perf_counter()
            for _ in range(3):
                await sb.run_tests(world, ids, files=files)
            apart.append(time.perf_counter() - t)
            await _drain(sb)
            t = time.perf_counter()
            await asyncio.gather(*(sb.run_tests(world, ids, files=files) for _ in range(3)))
            together.append(time.perf_counter() - t)
        await _drain(sb)
    return {"api": api, "cli": cli, "together": together, "apart": apart, "image": image,
            "concurrency": sb.concurrency}


async def _drain(sb) -> None:
    pending = list(getattr(sb, "_cleanups", ()))
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)


def run(quick: bool = False) -> list[dict]:
    m = asyncio.run(_measure(5 if quick else 15, 2 if quick else 5))
    a, c = median(m["api"]), median(m["cli"])
    t, s = median(m["together"]), median(m["apart"])
    r1, r2 = ratio(a, c), ratio(t, s)
    return [
        row("13 image id: service API vs podman CLI (median)", fmt_s(a), fmt_s(c), r1, f"<= {ID_TARGET}x",
            r1 is not None and r1 <= ID_TARGET,
            note=f"api_image_id vs `podman image inspect --format {{{{.Id}}}}` of {m['image']}, "
                 f"{len(m['api'])} interleaved rounds; three per Sandbox start before the cut"),
        row("13b flaky control: 3 re-runs at once vs one after another (median)", fmt_s(t), fmt_s(s), r2,
            f"<= {RERUN_TARGET}x", r2 is not None and r2 <= RERUN_TARGET,
            note=f"3x Sandbox.run_tests of one witness on {DEMO_TASK}/reference, gathered vs "
                 f"sequential, {len(m['together'])} interleaved rounds, {m['concurrency']} slots"),
    ]
