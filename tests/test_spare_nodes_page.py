"""The playbook's Spare nodes page, both editions (issue 23, item 7): it links lab 6, the health check
and the commands of the swap, and its worked example still adds up."""
from __future__ import annotations

import re

import pytest

from support import PROJECT

PAGES = {"en": PROJECT / "docs" / "playbook" / "spare-nodes.md", "ko": PROJECT / "docs" / "playbook" / "spare-nodes.ko.md"}


def number(text: str) -> float:
    return float(text.replace(",", ""))


@pytest.mark.parametrize("edition", PAGES)
def test_the_page_links_the_lab_the_health_check_and_the_commands(edition: str) -> None:
    text = PAGES[edition].read_text(encoding="utf-8")
    assert "](../generated/labs/06-spare-nodes.md)" in text
    assert (PROJECT / "labs" / "06-spare-nodes" / "README.md").is_file()
    for command in ("tooling health-check", "scripts/slurm/health-check", "HealthCheckProgram=", "Prolog=",
                    "exec tooling job RUN -- srun", "--node-watch", "#SBATCH --requeue", "Weight=100",
                    "DistributedCheckpointManager.load_latest(state)", "scripts/slurm-cluster inject n2 xid 79",
                    "state=resume"):
        assert command in text, command
    # the section the swap points to, under the same anchor in both editions
    assert "(#the-swap-without-a-person)" in text
    assert re.search(r"^## .*(The swap without a person|\{#the-swap-without-a-person\})$", text, re.MULTILINE)


@pytest.mark.parametrize("edition", PAGES)
def test_the_worked_example_adds_up(edition: str) -> None:
    text = PAGES[edition].read_text(encoding="utf-8")
    idle = re.search(r"\((\d+)\D*× (\d+)\D*× (\d+) h\)\s*\|\s*0\s*\|\s*([\d,]+) GPU-hours?", text)
    assert idle, "the idle spares' row"
    spares, gpus_per_node, hours, idle_hours = (number(g) for g in idle.groups())
    assert spares * gpus_per_node * hours == idle_hours
    waits = re.findall(r"(\d+) × ([\d.]+) h × (\d+) = ([\d,]+) GPU-hours?", text)
    assert len(waits) == 2, waits  # waiting for a node: without spares, then with them
    for failures, wait, gpus, lost in waits:
        assert number(failures) * number(wait) * number(gpus) == number(lost)
    (_, _, gpus, _), (_, swap, _, with_spares) = ((number(v) for v in w) for w in waits)
    assert swap == 0.25  # the 15-minute swap of the inputs' table, in hours
    totals = [number(t) for t in re.findall(r"\*\*([\d,]+) GPU-hours?\*\*", text)]
    waiting = number(waits[0][3])
    assert totals == [waiting, idle_hours + with_spares]
    month = gpus * hours
    assert f"{month:,.0f}" in text  # the job's GPU-hours per month
    share = re.search(r"(\d+)%", text[text.index(f"{month:,.0f}") - 80:text.index(f"{month:,.0f}") + 80])
    assert share and int(share[1]) == round(100 * idle_hours / month)
    saved = round(waiting - totals[1], -3)
    assert f"{saved:,.0f}" in text  # "almost 104,000 GPU-hours" saved


@pytest.mark.parametrize("edition", PAGES)
def test_the_elastic_section_links_the_variant_and_its_advice_is_the_labs(edition: str) -> None:
    """When to prefer an elastic restart over a requeue (issue 23, item 6): the section, under one
    anchor in both editions, links lab 6's elastic variant; the settings it tells a team to use are
    the ones lab 6's elastic.sbatch runs with, and the timeouts it quotes are torch's defaults."""
    from torch.distributed.elastic.rendezvous.dynamic_rendezvous import RendezvousTimeout

    text = PAGES[edition].read_text(encoding="utf-8")
    assert re.search(r"^## .*(Elastic restart instead of a requeue|\{#elastic-restart-instead-of-a-requeue\})$",
                     text, re.MULTILINE)
    start = text.index("--nnodes=MIN:MAX")
    section = text[start:text.index("\n## ", start)]
    assert "](../generated/labs/06-spare-nodes.md)" in section and "`check.py --elastic`" in section
    script = (PROJECT / "labs" / "06-spare-nodes" / "elastic.sbatch").read_text(encoding="utf-8")
    for setting in ("--no-kill", "TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1", "--max-restarts", "--nnodes="):
        assert setting in section and setting in script, setting
    timeout = RendezvousTimeout()
    assert (timeout.last_call.total_seconds(), timeout.join.total_seconds()) == (30, 600)
    assert re.search(r"`last_call_timeout`\D*30", section) and re.search(r"`join_timeout`\D*600", section)
