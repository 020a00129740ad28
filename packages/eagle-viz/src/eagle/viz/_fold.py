"""Folding: a run of alike blocks drawn once, so a 1,000-kernel chain or a 50-branch fork reads.

A run of boxes that repeats a period of at most :data:`MAX_PERIOD` texts at
least :data:`MIN_REPEATS` times (``scale, shift, scale, shift, …``) becomes one
box, ``scale, shift ×500``, drawn for the run's first node; consecutive stages
that are each one such box fold the same way (``stages 1–1000``); at least
:data:`MIN_REPEATS` alike branches of a fork become one branch in a frame
``×50 alike``; a fork still more than :data:`WIDE_FORK` branches wide (its
branches unlike) shows its first :data:`SHOWN_BRANCHES` and one box for the
rest, ``… 42 more branches``.  Every node folded away is drawn as the node it
folds into, so the edges into and out of a run stay drawn.  ``fold=False`` on
every face draws them all.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Final

from eagle.viz._layout import fold_text, more_text, node_text
from eagle.viz._model import Block, Box, Fork, Frame, NodeInfo, Seq, StageInfo, walk

#: Fewer repeats than this stay drawn one by one (a pair or three of a kind read fine).
MIN_REPEATS: Final = 4
#: The longest period looked for.
MAX_PERIOD: Final = 4
#: A fork of more branches than this, once alike ones are folded, is cut (twelve read on one row).
WIDE_FORK: Final = 12
#: The branches a cut fork shows before the box that stands for the rest.
SHOWN_BRANCHES: Final = 6

#: A folded box's node -> the nodes of its period and how often it repeats.
Folds = dict[int, tuple[tuple[int, ...], int]]


def fold_stages(stages: list[StageInfo], nodes: Sequence[NodeInfo],
                ) -> tuple[list[StageInfo], Folds, dict[int, int], dict[int, list[int]], dict[int, int]]:
    """``stages`` with their runs of alike blocks folded; the folds (a folded box's node -> its
    period's nodes and repeats), the alias of every node folded away (-> the node drawn), each
    folded box's nodes (those of alike branches are not: each branch is its own), and the boxes
    that stand for a wide fork's last branches (-> how many)."""
    folder = _Folder({n.index: node_text(n) for n in nodes})
    stages = folder.stages(stages)
    alias = {node: folder.resolve(node) for node in folder.alias}
    return stages, folder.folds, alias, folder.members, folder.more


class _Folder:
    def __init__(self, texts: dict[int, str]) -> None:
        self.texts = texts
        self.folds: Folds = {}
        self.alias: dict[int, int] = {}
        self.members: dict[int, list[int]] = {}
        self.more: dict[int, int] = {}  # the box for a wide fork's last branches -> how many

    def resolve(self, node: int) -> int:
        while node in self.alias:
            node = self.alias[node]
        return node

    def shown(self, node: int) -> str:
        if node in self.folds:
            period, repeats = self.folds[node]
            return fold_text([self.texts[n] for n in period], repeats)
        if node in self.more:
            return more_text(self.more[node])
        return self.texts[node]

    def key(self, block: Block) -> object:
        """What a block shows, for telling alike blocks."""
        if isinstance(block, Box):
            return self.shown(block.node)
        if isinstance(block, Frame):
            return ("frame", block.label, self.key(block.body))
        parts = block.branches if isinstance(block, Fork) else block.items
        return (type(block).__name__, tuple(self.key(p) for p in parts))

    def run(self, keys: list[object], k: int) -> tuple[int, int]:
        """The (period, repeats) covering most of ``keys`` from ``k`` (None keys never fold); (0, 0)."""
        best = (0, 0)
        for p in range(1, MAX_PERIOD + 1):
            if k + p > len(keys) or any(key is None for key in keys[k:k + p]):
                break
            r = 1
            while keys[k + r * p:k + (r + 1) * p] == keys[k:k + p]:
                r += 1
            if r >= MIN_REPEATS and p * r > best[0] * best[1]:
                best = (p, r)
        return best

    def fold_boxes(self, boxes: list[Box], period: int, repeats: int) -> int:
        """Fold ``boxes`` (``repeats`` times ``period`` of them) into the first; its node."""
        first = self.merge([b.node for b in boxes])
        self.folds[first] = (tuple(b.node for b in boxes[:period]), repeats)
        return first

    def merge(self, nodes: list[int]) -> int:
        """Draw ``nodes`` as the first of them, which holds them all; that node."""
        first = nodes[0]
        for node in nodes[1:]:
            self.alias[node] = first
        self.members[first] = [n for node in nodes for n in self.members.pop(node, [node])]
        return first

    def runs(self, keys: list[object]) -> Iterator[tuple[int, int, int]]:
        """``keys`` cut into runs from the start: (first, period, repeats), (k, 0, 0) for one
        that does not fold."""
        k = 0
        while k < len(keys):
            p, r = self.run(keys, k)
            yield k, p, r
            k += p * r if p else 1

    def seq(self, items: list[Block]) -> list[Block]:
        items = [self.inside(b) for b in items]
        keys = [self.key(b) if isinstance(b, Box) else None for b in items]
        out: list[Block] = []
        for k, p, r in self.runs(keys):
            boxes = [b for b in items[k:k + p * r] if isinstance(b, Box)]
            out.append(Box(self.fold_boxes(boxes, p, r)) if p else items[k])
        return out

    def inside(self, block: Block) -> Block:
        if isinstance(block, Box):
            return block
        if isinstance(block, Frame):
            return Frame(block.label, block.kind, self.inside(block.body))
        if isinstance(block, Seq):
            items = self.seq(list(block.items))
            return items[0] if len(items) == 1 else Seq(tuple(items))
        return self.fork([self.inside(b) for b in block.branches])

    def fork(self, branches: list[Block]) -> Block:
        """Runs of at least MIN_REPEATS alike branches as one, framed ``×N alike``; past
        WIDE_FORK branches, those after the first SHOWN_BRANCHES as one box."""
        keys = [self.key(b) for b in branches]
        out: list[Block] = []
        counts: list[int] = []  # how many branches each of out draws
        k = 0
        while k < len(branches):
            r = 1
            while k + r < len(branches) and keys[k + r] == keys[k]:
                r += 1
            if r < MIN_REPEATS:
                out.extend(branches[k:k + r])
                counts += [1] * r
            else:
                first = [b.node for event, b in walk(branches[k]) if isinstance(b, Box)]
                for other in branches[k + 1:k + r]:
                    for mine, node in zip(first, (b.node for _, b in walk(other) if isinstance(b, Box)),
                                          strict=True):
                        self.alias[node] = mine
                out.append(Frame(f"×{r} alike", "fold", branches[k]))
                counts.append(r)
            k += r
        if len(out) > WIDE_FORK:
            rest = self.merge([b.node for branch in out[SHOWN_BRANCHES:] for _, b in walk(branch)
                               if isinstance(b, Box)])
            self.more[rest] = sum(counts[SHOWN_BRANCHES:])
            out = [*out[:SHOWN_BRANCHES], Box(rest)]
        if len(out) == 1:
            return out[0]
        return Fork(tuple(b if isinstance(b, Seq) else Seq((b,)) for b in out))

    def stages(self, stages: list[StageInfo]) -> list[StageInfo]:
        """The stages, their blocks folded, and runs of one-box stages alike folded into one."""
        stages = [replace(s, block=self.inside(s.block)) for s in stages]
        keys = [(s.schedule, self.key(s.block)) if isinstance(s.block, Box) else None for s in stages]
        out: list[StageInfo] = []
        for k, p, r in self.runs(keys):
            if not p:
                out.append(stages[k])
                continue
            boxes = [s.block for s in stages[k:k + p * r] if isinstance(s.block, Box)]
            node = self.fold_boxes(boxes, p, r)
            out.append(StageInfo(stages[k].index, stages[k].schedule, Box(node), stages[k + p * r - 1].index))
        return out
