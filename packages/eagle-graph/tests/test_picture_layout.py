"""libeagle's layout engine (layout.c) through eagle.extend.lay_out: seed 001's geometry, the long-link
router's promise (around every box), refusals of a malformed tree, and random trees (under the sanitize
session, every path of the module runs under ASan)."""

from __future__ import annotations

import itertools
import random

import pytest

from eagle.extend import CoreError, lay_out

BOX, SEQ, FORK, FRAME = 0, 1, 2, 3


def box(node: int, width: int) -> list[tuple[int, int, int, int]]:
    return [(BOX, 0, node, width)]


def seq(*parts: list) -> list[tuple[int, int, int, int]]:
    return [(SEQ, len(parts), -1, 0), *itertools.chain(*parts)]


def fork(*parts: list) -> list[tuple[int, int, int, int]]:
    return [(FORK, len(parts), -1, 0), *itertools.chain(*parts)]


def frame(title: int, body: list) -> list[tuple[int, int, int, int]]:
    return [(FRAME, 1, -1, title), *body]


def seed_001():
    """seed → left | right → combine in a ``skip if guard`` frame, stage labels 18 wide."""
    blocks = box(0, 4) + fork(box(1, 4), box(2, 5)) + frame(len("skip if guard"), box(3, 7))
    return lay_out(blocks, 3, [18, 18, 18], 1, [0, 1, 2, 3], [(0, 1), (0, 2), (1, 3), (2, 3)])


def test_seed_001_geometry():
    """The boxes, frame and wires of seed 001's picture, cell for cell (the text face draws these)."""
    lay = seed_001()
    assert lay.boxes == [[0, 25, 0, 9], [1, 19, 5, 9], [2, 31, 5, 9], [3, 22, 11, 15]]
    assert lay.frames == [[4, 20, 10, 19, 5, 3, 1]]  # "╭─ skip if guard ─╮", 19 wide
    assert (lay.width, lay.height) == (40, 15)
    assert lay.stages == [[0, 0, 0, 19], [1, 0, 5, 19], [2, 0, 11, 19]]
    assert [w[4] for w in lay.wires] == [((29, 2), (29, 4), (23, 4), (23, 5)),
                                         ((29, 2), (29, 4), (35, 4), (35, 5)),
                                         ((23, 7), (23, 9), (29, 9), (29, 11)),
                                         ((35, 7), (35, 9), (29, 9), (29, 11))]
    assert [k[:4] for k in lay.links] == [(0, 1, 0, 1), (0, 2, 1, 1), (1, 3, 2, 1), (2, 3, 3, 1)]


def crosses(points, boxes) -> bool:
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        for _, bx, by, bw in boxes:
            if min(x0, x1) < bx + bw and max(x0, x1) >= bx and min(y0, y1) < by + 3 and max(y0, y1) >= by:
                return True
    return False


def test_a_long_link_goes_round_the_boxes_between():
    """a → b → c → d with a pair (a, d): routed from beside a to beside d, through no box."""
    blocks = box(0, 3) + box(1, 3) + box(2, 3) + box(3, 3)
    lay = lay_out(blocks, 4, None, 1, [0, 1, 2, 3], [(0, 1), (1, 2), (2, 3), (0, 3)])
    long = [k for k in lay.links if not k[3]]
    assert [(s, d, p) for s, d, p, _, _ in long] == [(0, 3, 3)]
    points = long[0][4]
    assert points == ((7, 1), (8, 1), (8, 13), (7, 13))  # down the lane right of the drawing
    assert not crosses(points, lay.boxes) and lay.width == 9


def test_a_sibling_link_is_a_straight_arrow():
    """A wait between two branches of a fork: one horizontal run from one box to the next."""
    lay = lay_out(fork(box(0, 3), box(1, 3)), 1, None, 1, [0, 1], [(0, 1)])
    (_, _, _, _, points), = [k for k in lay.links if not k[3]]
    assert points == ((7, 1), (9, 1))


def test_crossing_waits_in_a_fork_are_both_routed():
    """Four branches, a wait from the first branch's second box to the third branch and one from the
    second branch to the fourth: the first link routed walls the other's ends in by the routing
    rules, so it takes the fallback route (only boxes stop it); neither is left out."""
    blocks = fork(seq(box(0, 6), box(1, 6)), seq(box(2, 6), box(3, 6)), box(4, 6), box(5, 6)) + box(6, 9)
    lay = lay_out(blocks, 2, [8, 8], 1, list(range(7)), [(1, 4), (2, 5)])
    long = [k for k in lay.links if not k[3]]
    assert sorted((s, d) for s, d, *_ in long) == [(1, 4), (2, 5)]
    for *_, points in long:
        assert points and not crosses(points, lay.boxes)


def test_a_pair_may_name_a_node_inside_a_construct():
    """Node 0 is a construct drawn as the boxes 2, 3, 4 in a frame (their owner); source 1 before it.
    An owner pair the wire between owners draws is no long link; a pair of two boxes inside the
    construct is one when no wire joins them (2 to 4), none when one does (2 to 3); a pair from a box
    inside to the source's owner runs from that box."""
    blocks = box(1, 4) + frame(6, seq(box(2, 3), box(3, 3), box(4, 3)))
    lay = lay_out(blocks, 2, None, 1, [0, 1, 0, 0, 0], [(1, 0), (2, 3), (2, 4), (1, 3), (3, 1)])
    long = [(s, d, p) for s, d, p, adjacent, _ in lay.links if not adjacent]
    assert long == [(2, 4, 2), (3, 1, 4)]
    assert all(points and not crosses(points, lay.boxes) for *_, adj, points in lay.links if not adj)


@pytest.mark.parametrize("blocks, stages, owners", [
    ([(SEQ, 2, -1, 0), (BOX, 0, 0, 3)], 1, [0]),  # a count past the end
    ([(BOX, 0, 5, 3)], 1, [0]),  # a node out of range
    ([(BOX, 0, 0, 3), (BOX, 0, 0, 3)], 1, [0]),  # blocks past the last stage
    ([(FRAME, 2, -1, 3), (BOX, 0, 0, 3), (BOX, 0, 0, 3)], 1, [0]),  # a frame of two
    ([(7, 0, 0, 3)], 1, [0]),  # no such kind
    ([(BOX, 0, 0, 3)], 1, [3]),  # an owner out of range
])
def test_a_malformed_tree_is_refused(blocks, stages, owners):
    with pytest.raises(CoreError, match=r"eagle\.extend\.lay_out: eagle_layout_run: "):
        lay_out(blocks, stages, None, 1, owners, [])


def test_an_empty_graph():
    lay = lay_out([], 0, None, 1, [], [])
    assert (lay.width, lay.height, lay.boxes, lay.links) == (0, 0, [], [])


def random_tree(rng: random.Random, nodes: list[int], depth: int) -> list:
    r = rng.random()
    if depth > 3 or r < 0.4:
        nodes.append(len(nodes))
        return box(nodes[-1], rng.randint(1, 12))
    parts = [random_tree(rng, nodes, depth + 1) for _ in range(1 if r < 0.6 else rng.randint(1, 3))]
    if r < 0.6:
        return frame(rng.randint(3, 20), parts[0])
    return (seq if r < 0.8 else fork)(*parts)


@pytest.mark.parametrize("seed", range(30))
def test_random_trees_lay_out_and_route(seed):
    """Random stages of seqs, forks and frames with random data pairs: every box placed once, no two
    boxes share a cell, and every long link is routed (none is left out) through no box."""
    rng = random.Random(seed)
    nodes: list[int] = []
    stages = [random_tree(rng, nodes, 0) for _ in range(rng.randint(1, 6))]
    n = len(nodes)
    pairs = list({(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(0, 2 * n))})
    pairs = [(s, d) for s, d in pairs if s < d]
    lay = lay_out(list(itertools.chain(*stages)), len(stages), [8] * len(stages), rng.randint(1, 3),
                  list(range(n)), pairs)
    assert sorted(b[0] for b in lay.boxes) == list(range(n))
    cells = [(x, y) for _, bx, by, bw in lay.boxes for x in range(bx, bx + bw) for y in range(by, by + 3)]
    assert len(cells) == len(set(cells))
    wired = {(s, d) for s, d, *_ in lay.wires}
    assert sorted((s, d) for s, d, _, adjacent, _ in lay.links if not adjacent) == sorted(
        p for p in pairs if p not in wired)
    for _, _, _, adjacent, points in lay.links:
        if not adjacent:
            assert points and not crosses(points, lay.boxes)
