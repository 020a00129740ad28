"""A C sample loop whose body holds a loop, printed in blocks of lanes (:func:`blocks`).

GCC does not vectorise a sample loop around an inner loop (an outer loop with a nested cycle
and calls), so a kernel with a loop would run one sample at a time.  Printed in blocks of
``BLOCK`` samples, each per-sample var an array of ``BLOCK`` values, each run of plain
statements a loop over the lanes (which vectorises, ``sin`` and the like through their vector
clones) and each loop's turns outside the lanes, the block runs the loop for ``BLOCK`` samples
at once.  An ``if`` holding a loop becomes two masks of lanes its arms run under.  Every lane
runs the statements a sample runs, in the same order: the same bits as one sample at a time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hawk.ir import If, Load, Loop, Op, Stmt, Var, walk

if TYPE_CHECKING:
    from hawk.emit import Emitter


#: The samples of a block: a block's loop over its lanes is what GCC vectorises, so it holds whole
#: vectors of every lane type (16 uint32 or 8 doubles in one AVX-512 register) a few times over,
#: which also gives each vector op independent neighbours (measured on the photon benchmark: 32
#: lanes run its fused step 1.6x and its split one 1.14x as fast as 8; 64 are no faster than 32).
BLOCK = 32
#: A lane's type where the sample loop's differs: a bool (or a mask) as wide as a float, since GCC
#: has no vector of eight bytes to hold eight lanes of it, and leaves a loop of them scalar.
LANE_CTYPES = {"bool": "int32_t"}


def has_loop(body: list[Stmt]) -> bool:
    return any(isinstance(s, Loop) for s in walk(body))


def blocks(em: Emitter, loop: list[Stmt], varying: list[Var], ctypes: dict[str, str]) -> list[str]:
    """Most of the samples in blocks of ``BLOCK``; the rest (fewer) run in the plain loop after."""
    from hawk.types import strong

    indices = {id(s.index) for s in walk(loop) if isinstance(s, Loop)}
    saved = set(em.per_sample)
    em.per_sample -= indices  # a turn counter is the block's, one for all its lanes
    lines = [f"    const int64_t part = ({em.stop} - begin) / {BLOCK} * {BLOCK};",
             f"    for (int64_t i = begin; i < begin + part; i += {BLOCK}) {{"]
    em.stream = ""
    for v in varying:
        size, t = "" if id(v) in indices else f"[{BLOCK}]", strong(v.dtype)
        lines.append(f"        {LANE_CTYPES.get(t, ctypes[t])} {em.var(v)}{size};")
    em.stream, em.sample = "[l]", em.sample_at("i + l")
    _Lanes(em, BLOCK).print(loop, None, "        ", lines)
    em.stream, em.sample = "", "i"
    em.per_sample = saved
    lines += ["    }", "    const int64_t rest = begin + part;"]
    return lines


def _same_everywhere(s: Stmt) -> bool:
    return isinstance(s, (Op, Load)) and s.dst.uniform


class _Lanes:
    def __init__(self, em: Emitter, lanes: int) -> None:
        self.em, self.lanes, self.masks = em, lanes, 0

    def uniform(self, operand: object) -> str:
        """A value the same in every lane, outside a loop over the lanes: lane 0's."""
        self.em.stream = "[0]"
        text = self.em.operand(operand)
        self.em.stream = "[l]"
        return text

    def print(self, stmts: list[Stmt], mask: str | None, pad: str, out: list[str]) -> None:
        group: list[Stmt] = []
        for s in stmts:
            if isinstance(s, Loop) or (isinstance(s, If) and has_loop([s])):
                self.over_lanes(group, mask, pad, out)
                group = []
                if isinstance(s, Loop):
                    self.loop(s, mask, pad, out)
                else:
                    self.branch(s, mask, pad, out)
            else:
                group.append(s)
        self.over_lanes(group, mask, pad, out)

    def over_lanes(self, group: list[Stmt], mask: str | None, pad: str, out: list[str]) -> None:
        if not group:
            return
        out += [f"{pad}HK_LANES", f"{pad}for (int64_t l = 0; l < {self.lanes}; ++l) {{"]
        masked = False
        for s in group:
            # a value the same for every sample is computed in every lane: lane 0 gives a loop its count
            if mask is not None and masked == _same_everywhere(s):
                out.append(f"{pad}    }}" if masked else f"{pad}    if ({mask}) {{")
                masked = not masked
            self.em.statement(s, out, pad + "    " * (1 + masked))
        if masked:
            out.append(f"{pad}    }}")
        out.append(f"{pad}}}")

    def loop(self, s: Loop, mask: str | None, pad: str, out: list[str]) -> None:
        index = self.em.var(s.index)
        count = self.uniform(s.count)
        out.append(f"{pad}for (int64_t {index} = 0; {index} < (int64_t){count}; ++{index}) {{")
        self.print(s.body, mask, pad + "    ", out)
        updates = []
        for c, u in zip(s.carried, s.update, strict=True):
            guard = "" if mask is None or c.uniform else f"if ({mask}) "
            updates.append(f"{guard}{self.em.var(c)} = {self.em.var(u)};")
        if updates:
            out += [f"{pad}    HK_LANES", f"{pad}    for (int64_t l = 0; l < {self.lanes}; ++l) {{"]
            out += [f"{pad}        {u}" for u in updates]
            out.append(f"{pad}    }}")
        out.append(f"{pad}}}")

    def branch(self, s: If, mask: str | None, pad: str, out: list[str]) -> None:
        if s.cond.uniform and id(s.cond) not in self.em.per_sample:
            out.append(f"{pad}if ({self.uniform(s.cond)}) {{")
            self.print(s.then, mask, pad + "    ", out)
            out.append(f"{pad}}} else {{")
            self.print(s.orelse, mask, pad + "    ", out)
            out.append(f"{pad}}}")
            return
        k, self.masks = self.masks, self.masks + 1
        cond, before = self.em.var(s.cond), f"{mask} && " if mask else ""
        out += [f"{pad}int32_t mt{k}[{self.lanes}], mf{k}[{self.lanes}], at{k} = 0, af{k} = 0;",
                f"{pad}HK_LANES", f"{pad}for (int64_t l = 0; l < {self.lanes}; ++l) {{",
                f"{pad}    mt{k}[l] = {before}{cond};",
                f"{pad}    mf{k}[l] = {before}!{cond};",
                f"{pad}    at{k} |= mt{k}[l];", f"{pad}    af{k} |= mf{k}[l];", f"{pad}}}"]
        self.arm(s.then, f"mt{k}", f"at{k}", pad, out)
        self.arm(s.orelse, f"mf{k}", f"af{k}", pad, out)

    def arm(self, body: list[Stmt], mask: str, any_lane: str, pad: str, out: list[str]) -> None:
        """An arm under its mask, skipped by the whole block where no lane takes it (a block of
        finished samples, an arm of a dispatch no lane chose): a sample runs an arm's statements
        only when it takes the arm, as in the plain loop, so skipping changes no bit."""
        if not body:
            return
        out.append(f"{pad}if ({any_lane}) {{")
        self.print(body, f"{mask}[l]", pad + "    ", out)
        out.append(f"{pad}}}")
