"""Random builder programs for the differential fuzzer, each written out twice.

A program is a small tree of statements (kernel calls, forks with waits,
device if/elif/else and match, capped loops with break/continue, counted
loops, Python loops and containers, buffers, a closure, rows of a 2-D
argument, an argument written in place, a result tree).  It is rendered

- as an ``@eagle.Graph.builder`` function (inside a factory, so the builder
  closes over a number), and
- as plain Python on NumPy arrays: the same statements run eagerly, kernels
  by hawk's reference evaluator, forks as their branches one after another,
  device conditions as Python conditions on the cell's value.

The second is what the program means, independent of everything eagle
records; the tests hold the graph to it and to the reference interpreter.

Kernels come from pools: a pool is a module of random arithmetic kernels
made from a pool number, compiled once and shared by the programs drawn
over it (compiling a kernel costs far more than recording a program).
"""

from __future__ import annotations

import importlib.util
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from hypothesis import strategies as st

# ------------------------------------------------------------------ kernels

GUARDS = '''
@hawk.kernel
def below(s: Scalar, lim: Param, flag: Mutable[UInt32]):
    flag = hm.uint32(hawk.sum(s < lim))

@hawk.kernel
def over(s: Scalar, lim: Param, flag: Mutable[UInt32]):
    flag = hm.uint32(hawk.sum(s > lim))

@hawk.kernel
def accumulate(s: Scalar, y: Mutable[Scalar]):
    if hawk.sample() % 97 < 40:  # runs of samples: whole blocks of the C's guarded loop, and mixed ones
        y = y + s
    else:
        y = y * 0.5

@hawk.kernel
def total(s: Scalar) -> Scalar:
    return hawk.sum(s)

@hawk.kernel
def halves(s: Scalar, y: Scatter.clamp):
    y[hawk.sample() // 2] += s
'''

#: hawk.func helpers the kernels call (_flow_lines): one smooth, one with an early return and a loop
HELPERS = '''
@hawk.func
def soft(v: Scalar, w: Scalar) -> Scalar:
    return 0.5 * hm.sin(v + 0.25 * w) + 0.75 * v

@hawk.func
def settle(v: Scalar, lim: Param) -> Scalar:
    if v > lim:
        return lim
    for i in range(3):
        if v < -lim:
            break
        v = v * 0.5 - 0.125 * i
    return v
'''

# what a counted loop's body does with its index (a one-cell int32 plane in the builder)
INDEXED = '''
from hawk import Int32

@hawk.kernel
def turn(s: Scalar, i: Int32) -> Scalar:
    return s * 0.5 + hm.float64(i) * 0.25
'''

#: helpers of several results the kernels unpack (_gaps_lines): a tuple from two returns, a struct
GAPS_HELPERS = '''
@hawk.func
def twice(v: Scalar, w: Scalar) -> tuple[Scalar, Scalar]:
    if v > w:
        return w, 0.5 * hm.sin(v)
    return 0.5 * hm.cos(w) * v, v

@hawk.func
def framed(v: Scalar, w: Scalar) -> Frame:
    return Frame(axis=hawk.vec3(v, hm.sin(w), 0.5), scale=hm.cos(v * w))
'''

#: the struct the kernels' value lines build (_value_lines)
VALUE_TYPES = '''
@hawk.struct
class Frame:
    axis: hawk.vec3
    scale: Scalar
'''

#: checked Table reads and a placing Scatter (_checked): indices always in range, each cell placed once,
#: so a program never raises; fused, their checks and the placing sort run inside the run
CHECKED = '''
@hawk.kernel
def picked(s: Scalar, t: Table) -> Scalar:
    return 0.5 * s + t[hawk.sample()] - 0.25 * t[hawk.sample() - hawk.sample() % 2]

@hawk.kernel
def placed(s: Scalar, y: Scatter):
    y[hawk.sample()] = s * 0.5
'''

#: the stepping loop's own kernels (_until): a fresh terminated plane, the state's blend with a pool
#: kernel's value, and the test that finishes a sample
STEPPING = '''
@hawk.kernel
def undone(s: Scalar) -> UInt32:
    return hm.uint32(0)

@hawk.kernel
def blend(w: Scalar, s: Mutable[Scalar]):
    s = 0.5 * s + 0.25 * w + 0.5

@hawk.kernel
def ripen(s: Scalar, lim: Param, done: Mutable[UInt32]):
    if s > lim:
        done = hm.uint32(1)
'''

CONSTANTS = ("0.5", "1.25", "-0.75", "2.0", "0.125", "-1.5")


@dataclass(frozen=True)
class KernelSpec:
    name: str
    planes: int  # per-sample Scalar parameters
    param: bool  # a trailing Param
    smooth: bool  # differentiable everywhere: no per-sample if, no minimum/maximum
    vector: bool = False  # its Param is a Param[hawk.vec3] (_vector_param)


def _expr(rng: random.Random, names: list[str], depth: int, smooth: bool) -> str:
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(names + list(CONSTANTS[:2]))
    a, b = _expr(rng, names, depth - 1, smooth), _expr(rng, names, depth - 1, smooth)
    if rng.random() < 0.2:
        return _math_expr(rng, a, b, smooth)
    choice = rng.randrange(7 if smooth else 9)
    if choice < 4:
        return f"({a} {'+-*+'[choice]} {b})"
    if choice == 4:
        return f"({rng.choice(CONSTANTS)} * {a})"
    if choice < 7:  # eagle's own math (hawk.libm): bounded and smooth
        return f"hm.{'sin' if choice == 5 else 'cos'}({a})"
    return f"hm.{'minimum' if choice == 7 else 'maximum'}({a}, {b})"


def _table_reads(rng: random.Random, params: list[str]) -> tuple[dict[str, str], list[str]]:
    """Half the kernels of two planes or more read their last as a Table, clamped or wrapped, at
    two neighbouring samples (``a1[hawk.sample() - 1]``), or checked (:func:`_checked_reads`): its
    annotation, and the names the kernel's expressions draw from in place of the plane."""
    if len(params) < 2 or rng.random() < 0.5:
        return {}, params
    table, mode = params[-1], rng.choice(("clamp", "wrap", "check"))
    if mode == "check":
        return {table: "Table"}, [*params[:-1], *_checked_reads(table)]
    reads = [f"{table}[hawk.sample() {'-' if d < 0 else '+'} {abs(d)}]"
             for d in rng.sample((-2, -1, 1, 3), 2)]
    return {table: f"Table.{mode}"}, [*params[:-1], *reads]


def _checked_reads(table: str) -> list[str]:
    """Checked reads (``Table``) of the sample itself and of another, which is one past the end at
    sample 16 of 17 and sample 1028 of 1029: over those lengths (or past a one-cell Table, a sum)
    the launch raises IndexError, which every face of the program must raise (the GPU's at the
    wait, after the outermost device construct); the bounds hold for the other lengths whatever
    the values."""
    return [f"{table}[hawk.sample()]", f"{table}[hawk.sample() + hm.int32(hawk.sample() % 1012 == 16)]"]


def _math_expr(rng: random.Random, a: str, b: str, smooth: bool) -> str:
    """hawk.math beyond sin and cos, and hawk.random's draws (a value with no derivative): each kept
    inside its domain, bounded, and smooth where ``smooth`` asks (fmod, sign, clip, the bits: not)."""
    seed, counter = rng.randrange(-3, 100), rng.randrange(4)
    forms = [f"hm.tanh({a})", f"hm.atan({a})", f"hm.erf({a})", f"hm.sinh(hm.tanh({a}))",
             f"hm.cosh(hm.tanh({a}))", f"hm.asin(0.5 * hm.tanh({a}))", f"hm.acos(0.5 * hm.tanh({a}))",
             f"hm.log1p({a} * {a})", f"hm.expm1(hm.tanh({a}))", f"hm.log2(1.0 + {a} * {a})",
             f"hm.log10(2.0 + hm.tanh({a}))", f"hm.exp2(hm.tanh({a}))",
             f"hm.hypot({a}, 1.0 + 0.5 * hm.tanh({b}))", f"hm.atan2({a}, 2.0 + hm.tanh({b}))",
             f"({a} * hawk.random.uniform({seed}, {counter}))",
             f"({a} + hawk.random.normal({seed}, {counter}))", f"({a} - hawk.random({seed}, {counter}))",
             f"({a} * hawk.random.uniform({seed}, {counter}, sample={rng.randrange(5)}))"]
    if not smooth:
        forms += [f"hm.fmod({a}, 1.5)", f"hm.sign({a})", f"hm.clip({a}, -1.0, {b})",
                  f"hm.where(hm.isfinite({a}) and not hm.isnan({b}), {a}, {b})",
                  f"(hm.float64(hawk.random.bits({seed}, {counter}, {rng.randrange(4)})) * 2.0 ** -32)",
                  f"hm.float64(hawk.random.uniform32({seed}, {counter}))"]
    return rng.choice(forms)


def _flow_lines(rng: random.Random, names: list[str], smooth: bool) -> list[str]:
    """Loops, helpers and (in a kernel that need not be smooth) break, continue, a capped while
    and an early return, each rebinding ``t`` within bounds."""
    lines = []
    if rng.random() < 0.5:  # a counted loop; smooth: every sample runs every turn
        lines += [f"    for i in range({rng.randint(1, 3)}):"]
        if not smooth:
            lines += [f"        if t > {_expr(rng, names, 1, True)}:",
                      f"            {rng.choice(['break', 'continue'])}"]
        lines += [f"        t = 0.5 * hm.sin(t * {rng.choice(CONSTANTS)} + {rng.choice(names)}) + 0.25 * t"
                  " + 0.125 * i"]
    if rng.random() < 0.5:
        lines.append(f"    t = soft(t, {rng.choice(names)})")
    if not smooth and rng.random() < 0.5:
        lines += ["    while hawk.capped(t > 0.5, 3):", "        t = t * 0.5 - 0.125"]
    if not smooth and rng.random() < 0.5:
        lines += [f"    if t < {rng.choice(CONSTANTS)}:",
                  "        return hm.minimum(hm.maximum(t, -1e6), 1e6)",
                  f"    t = settle(t, {rng.choice(CONSTANTS[:2])})"]
    return lines


def _gaps_lines(rng: random.Random, names: list[str], smooth: bool) -> list[str]:
    """Helpers' tuple and struct results, unpacked; hawk.sample2 of any width; per-sample loop
    counts under a cap (``hawk.capped_range``): in a smooth kernel counted from the sample's
    index, elsewhere from a value as well (a count that jumps with it), carrying a tuple
    assignment."""
    lines = []
    if rng.random() < 0.5:  # twice's two returns: a per-sample choice
        lines += [f"    t, r = twice(t, {rng.choice(names)})" if not smooth else
                  f"    r, s = twice(1e9, hm.cos(t) + {rng.choice(names)})",
                  f"    f = framed(t, {rng.choice(['r', *names])})",
                  "    t = t * 0.5 + hawk.dot(f.axis, hawk.vec3(0.25, t, 0.5)) * f.scale"]
    if rng.random() < 0.5:  # any width: hawk.grid_index's row and column (0: both 0; floored below)
        lines += [f"    ri, rj = hawk.sample2({rng.choice((-3, 0, 1, 4, 7))})",
                  "    t = t + 0.125 * hm.float64(ri - 2 * rj)"]
    if rng.random() < 0.5:
        return lines
    count = f"hawk.sample() % {rng.randint(2, 5)}" if smooth or rng.random() < 0.5 else \
        f"hm.int32(2.0 + 2.0 * hm.sin({rng.choice(names)}))"
    bounds = count if rng.random() < 0.5 else f"{rng.randint(0, 2)}, {count}"
    # the turn's two values carried through a tuple assignment (both computed before either is set)
    return [*lines, "    tq = t * 0.5", f"    for i in hawk.capped_range({bounds}, {rng.randint(1, 4)}):",
            f"        t, tq = 0.5 * hm.cos(tq * {rng.choice(CONSTANTS)} + {rng.choice(names)}) + 0.125 * i, "
            "t",
            "    t = t + 0.25 * tq"]


def _table_loop_lines(rng: random.Random, annotations: dict[str, str]) -> list[str]:
    """A Table read in a loop of a capped count (hawk.capped_range: the Table's gradient records a
    row per turn up to the cap, turns past the count none), rebinding ``t`` within bounds."""
    if not annotations or rng.random() < 0.5:
        return []
    table = next(iter(annotations))
    return [f"    for i in hawk.capped_range({rng.randint(0, 3)}, {rng.randint(1, 4)}):",
            f"        t = 0.5 * t + 0.25 * hm.sin({table}[hawk.sample() - i] * t"
            f" + {table}[hawk.sample() + i])"]


def _value_lines(rng: random.Random, names: list[str], smooth: bool) -> list[str]:
    """Vector, matrix and quaternion values (hawk.vec3, mat33, quat) and a struct local (Frame)
    made from the scalars, folded back into ``t``.  Their components are bounded (sines and
    cosines) and the matrix inverted is diagonally dominant, so no turn of a loop overflows and
    every gradient is finite."""
    if rng.random() < 0.5:
        return []

    def bounded() -> str:
        return f"hm.{rng.choice(('sin', 'cos'))}({rng.choice([*names, 't'])})"

    vectors = ["hawk.cross(u, w)", "m @ u", "hawk.transpose(m) @ w", f"u * {rng.choice(CONSTANTS)} - w",
               "hawk.cw_mul(u, w)", "(m * m) @ w", "hawk.inverse(a) @ u", "hawk.solve(a, w)",
               "hawk.quat_rotate(q, u)", "-(hawk.outer(u, w) @ u)"]
    scalars = ["hawk.dot(v, u)", "v.x", "v[2]", "hawk.determinant(m)", "hawk.trace(a)", "hawk.length_sq(v)",
               "hawk.dot(q * q, q)"]
    if not smooth:  # a select at zero length, a per-sample choice
        vectors += ["hawk.normalize(u - w)", "hm.where(t > 0.0, u, w)", "u if t < 0.5 else hawk.cross(w, u)"]
        scalars += ["hawk.length(v - u)"]
    return [f"    u = hawk.vec3({bounded()}, {bounded()}, {rng.choice(CONSTANTS)})",
            f"    w = hawk.vec3({bounded()}, {rng.choice(CONSTANTS)}, {bounded()})",
            "    m = hawk.mat33(u, w, hawk.cross(u, w))",
            "    a = hawk.identity33() * 4.0 + m * 0.125",
            f"    q = hawk.normalize(hawk.quat({bounded()}, {bounded()}, 0.5, 1.0))" if not smooth else
            f"    q = hawk.quat({bounded()}, 0.25, {bounded()}, 0.5)",
            f"    v = {rng.choice(vectors)}",
            f"    f = Frame(axis=v, scale={bounded()})",
            f"    f.scale = f.scale * {rng.choice(CONSTANTS)}",
            f"    t = t + {rng.choice(scalars)} * {rng.choice(CONSTANTS)} + hawk.dot(f.axis, w) * f.scale"]


def _match_lines(rng: random.Random, names: list[str], policy: bool = True,
                 selector: str | None = None) -> list[str]:
    """A per-sample match on an integer (``selector``, else one made from the values): a plain
    one, or (``policy``) a dispatch group whose author's policy is drawn ("auto" runs "switch");
    arms of random arithmetic rebinding ``t``, a ``case a | b``, half the time a ``case _``.  No
    arm reads a Table, so every policy runs it ("predicated" refuses a checked read)."""
    plain = [n for n in names if "hawk.sample()" not in n] + ["t"]
    subject = selector or f"hm.int32(3.0 * hm.sin({rng.choice(plain)}))"  # -3 ... 3
    if policy and rng.random() < 0.75:
        subject = f'hawk.dispatch({subject}, "g", policy="{rng.choice(("auto", "switch", "predicated"))}")'
    values = rng.sample(range(-3, 4), rng.randint(2, 5))
    cases = [str(v) for v in values[:-2]] + [f"{values[-2]} | {values[-1]}"]
    rng.shuffle(cases)
    if rng.random() < 0.5:
        cases.append("_")
    lines = [f"    match {subject}:"]
    for case in cases:
        lines += [f"        case {case}:", f"            t = {_expr(rng, plain, 2, False)}"]
    return lines


def _vector_param(spec: KernelSpec) -> tuple[str, str]:
    """A kernel's Param annotation and how its expressions read it: a ``Param[hawk.vec3]`` (passed
    as three numbers, :func:`_param_text`) read through its components, or a plain ``Param``."""
    if spec.vector:
        return "Param[hawk.vec3]", "(p.x + 0.5 * p[1] - 0.25 * p.z)"
    return "Param", "p"


def _param_text(kernel: KernelSpec, param: str) -> str:
    """The argument a call passes for the kernel's Param (a vector Param: three numbers of its own)."""
    return f"({CONSTANTS[0]}, {CONSTANTS[1]}, {CONSTANTS[2]})" if kernel.vector else param


def _kernel_source(rng: random.Random, spec: KernelSpec, matches: random.Random | None = None) -> str:
    """A random kernel; ``matches`` draws its per-sample match (a non-smooth kernel's, half the
    time: the rest of the kernel is drawn from ``rng`` as it was before matches were drawn)."""
    params = [f"a{j}" for j in range(spec.planes)]
    annotations, read = _table_reads(rng, params)
    param, p = _vector_param(spec)
    names = read + ([p] if spec.param else [])
    signature = ", ".join([f"{p}: {annotations.get(p, 'Scalar')}" for p in params]
                          + ([f"p: {param}"] if spec.param else []))
    lines = ["@hawk.kernel", f"def {spec.name}({signature}) -> Scalar:",
             f"    t = {_expr(rng, names, 2, spec.smooth)}", *_value_lines(rng, names, spec.smooth),
             *_flow_lines(rng, names, spec.smooth), *_gaps_lines(rng, names, spec.smooth),
             *_table_loop_lines(rng, annotations)]
    if not spec.smooth and matches is not None and matches.random() < 0.5:
        lines += _match_lines(matches, names)
    if not spec.smooth:
        lines += [f"    if t > {_expr(rng, names, 1, True)}:",
                  f"        t = {_expr(rng, [*names, 't'], 2, False)}"]
        # bounded, so that no turn of a loop overflows to inf (and no inf - inf makes a NaN)
        lines.append(f"    return hm.minimum(hm.maximum({_expr(rng, [*names, 't'], 1, False)}, -1e6), 1e6)")
    else:
        lines.append(f"    return {_expr(rng, [*names, 't'], 2, True)}")
    return "\n".join(lines) + "\n"


def dispatch_kernel(number: int) -> str:
    """A module of one kernel ``split`` whose dispatch group "g" matches the Int32 plane ``m``,
    as ``segmented`` can partition by, besides a Scalar and a Mutable written in some arms, and
    half the time loops in some arms (which "predicated" refuses), for the test that holds every
    policy (switch, predicated, segmented) to the reference."""
    rng = random.Random(f"dispatch:{number}")
    names = ["a0", "p"]
    lines = ["import hawk", "from hawk import Int32, Mutable, Param, Scalar", "from hawk import math as hm",
             "", "@hawk.kernel", "def split(a0: Scalar, m: Int32, acc: Mutable[Scalar], p: Param) -> Scalar:",
             f"    t = {_expr(rng, names, 2, False)}"]
    looped = rng.random() < 0.5  # loops in arms: the C runs in blocks of lanes, each arm skipped where
    for line in _match_lines(rng, names, policy=False, selector="m"):  # no lane of a block takes it
        lines.append(line.replace("match m:", 'match hawk.dispatch(m, "g"):'))
        if line.startswith("            t = ") and looped and rng.random() < 0.5:
            turn = f"0.5 * hm.sin(t * {rng.choice(CONSTANTS)} + a0) + 0.25 * t + 0.125 * i"
            lines += [f"            for i in range({rng.randint(1, 3)}):", f"                t = {turn}"]
        if line.startswith("            t = ") and rng.random() < 0.5:  # the Mutable, in some arms only
            lines.append(f"            acc = acc * 0.5 + {_expr(rng, [*names, 't'], 1, False)}")
    lines.append("    return hm.minimum(hm.maximum(t, -1e6), 1e6)")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Pool:
    number: int
    kernels: tuple[KernelSpec, ...]
    source: str


def make_pool(number: int, size: int = 8) -> Pool:
    rng = random.Random(number)
    specs = tuple(KernelSpec(f"k{j}", rng.randint(1, 3), rng.random() < 0.5, smooth=j % 2 == 0,
                             vector=j % 4 == 3) for j in range(size))
    body = "\n".join(_kernel_source(rng, s, random.Random(f"{number}:{s.name}")) for s in specs)
    header = ("import hawk\nfrom hawk import Mutable, Param, Scalar, Scatter, Table, UInt32\n"
              "from hawk import math as hm\n")
    return Pool(number, specs, header + GUARDS + HELPERS + INDEXED + VALUE_TYPES + GAPS_HELPERS + CHECKED
                + STEPPING + "\n" + body)


_LOADED: dict[tuple[int, str], ModuleType] = {}


def load_pool(pool: Pool, folder: Path) -> ModuleType:
    """The pool's module, written into ``folder`` and imported once per process."""
    key = (pool.number, str(folder))
    if key not in _LOADED:
        _LOADED[key] = load_module(pool.source, folder / f"fuzz_pool_{pool.number}.py")
    return _LOADED[key]


def load_module(source: str, path: Path) -> ModuleType:
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module  # the builder and hawk read the source through the module
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------- statements

@dataclass
class Call:
    target: str
    kernel: KernelSpec
    args: list[str]
    param: str | None
    buffer: bool = False


@dataclass
class Accumulate:
    src: str  # y += src, through a Mutable argument


@dataclass
class Halves:
    src: str  # y[i // 2] += src[i], through a Scatter argument (a fixed-order sum per cell)


@dataclass
class Placed:
    src: str  # y[i] = src[i] * 0.5, through a placing Scatter (each cell once, checked)


@dataclass
class Guard:
    kernel: str  # "below" or "over"
    src: str
    lim: str
    cell: str


@dataclass
class If:
    arms: list[tuple[str, list[Any]]]  # (cell, body): if, then elifs
    orelse: list[Any] | None


@dataclass
class Match:
    cell: str
    arms: dict[int, list[Any]]
    default: list[Any]


@dataclass
class Capped:
    turns: int
    flag: str
    head: list[Any]
    exit: tuple[str, str, str, str] | None  # ("break" | "continue", done cell, src, lim)
    tail: list[Any]
    guard: Guard | None  # writes `flag` at the end of the head
    index: str = "_"  # the loop variable: the turn, which the head may read


@dataclass
class Counted:
    cell: str
    body: list[Any]
    index: str = "i"  # the loop variable, its own name in each loop of a nest


@dataclass
class IndexCall:
    target: str  # target = turn(target, index + offset): a counted loop's body reads its index
    index: str
    offset: int


@dataclass
class Scan:
    turns: str  # a Python number, or the cell `cnt` (past the rows of xs, both faces raise IndexError)
    call: Call  # reads xs[t]: one device loop over the rows of xs


@dataclass
class Fork:
    branches: list[list[Any]]
    waits: dict[int, str]  # branch -> a name written by an earlier branch


@dataclass
class PyFor:
    target: str
    kernels: list[KernelSpec]  # unrolled at record time: `for k in (ka, kb): t = k(t)`


@dataclass
class Total:
    target: str  # a one-cell plane: hawk.sum over the samples of src, read by later kernels
    src: str


@dataclass
class Until:
    start: Call  # the loop's state: a new name, which the loop writes in place
    step: Call | None  # a pool kernel of the state (its target: the plan's name), blended into it
    lim: str  # a sample is done once its state is over lim
    cap: int  # max_steps


@dataclass
class Append:
    container: str
    kernel: KernelSpec
    src: str


ARGS = ("x0", "x1")
ITEMS = ("st['a']", "st['b']")  # items of a dict made from the arguments, rebound like names
ITEMS_OF = dict(zip(ITEMS, ("x0", "x1"), strict=True))  # the argument each item starts as
ROWS = ("xs[0]", "xs[1]")
CELLS = ("c0", "c1")
LOOP_CELLS = 4  # fl0..fl3 (guards, start at 1) and dn0..dn3 (exits, start at 0)


@dataclass(repr=False)
class Program:
    pool: Pool
    n: int
    body: list[Any]
    result: Any  # a tree of names
    closure: float
    values: dict[str, Any]  # the starting value of each builder argument: starting_values(n, seed, cells)
    seed: int
    cells: dict[str, int]
    smooth: bool = False
    rows: bool = True
    loops: int = 0
    names: int = 0
    read: set[str] = field(default_factory=set)  # the arguments kernels read (x0, x1)
    rebound: set[str] = field(default_factory=set)  # the names assigned so far, in program order
    totals: list[str] = field(default_factory=list)  # the one-cell sums made so far

    def builder_source(self) -> str:
        return render(self, "builder")

    def eager_source(self) -> str:
        return render(self, "eager")

    def reads(self, names: list[str]) -> None:
        """Kernels read ``names``: an argument (or an item holding it) counts while not rebound."""
        for name in names:
            argument = ITEMS_OF.get(name, name)
            if name not in self.rebound and argument in ARGS:
                self.read.add(argument)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # what Hypothesis prints for a failure
        printer.text(repr(self))

    def __repr__(self) -> str:  # both renderings: a failing program can be read and run as it is
        values = f"# arguments: programs.starting_values({self.n}, {self.seed}, {self.cells})"
        return (f"Program(pool={self.pool.number}, n={self.n}, closure={self.closure})\n{values}\n"
                f"# ---- builder\n{self.builder_source()}\n# ---- eager\n{self.eager_source()}")


# ---------------------------------------------------------------- drawing

class _Scope:
    """What the statement being drawn may read and rebind."""

    def __init__(self, readable: list[str], rebindable: list[str]) -> None:
        self.readable, self.rebindable = readable, rebindable

    def child(self) -> _Scope:
        return _Scope(list(self.readable), list(self.rebindable))


def _new_name(program: Program) -> str:
    program.names += 1
    return f"v{program.names}"


def _kernels(program: Program) -> list[KernelSpec]:
    return [k for k in program.pool.kernels if k.smooth or not program.smooth]


def _call(draw: Any, program: Program, scope: _Scope, target: str) -> Call:
    kernel = draw(st.sampled_from(_kernels(program)))
    sources = scope.readable + (list(ROWS) if program.rows else [])
    args = [draw(st.sampled_from(sources + program.totals)) for _ in range(kernel.planes)]
    if all(a in program.totals for a in args):  # one plane of all the samples decides the length
        args[0] = draw(st.sampled_from(sources))
    program.reads(args)
    program.rebound.add(target)
    param = None
    if kernel.param:
        param = draw(st.sampled_from(["scale", *CONSTANTS[:3]]))
    return Call(target, kernel, args, param, buffer=draw(st.booleans()) and draw(st.booleans()))


def _assign(draw: Any, program: Program, scope: _Scope, new_only: bool) -> Call:
    if scope.rebindable and not new_only and draw(st.booleans()):
        return _call(draw, program, scope, draw(st.sampled_from(scope.rebindable)))
    call = _call(draw, program, scope, _new_name(program))
    scope.readable.append(call.target)
    return call


def _block(draw: Any, program: Program, scope: _Scope, depth: int, device: bool, size: int) -> list[Any]:
    """Statements; inside a device construct only names from outside are rebound (a name first made
    in one arm would not exist after the other)."""
    body: list[Any] = []
    for _ in range(draw(st.integers(1, size))):
        body.append(_statement(draw, program, scope, depth, device))
    return body


def _statement(draw: Any, program: Program, scope: _Scope, depth: int, device: bool) -> Any:
    kinds = ["call", "call", "call"]
    if not device:
        kinds += ["pyfor"]
    if not device and not program.smooth:
        kinds += ["accumulate", "halves"]
    if not device:  # the top level (a fork's branches only assign)
        kinds += ["total"]
    kinds += ["picked"] + ([] if device or program.smooth else ["placed"])  # checked reads, placing
    if not device and not program.smooth:  # a stepping loop has no derivative
        kinds += ["until"]
    kinds += ["scan"]
    if depth > 0:
        kinds += ["if", "match", "counted"]
        if program.loops < LOOP_CELLS:
            kinds += ["capped"]
        if not device:
            kinds += ["fork"]
    kind = draw(st.sampled_from(kinds))
    inner = scope.child() if device else scope
    if kind == "call":
        if device:  # rebind only: a name made here would be unassigned after the construct
            target = draw(st.sampled_from(scope.rebindable))
            return _call(draw, program, scope, target)
        return _assign(draw, program, scope, new_only=False)
    if kind == "accumulate":
        return Accumulate(draw(st.sampled_from(scope.readable)))
    if kind == "halves":
        return Halves(draw(st.sampled_from(scope.readable)))
    if kind in ("picked", "placed"):
        return _checked(draw, program, scope, kind, device)
    if kind == "total":
        program.totals.append(f"t{len(program.totals)}")
        total = Total(program.totals[-1], draw(st.sampled_from(scope.readable)))
        program.reads([total.src])
        return total
    if kind == "until":
        return _until(draw, program, scope)
    if kind == "pyfor":
        target = draw(st.sampled_from(scope.rebindable))
        ones = [k for k in _kernels(program) if k.planes == 1 and not k.param]
        if not ones:
            return _call(draw, program, scope, target)
        program.reads([target])
        program.rebound.add(target)
        return PyFor(target, draw(st.lists(st.sampled_from(ones), min_size=1, max_size=3)))
    if kind == "if":
        arms = [(draw(st.sampled_from(CELLS)), _block(draw, program, inner.child(), depth - 1, True, 2))
                for _ in range(draw(st.integers(1, 2)))]
        orelse = _block(draw, program, inner.child(), depth - 1, True, 2) if draw(st.booleans()) else None
        return If(arms, orelse)
    if kind == "match":
        keys = draw(st.lists(st.integers(0, 3), min_size=1, max_size=3, unique=True))
        return Match("sel", {k: _block(draw, program, inner.child(), depth - 1, True, 2) for k in keys},
                     _block(draw, program, inner.child(), depth - 1, True, 2))
    if kind == "counted":
        return _counted(draw, program, inner, depth)
    if kind == "scan":
        return _scan(draw, program, scope)
    if kind == "capped":
        return _capped(draw, program, inner, depth)
    return _fork(draw, program, scope, depth)


#: the kernel of checked Table reads (CHECKED), drawn as a call: smooth in both its planes
PICKED = KernelSpec("picked", 2, False, smooth=True)


def _checked(draw: Any, program: Program, scope: _Scope, kind: str, device: bool) -> Call | Placed:
    """``v = picked(a, b)`` (b read as a checked Table) or ``placed(a, y)`` (a placing Scatter)."""
    if kind == "placed":
        src = draw(st.sampled_from(scope.readable))
        program.reads([src])
        return Placed(src)
    args = [draw(st.sampled_from(scope.readable)) for _ in range(2)]
    program.reads(args)
    target = draw(st.sampled_from(scope.rebindable)) if device else _new_name(program)
    if not device:
        scope.readable.append(target)
    program.rebound.add(target)
    return Call(target, PICKED, args, None)


def _until(draw: Any, program: Program, scope: _Scope) -> Until:
    """``eagle.until_done`` over a new state ``v``: each step ``v = blend(k(v, ...), v)`` and the
    samples whose ``v`` passed ``lim`` finish; plain Python masks the finished samples by hand."""
    start = _assign(draw, program, scope, new_only=True)
    # one plane: a kernel of more may read its last as a Table, whole, which no mask can cover
    ones = [k for k in _kernels(program) if k.planes == 1]
    kernel = draw(st.sampled_from(ones)) if ones else None
    param = draw(st.sampled_from(["scale", *CONSTANTS[:3]])) if kernel is not None and kernel.param else None
    step = Call(f"p{start.target}", kernel, [start.target], param) if kernel is not None else None
    return Until(start, step, draw(st.sampled_from(["0.0", "1.0", "1.9"])), draw(st.integers(1, 6)))


def _counted(draw: Any, program: Program, scope: _Scope, depth: int) -> Counted:
    """``for i<depth> in range(cnt)``, whose body may read its index (``turn(v, i + k)``)."""
    index = f"i{depth}"
    body = _block(draw, program, scope.child(), depth - 1, True, 2)
    if draw(st.booleans()):
        _read_index(draw, program, scope, body, index)
    return Counted("cnt", body, index)


def _read_index(draw: Any, program: Program, scope: _Scope, body: list[Any], index: str) -> None:
    """``v = turn(v, index + k)`` somewhere in a device loop's body (it rebinds a name from outside)."""
    target = draw(st.sampled_from(scope.rebindable))
    program.reads([target])
    program.rebound.add(target)
    body.insert(draw(st.integers(0, len(body))), IndexCall(target, index, draw(st.sampled_from([0, 1, -2]))))


def _scan(draw: Any, program: Program, scope: _Scope) -> Scan:
    """``for t in range(T): v = k(..., xs[t], ...)``: one device loop over the rows of ``xs``."""
    target = draw(st.sampled_from(scope.rebindable))
    kernel = draw(st.sampled_from(_kernels(program)))
    args = [draw(st.sampled_from([*scope.readable, "xs[t]"])) for _ in range(kernel.planes)]
    args[draw(st.integers(0, kernel.planes - 1))] = "xs[t]"
    program.reads(args)
    program.rebound.add(target)
    param = draw(st.sampled_from(["scale", *CONSTANTS[:3]])) if kernel.param else None
    return Scan(draw(st.sampled_from(["0", "1", "2", "cnt", "cnt"])), Call(target, kernel, args, param))


def _capped(draw: Any, program: Program, scope: _Scope, depth: int) -> Capped:
    k = program.loops
    program.loops += 1
    flag = f"fl{k}"
    head = _block(draw, program, scope.child(), depth - 1, True, 2)
    guard = None
    if not program.smooth:  # a guard computed from the values is a step: no derivative across it
        lim = draw(st.sampled_from(["1.0", "50.0"]))
        guard = Guard("below", draw(st.sampled_from(scope.rebindable)), lim, flag)
    leave = None
    if not program.smooth and draw(st.booleans()):
        how = draw(st.sampled_from(["break", "continue"]))
        src, lim = draw(st.sampled_from(scope.rebindable)), draw(st.sampled_from(["0.0", "2.5"]))
        leave = (how, f"dn{k}", src, lim)
    tail = _block(draw, program, scope.child(), depth - 1, True, 2) if draw(st.booleans()) else []
    index = "_"
    if draw(st.booleans()):
        index = f"q{k}"
        _read_index(draw, program, scope, head, index)
    return Capped(draw(st.integers(0, 4)), flag, head, leave, tail, guard, index)


def _fork(draw: Any, program: Program, scope: _Scope, depth: int) -> Fork:
    # Branches make new names only (two branches rebinding one name would race); a branch reads what
    # came before the fork, its own names, and a name of an earlier branch once it waited for it.
    branches: list[list[Any]] = []
    waits: dict[int, str] = {}
    made: list[list[str]] = []
    for b in range(draw(st.integers(2, 3))):
        local = _Scope(list(scope.readable), [])
        if b and made[b - 1] and draw(st.booleans()):
            waits[b] = draw(st.sampled_from(made[b - 1]))
            local.readable.append(waits[b])
        body = [_assign(draw, program, local, new_only=True) for _ in range(draw(st.integers(1, 3)))]
        branches.append(body)
        made.append([s.target for s in body])
    for names in made:
        scope.readable += names
        scope.rebindable += names
    return Fork(branches, waits)


def _cell(value: int) -> np.ndarray:
    return np.array([value], np.uint32)


def starting_values(n: int, seed: int, cells: dict[str, int]) -> dict[str, Any]:
    """The builder arguments a program starts from: planes from ``seed``, then the cells."""
    rng = np.random.default_rng(seed)
    values: dict[str, Any] = {
        "x0": rng.uniform(-2, 2, n), "x1": rng.uniform(-2, 2, n), "xs": rng.uniform(-2, 2, (2, n)),
        "y": rng.uniform(-1, 1, n),
    }
    return values | {name: _cell(v) for name, v in cells.items()}


@st.composite
def programs(draw: Any, pools: int = 2, smooth: bool = False, rows: bool = True,
             stepping: bool = False) -> Program:
    """A random program over one of the first ``pools`` kernel pools; ``smooth``: one whose result is
    differentiable in x0 and x1 (for the gradient check); ``rows``: kernels may read rows of ``xs``;
    ``stepping``: one with a stepping loop (an ``eagle.until_done``) at least."""
    pool = make_pool(draw(st.integers(0, pools - 1)))
    # one block, a block and more, and past branch_tasks' limit (forks run work_share there)
    n = draw(st.sampled_from([1, 3, 17, 1024, 1029, 4100] if not smooth else [1, 4, 9]))
    cells = {"c0": draw(st.integers(0, 1)), "c1": draw(st.integers(0, 1)), "sel": draw(st.integers(0, 4)),
             "cnt": draw(st.integers(0, 3))}
    for k in range(LOOP_CELLS):
        cells[f"fl{k}"], cells[f"dn{k}"] = 1, 0
    seed = draw(st.integers(0, 2**32 - 1))
    values = starting_values(n, seed, cells)
    program = Program(pool, n, [], None, draw(st.sampled_from([0.5, -1.25, 2.0])), values, seed, cells,
                      smooth=smooth, rows=rows and not smooth)
    scope = _Scope([*ARGS, *ITEMS], [*ARGS, *ITEMS])
    program.body = _block(draw, program, scope, 2, False, 6)
    loops = [s for s in program.body if isinstance(s, Until)]
    if stepping and not loops:
        loops.append(_until(draw, program, scope))
        program.body.append(loops[-1])
    if not smooth and draw(st.booleans()):  # a list built by appends, read back into the result
        first = draw(st.sampled_from(scope.readable))
        ones = [k for k in _kernels(program) if k.planes == 1]
        if ones:
            program.body.append(("list", first, [Append("acc", draw(st.sampled_from(ones)), "acc[-1]")
                                                 for _ in range(draw(st.integers(1, 2)))]))
            scope.readable.append("acc[-1]")
    picks = draw(st.lists(st.sampled_from(scope.readable), min_size=1, max_size=3))
    if stepping and loops[-1].start.target not in picks:  # the result holds a loop's state
        picks = [*picks[:2], loops[-1].start.target]
    if smooth:
        program.result = picks[-1] if picks[-1] not in (*ARGS, *ITEMS) else None
        if program.result is None:  # a result that is an argument itself is no kernel's output
            call = _call(draw, program, scope, _new_name(program))
            program.body.append(call)
            program.result = call.target
    elif len(picks) == 1:
        program.result = picks[0]
    else:
        program.result = {"r0": picks[0], "rest": (picks[1], [picks[2:]][0])}
    return program


# --------------------------------------------------------------- rendering

def render(program: Program, face: str) -> str:
    out = [f"from fuzz_pool_{program.pool.number} import *",
           "import numpy as np", "import eagle", ""]
    params = ", ".join(program.values)
    if face == "builder":
        out += ["def make(scale):", "    @eagle.Graph.builder", f"    def prog({params}, record=False):",
                "        g = eagle.Graph(record=record)", "        st = {'a': x0, 'b': x1}"]
        _lines(program.body, face, 2, out)
        out += [f"        g.result = {_tree(program.result)}", "        return g", "    return prog"]
    else:  # SIMULATE: None runs the stepping loops in Python, True or False by eagle.simulate(compact=)
        out += ["SIMULATE = None", "", "def make(scale):", f"    def prog({params}):",
                "        st = {'a': x0, 'b': x1}"]
        _lines(program.body, face, 2, out)
        out += [f"        return {_tree(program.result)}", "    return prog"]
    return "\n".join(out) + "\n"


def _tree(result: Any) -> str:
    if isinstance(result, dict):
        return "{" + ", ".join(f"{k!r}: {_tree(v)}" for k, v in result.items()) + "}"
    if isinstance(result, tuple):
        return "(" + ", ".join(_tree(v) for v in result) + ",)"
    if isinstance(result, list):
        return "[" + ", ".join(_tree(v) for v in result) + "]"
    return result


def _call_text(call: Call, face: str) -> str:
    args = [*call.args, *([_param_text(call.kernel, call.param)] if call.param else [])]
    if face == "eager":
        return f"{call.kernel.name}.reference({', '.join(args)})"
    buffer = ", buffer=True" if call.buffer else ""
    return f"{call.kernel.name}({', '.join(args)}{buffer})"


def _kernel_call(kernel: str, args: list[str], face: str) -> str:
    return f"{kernel}.reference({', '.join(args)})" if face == "eager" else f"{kernel}({', '.join(args)})"


def _cond(cell: str, face: str, negate: bool = False) -> str:
    text = cell if face == "builder" else f"{cell}[0]"
    return f"not {text}" if negate else text


def _lines(body: list[Any], face: str, level: int, out: list[str]) -> None:
    pad = "    " * level
    for s in body:
        if isinstance(s, Call):
            out.append(f"{pad}{s.target} = {_call_text(s, face)}")
        elif isinstance(s, Total):
            out.append(f"{pad}{s.target} = {_kernel_call('total', [s.src], face)}")
        elif isinstance(s, Accumulate):
            out.append(f"{pad}{_kernel_call('accumulate', [s.src, 'y'], face)}")
        elif isinstance(s, Halves):
            out.append(f"{pad}{_kernel_call('halves', [s.src, 'y'], face)}")
        elif isinstance(s, Placed):
            out.append(f"{pad}{_kernel_call('placed', [s.src, 'y'], face)}")
        elif isinstance(s, Guard):
            out.append(f"{pad}{_kernel_call(s.kernel, [s.src, s.lim, s.cell], face)}")
        elif isinstance(s, PyFor):
            kernels = ", ".join(k.name for k in s.kernels)
            call = f"kern.reference({s.target})" if face == "eager" else f"kern({s.target})"
            out += [f"{pad}for kern in ({kernels},):", f"{pad}    {s.target} = {call}"]
        elif isinstance(s, If):
            for j, (cell, arm) in enumerate(s.arms):
                out.append(f"{pad}{'if' if j == 0 else 'elif'} {_cond(cell, face)}:")
                _lines(arm, face, level + 1, out)
            if s.orelse is not None:
                out.append(f"{pad}else:")
                _lines(s.orelse, face, level + 1, out)
        elif isinstance(s, Match):
            out.append(f"{pad}match {s.cell if face == 'builder' else f'int({s.cell}[0])'}:")
            for key, arm in s.arms.items():
                out.append(f"{pad}    case {key}:")
                _lines(arm, face, level + 2, out)
            out.append(f"{pad}    case _:")
            _lines(s.default, face, level + 2, out)
        elif isinstance(s, Counted):
            count = s.cell if face == "builder" else f"int({s.cell}[0])"
            out.append(f"{pad}for {s.index} in range({count}):")
            _lines(s.body, face, level + 1, out)
        elif isinstance(s, IndexCall):
            at = f"{s.index} + {s.offset}" if s.offset else s.index
            index = at if face == "builder" else f"np.array([{at}], np.int32)"
            out.append(f"{pad}{s.target} = {_kernel_call('turn', [s.target, index], face)}")
        elif isinstance(s, Scan):
            turns = s.turns if face == "builder" or s.turns != "cnt" else "int(cnt[0])"
            out.append(f"{pad}for t in range({turns}):")
            _lines([s.call], face, level + 1, out)
        elif isinstance(s, Capped):
            out.append(f"{pad}for {s.index} in range({s.turns}):")
            out.append(f"{pad}    if {_cond(s.flag, face, negate=True)}: break")
            _lines(s.head, face, level + 1, out)
            if s.guard is not None:
                _lines([s.guard], face, level + 1, out)
            if s.exit is not None:
                how, done, src, lim = s.exit
                _lines([Guard("over", src, lim, done)], face, level + 1, out)
                out.append(f"{pad}    if {_cond(done, face)}: {how}")
            _lines(s.tail, face, level + 1, out)
        elif isinstance(s, Fork):
            if face == "builder":
                out.append(f"{pad}with g.parallel() as p:")
                for b, branch in enumerate(s.branches):
                    out.append(f"{pad}    with p.branch() as b{b}:")
                    if b in s.waits:
                        out.append(f"{pad}        b{b}.wait({s.waits[b]})")
                    _lines(branch, face, level + 2, out)
            else:
                for branch in s.branches:
                    _lines(branch, face, level, out)
        elif isinstance(s, Until):
            _until_lines(s, face, pad, out)
        elif isinstance(s, tuple) and s[0] == "list":
            _, first, appends = s
            out.append(f"{pad}acc = [{first}]")
            for a in appends:
                args = [a.src, *([_param_text(a.kernel, "0.5")] if a.kernel.param else [])]
                out.append(f"{pad}acc.append({_kernel_call(a.kernel.name, args, face)})")
        else:
            raise TypeError(f"unknown statement {s!r}")


def _until_lines(s: Until, face: str, pad: str, out: list[str]) -> None:
    """The loop (without a one-plane pool kernel, the step is the blend of the state with itself)."""
    v, done = s.start.target, f"d{s.start.target}"
    p = v if s.step is None else s.step.target
    out += [f"{pad}{v} = {_call_text(s.start, face)}", f"{pad}{done} = {_kernel_call('undone', [v], face)}"]
    args = "" if s.step is None else ", ".join([*s.step.args, *([s.step.param] if s.step.param else [])])
    first = "" if s.step is None else f"{p}, "
    value = v if s.step is None else f"{p}.outputs[0]"
    items = f"[{first}blend.plan({value}, {v}), ripen.plan({v}, {s.lim}, {done})]"
    if face == "builder":
        if s.step is not None:
            out.append(f"{pad}{p} = {s.step.kernel.name}.plan({args})")
        out.append(f"{pad}eagle.until_done({items}, terminated={done}, max_steps={s.cap})")
        return
    # the plain face's loop, or (SIMULATE set: True compacts) eagle.simulate over the compiled plans
    out.append(f"{pad}if SIMULATE is not None:")
    if s.step is not None:
        out.append(f"{pad}    {p} = {s.step.kernel.name}.plan({args})")
    out += [f"{pad}    eagle.simulate({items}, terminated={done}, max_steps={s.cap}, compact=SIMULATE)",
            f"{pad}else:"]
    out += [f"{pad}    for _ in range({s.cap}):", f"{pad}        if not ({done} == 0).any(): break",
            f"{pad}        was = {done} != 0", f"{pad}        kept = [{v}[was].copy(), {done}[was].copy()]"]
    if s.step is not None:
        out.append(f"{pad}        {p} = {s.step.kernel.name}.reference({args})")
    out += [f"{pad}        blend.reference({p}, {v})", f"{pad}        ripen.reference({v}, {s.lim}, {done})",
            f"{pad}        {v}[was], {done}[was] = kept"]
