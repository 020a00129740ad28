"""The text face: seeds 001 and 002 character for character, and what print(g) shows of other graphs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import eagle
from eagle.viz import render_text
from eagle.viz._layout import MAX_LABEL, cut

# Seed 001, "Seeing your graph", with the whitespace the page collapsed put back.
SEED_001 = """\
eagle.Graph 4 nodes · 1 group · backend: cpu
stage 0 work_share       ┌╌╌╌╌╌╌╌┐
                         ╎ seed  ╎
                         └╌╌╌┬╌╌╌┘
                             x
                       ┌─────┴─────┐
stage 1 work_share ┌╌╌╌┴╌╌╌┐   ┌╌╌╌┴╌╌╌┐
                   ╎ left  ╎   ╎ right ╎
                   └╌╌╌┬╌╌╌┘   └╌╌╌┬╌╌╌┘
                   left_out     right…
                       └─────┬─────┘
                    ╭─ skip if guard ─╮
stage 2 work_share  │ ┌╌╌╌╌╌╌┴╌╌╌╌╌╌┐ │
                    │ ╎   combine   ╎ │
                    │ └╌╌╌╌╌╌╌╌╌╌╌╌╌┘ │
                    ╰─────────────────╯"""

# The same picture as the seed page holds it: every run of whitespace one space.
SEED_001_PAGE = (
    'eagle.Graph 4 nodes · 1 group · backend: cpu stage 0 work_share ┌╌╌╌╌╌╌╌┐ ╎ seed ╎ └╌╌╌┬╌╌╌┘ x ┌'
    '─────┴─────┐ stage 1 work_share ┌╌╌╌┴╌╌╌┐ ┌╌╌╌┴╌╌╌┐ ╎ left ╎ ╎ right ╎ └╌╌╌┬╌╌╌┘ └╌╌╌┬╌╌╌┘ left_'
    'out right… └─────┬─────┘ ╭─ skip if guard ─╮ stage 2 work_share │ ┌╌╌╌╌╌╌┴╌╌╌╌╌╌┐ │ │ ╎ combine '
    '╎ │ │ └╌╌╌╌╌╌╌╌╌╌╌╌╌┘ │ ╰─────────────────╯')

# Seed 002, "1. Record" (before build) and "2. Instantiate" (after).
SEED_002_RECORDED = """\
eagle.Graph 3 nodes · 1 group · backend: (not built)
stage 0 ┌─────┐   ┌─────┐
        │ <l> │   │ <r> │
        └──┬──┘   └──┬──┘
           a         b
           └────┬────┘
stage 1    ┌────┴────┐
           │ <join>  │
           └─────────┘"""

SEED_002_BUILT = """\
eagle.Graph 3 nodes · 1 group · backend: cpu
stage 0 work_share ┌─────┐   ┌─────┐
                   │ <l> │   │ <r> │
                   └──┬──┘   └──┬──┘
                      a         b
                      └────┬────┘
stage 1 work_share    ┌────┴────┐
                      │ <join>  │
                      └─────────┘"""

# Seed 002's page keeps the lines but collapses the spaces inside and before them.
SEED_002_PAGE_RECORDED = """\
eagle.Graph 3 nodes · 1 group · backend: (not built)
stage 0 ┌─────┐ ┌─────┐
│ <l> │ │ <r> │
└──┬──┘ └──┬──┘
a b
└────┬────┘
stage 1 ┌────┴────┐
│ <join> │
└─────────┘"""

SEED_002_PAGE_BUILT = """\
eagle.Graph 3 nodes · 1 group · backend: cpu
stage 0 work_share ┌─────┐ ┌─────┐
│ <l> │ │ <r> │
└──┬──┘ └──┬──┘
a b
└────┬────┘
stage 1 work_share ┌────┴────┐
│ <join> │
└─────────┘"""

# A fork with a two-node branch, a device loop, a skip guard and a reduce (pins the geometry).
STEP = """\
eagle.Graph 8 nodes · 1 group · backend: (not built)
stage 0                   ┌───────────────┐
                          │ scale → load  │
                          └───────┬───────┘
                                load
                ┌─────────────────┼──────────────────┐
stage 1 ┌───────┴───────┐   ┌─────┴─────┐   ┌────────┴────────┐
        │ add → forces  │   │ <kinetic> │┄╮ │ add → residual  │
        └───────┬───────┘   └─────┬─────┘ ┆ └────────┬────────┘
             forces            energy     ┆      residual
        ┌───────┴───────┐         │       ┆          │
        │ scale → damp  │╮        │       ┆          │
        └───────┬───────┘┆        │       ┆          │
              damp       ┆        │       ╰┄┄╮       │
                └─────────────────┼──────────────────┘
                         ┆╭─ repeat ≤ 8 ──╮  ┆
stage 2                  ┆│ ┌─────┴─────┐ │  ┆
                         ┆│ │  <relax>  │ │  ┆
                         ┆│ └─────┬─────┘ │  ┆
                         ┆╰───────┼───────╯  ┆
                       ╭┄╯    residual       ┆
                       ┆╭── skip if guard ──╮┆
stage 3                ┆│ ┌───────┴───────┐ │┆
                       ╰│▸│ add → correct │ │┆
                        │ └───────┬───────┘ │┆
                        ╰─────────┼─────────╯┆
                                  │          ┆
stage 4                       ┌───┴───┐      ┆
                              │ total │◂┄┄┄┄┄╯
                              └───────┘"""

# What the builder records (a fork with a wait, a device loop, a match), made by hand.
BUILDER = """\
eagle.Graph 8 nodes · 1 group · backend: (not built)
stage 0           ┌───────────────┐
                  │ scale → load  │┄┄┄┄┄┄┄┄┄┄┄┄╮
                  └───────┬───────┘            ┆
                        load                   ┆
                ┌─────────┴─────────┐          ┆
stage 1 ┌───────┴───────┐   ┌───────┴───────┐  ┆
        │ add → forces  │┄┄▸│ add → kinetic │┄┄┆╮
        └───────┬───────┘   └───────┬───────┘  ┆┆
             forces              kinetic       ┆┆
         ┌──────┴──────┐            │          ┆┆
        ╭│ add → damp  │            │          ┆┆
        ┆└──────┬──────┘            │          ┆┆
        ┆     damp                  │          ┆┆
        ┆       └─────────┬─────────┘          ┆┆
        ┆        ╭── repeat ≤ 50 ──╮           ┆┆
stage 2 ┆        │    ┌───┴───┐    │           ┆┆
        ┆        │    │ scale │◂┄┄┄│┄┄┄┄┄┄┄┄┄┄┄╯┆
        ┆        │    └───┬───┘    │            ┆
        ┆        │       pos       │            ┆
        ┆        │ ┌──────┴──────┐ │            ┆
        ┆        │ │ <converged> │ │            ┆
        ┆        │ └──────┬──────┘ │            ┆
        ┆        ╰────────┼────────╯            ┆
        ┆            out, state                 ┆
        ┆      ┌──────────┼────────────┐        ┆
        ┆ ╭────┼ match guard: 0 | 1 | _ ──────╮ ┆
stage 3 ┆ │ ┌──┴──┐   ┌───┴───┐   ┌╌╌╌╌┴╌╌╌╌┐ │ ┆
        ╰┄│▸│ add │   │ scale │   ╎ opaque  ╎ │ ┆
          │ └──┬──┘   └───┬───┘   └╌╌╌╌┬╌╌╌╌┘ │ ┆
          │    │          b            │      │ ┆
          │    │       ┌──┴──┐         │      │ ┆
          │    │       │ add │         │      │ ┆
          │    │       └──┬──┘         │      │ ┆
          ╰────┼──────────┼────────────┼──────╯ ┆
               │          │            │        ┆
               └──────────┼────────────┘        ┆
stage 4               ┌───┴───┐                 ┆
                      │ total │◂┄┄┄┄┄┄┄┄┄┄┄┄┄┄┄┄╯
                      └───────┘"""


def collapse(text: str) -> str:
    """What the seed pages did to the pictures: every whitespace run one space."""
    return re.sub(r"\s+", " ", text).strip()


def test_seed_001_picture(graphs):
    """print(g) of seed 001's graph, built, is the seed's picture."""
    g = graphs.seed_001().build()
    assert str(g) == SEED_001


def test_seed_001_matches_the_page_collapsed(graphs):
    """The rendered picture, whitespace collapsed, is the seed page's text exactly."""
    g = graphs.seed_001().build()
    assert collapse(str(g)) == SEED_001_PAGE
    assert collapse(SEED_001) == SEED_001_PAGE


def test_seed_002_pictures(graphs):
    """Seed 002's two pictures, before and after build, line by line."""
    g = graphs.seed_002()
    assert str(g) == SEED_002_RECORDED
    g.build()
    assert str(g) == SEED_002_BUILT


def test_seed_002_matches_the_page_collapsed(graphs):
    """Each rendered line, whitespace collapsed, is the seed page's line."""
    g = graphs.seed_002()
    assert [collapse(line) for line in str(g).splitlines()] == SEED_002_PAGE_RECORDED.splitlines()
    g.build()
    assert [collapse(line) for line in str(g).splitlines()] == SEED_002_PAGE_BUILT.splitlines()


def _seed_page(number: str) -> str:
    root = Path(__file__).resolve().parents[3]
    for shared in (root / "shared", root.parent / "shared"):
        pages = sorted((shared / "seeds").glob(f"{number}_*.txt"))
        if pages:
            return pages[0].read_text(encoding="utf-8")
    pytest.skip("the seed pages (shared/seeds) are not beside this checkout")


def test_the_copied_pictures_are_the_seed_pages():
    """The collapsed pictures above are copied from the seed pages without a slip."""
    page_001 = _seed_page("001")
    assert SEED_001_PAGE in collapse(page_001)
    page_002 = _seed_page("002")
    assert SEED_002_PAGE_RECORDED in page_002
    assert SEED_002_PAGE_BUILT in page_002


def test_show_and_str_are_the_picture(capsys, graphs):
    """g.show() prints str(g), which is eagle.viz.render_text(g)."""
    g = graphs.seed_002()
    g.show()
    assert capsys.readouterr().out == render_text(g) + "\n" == str(g) + "\n"


def test_step_graph_picture(graphs):
    """A two-node branch stacks under its fork; loops and guards frame their node."""
    assert str(graphs.step()) == STEP


def test_builder_graph_picture(graphs):
    """A device loop and a match frame their bodies; a wait draws no box; the header counts graph nodes."""
    assert str(graphs.builder()) == BUILDER


def test_before_and_after_build_differ_only_by_backend_and_schedules(graphs):
    """Built, the header names the backend and the stage column the schedule; the drawing is the same."""
    g = graphs.step()
    before = str(g).splitlines()
    g.build()
    after = str(g).splitlines()
    assert after[0] == before[0].replace("(not built)", "cpu")
    strip = re.compile(r"^stage \d+( \w+)?")
    assert [strip.sub("", line).strip() for line in after[1:]] == [strip.sub("", line).strip()
                                                                    for line in before[1:]]
    assert g.schedule == ["work_share"] * 5
    assert [line.split()[2] for line in after if line.startswith("stage")] == g.schedule


def test_header_counts_and_recorded():
    """One node is "1 node"; a recording graph says so; no groups is "0 groups"."""
    g = eagle.Graph(record=True).add_node(eagle.graph.opaque(lambda: None), name="only")
    assert str(g).splitlines()[0] == "eagle.Graph 1 node · 0 groups · backend: (not built) · recorded"
    assert str(eagle.Graph()) == "eagle.Graph 0 nodes · 0 groups · backend: (not built)"


def test_tiers_are_tagged_and_long_names_cut(graphs):
    """A stream= node is tagged [stream] ([stream: cpu runs eagerly] once built), eager=True [host]."""
    g = graphs.skipping()
    text = str(g)
    assert "│ <a_rather_long_node_name…> [stream] │" in text
    assert "╎ overwrite [host]  ╎" in text
    g.build()
    assert "<a_rather_long_node_name…> [stream: cpu runs eagerly]" in str(g)


def test_a_plane_passed_over_a_stage_is_named_under_its_writer(graphs):
    """produce's a is read two stages later: its name is under produce; a WAR-only link is a bare wire."""
    lines = str(graphs.skipping()).splitlines()
    produce = next(i for i, line in enumerate(lines) if "produce" in line)
    assert lines[produce + 2].split()[0] == "a"  # and the long link down the gutter
    overwrite = next(i for i, line in enumerate(lines) if "overwrite" in line)
    assert lines[overwrite - 2].split()[0] == "│"


@pytest.mark.parametrize(("text", "width", "expected"), [
    ("left_out", 9, "left_out"),
    ("right_result", 9, "right…"),  # at a word, as seed 001's right…
    ("rightmostvalue", 9, "rightmos…"),  # no word boundary: cut anywhere
    ("a_bcdefghij", 9, "a_bcdefg…"),  # a boundary that would keep under half the room is not used
    ("abc", 1, "…"),
    ("abc", 0, ""),
])
def test_cut(text, width, expected):
    """cut() keeps a label within its width, at a word where it can."""
    assert cut(text, width) == expected
    assert len(cut(text, width)) <= width


def test_a_wide_fork_stays_on_one_row(graphs):
    """Twelve branches: twelve boxes side by side on one row, every name whole."""
    text = str(graphs.wide_fork(12))
    row = next(line for line in text.splitlines() if "branch_0" in line)
    assert [f"branch_{i}" for i in range(12)] == re.findall(r"branch_\d+", row)
    assert all(f"out{i}" in text for i in range(12))
    assert max(map(len, text.splitlines())) < 12 * 16 + 10


def test_a_long_chain_is_one_column(graphs):
    """200 nodes: 200 boxes one under another, each wire labelled with its plane."""
    lines = str(graphs.chain(200)).splitlines()
    assert sum("<node_" in line for line in lines) == 200
    assert len(lines) == 1 + 200 * 4 - 1
    assert [line.strip() for line in lines[4::4]] == [f"p{i + 1}" for i in range(199)]
    assert max(map(len, lines[1:])) < 40


def test_long_node_names_are_cut():
    """A name past MAX_LABEL characters is cut with …, in the box and nowhere wider."""
    g = eagle.Graph().add_node(eagle.graph.opaque(lambda: None), name="n" * 60)
    box = str(g).splitlines()[2]
    assert "n" * (MAX_LABEL - 1) + "…" in box and "n" * MAX_LABEL not in box
