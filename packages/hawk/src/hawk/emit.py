"""C and CUDA C from the IR: one function per phase, one prelude of helpers.

The C functions follow libeagle's kernel type (``eagle.h``): they process
samples ``[begin, end)`` of one block, reading their arguments from an
``eagle_arg`` block whose last slot is ``n``, the plane length (a plane of
k components has shape ``(k, n)``).  The CUDA functions take typed
parameters (planes, values, ``n``, then the logical end) and walk the
samples with a grid-stride loop.

Both dialects print the same statements: values the same for every sample
are computed once before the sample loop, one-cell results are stored
after it, and the sample loop carries ``ivdep`` (samples never depend on
one another) so that the C compiler vectorises it without alias checks.  A
long C loop body is printed interleaved over independent streams of samples
(:meth:`Emitter.interleaved`), so that a chain of dependent operations runs
at the vector units' throughput.
"""

from __future__ import annotations

import math
from collections.abc import Collection

from eagle.extend import EagleAssertionError
from hawk import lanes, libm, philox, records, tables
from hawk.ir import (
    Const,
    Gather,
    If,
    KernelIR,
    Load,
    Loop,
    Op,
    Operand,
    ScatterAdd,
    Slot,
    Stmt,
    Store,
    Var,
    defined,
    reads,
    walk,
)
from hawk.phases import Phased
from hawk.types import is_float, strong

CTYPES = {"f64": "double", "f32": "float", "i64": "int64_t", "i32": "int32_t", "u64": "uint64_t",
          "u32": "uint32_t", "bool": "uint8_t"}
#: the eagle_arg member a by-value slot is read from
MEMBERS = {"f64": "f64", "f32": "f32", "i64": "i64", "i32": "i32", "u64": "u64", "u32": "u32", "bool": "i64"}
_UNSIGNED = {"i32": "uint32_t", "i64": "uint64_t", "u32": "uint32_t", "u64": "uint64_t"}
_INT_LIMITS = {"i32": ("INT32_MIN", "INT32_MAX", "-2147483648.0", "2147483647.0"),
               "i64": ("INT64_MIN", "INT64_MAX", "-9223372036854775808.0", "9223372036854775807.0"),
               "u32": ("0u", "UINT32_MAX", "0.0", "4294967295.0"),
               "u64": ("0ull", "UINT64_MAX", "0.0", "18446744073709551615.0")}
_EAGLE_TYPE = {"f64": "F64", "f32": "F32", "i64": "I64", "i32": "I32", "u32": "U32", "u64": "U64",
               "bool": "U8"}


def _identity(op: str, dtype: str) -> str:
    """The value an integer reduction starts a block from."""
    if op in ("sum", "any") or (op == "max" and dtype not in ("i32", "i64")):
        return "0"
    if op == "all":
        return "1"
    return {"max": "INT{w}_MIN", "min": "INT{w}_MAX" if dtype[0] == "i" else "UINT{w}_MAX"}[op].format(
        w=dtype[1:])

#: Independent streams of samples a C sample loop interleaves (Emitter.interleaved): a vector op's
#: latency (4 cycles) times the FP ports (2) on current x86 cores, AVX2 and AVX-512 alike.
STREAMS = 8
#: The samples of a stream come in multiples of this: the doubles of an AVX-512 vector, two of AVX2.
LANES = 8
#: The statements from which a sample loop is interleaved: a shorter body's iterations already
#: overlap in the core's reorder window, and interleaving multiplies the code gcc compiles.
INTERLEAVED_FROM = 32
#: ... and up to which: a longer body (a 4×4 inverse and its derivatives) has independent work enough
#: within one sample, and gcc -O3 takes a minute over eight copies of it (one second over one).
INTERLEAVED_BELOW = 200
#: The samples of a block of the plain loop that skips what a guard's arm does where no sample of
#: the block takes it (Emitter.guarded): four AVX-512 vectors of doubles, two of uint32.
GUARD_BLOCK = 32

_INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
          "eq": "==", "ne": "!="}
#: libm's, correctly rounded or exact (sin, cos, ... are eagle's own: hawk.libm)
_MATH = ("sqrt", "floor", "ceil", "fmod")


def _int_helpers(t: str) -> str:
    c, u = CTYPES[t], _UNSIGNED[t]
    signed = t.startswith("i")
    lo, hi, flo, fhi = _INT_LIMITS[t]
    if signed:
        div = (f"if (b == 0) return 0; if (b == -1) return ({c})(({u})0 - ({u})a);\n"
               f"    {c} q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;")
        mod = (f"if (b == 0 || b == -1) return 0;\n"
               f"    {c} r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;")
        abs_ = f"return a < 0 ? ({c})(({u})0 - ({u})a) : a;"
    else:
        div, mod, abs_ = "return b == 0 ? 0 : a / b;", "return b == 0 ? 0 : a % b;", "return a;"
    return f"""
HK_FN {c} hk_floordiv_{t}({c} a, {c} b) {{ {div} }}
HK_FN {c} hk_mod_{t}({c} a, {c} b) {{ {mod} }}
HK_FN {c} hk_abs_{t}({c} a) {{ {abs_} }}
HK_FN {c} hk_pow_{t}({c} a, {c} b)
{{
    if (b < 0) return 0;
    {u} r = 1, x = ({u})a, e = ({u})b;
    while (e) {{ if (e & 1) r *= x; x *= x; e >>= 1; }}
    return ({c})r;
}}
HK_FN {c} hk_to_{t}(double v)
{{ return v != v ? 0 : v <= {flo} ? {lo} : v >= {fhi} ? {hi} : ({c})v; }}
"""


def _float_helpers(t: str) -> str:
    c, suffix = CTYPES[t], "f" if t == "f32" else ""
    return f"""
HK_FN {c} hk_mod_{t}({c} a, {c} b)
{{ {c} m = fmod{suffix}(a, b); return (m != 0 && ((b < 0) != (m < 0))) ? m + b : m; }}
"""


def prelude(dialect: str, ops: Collection[str] | None = None) -> str:
    """Headers, types, the helpers that pin down hawk's integer and cast semantics, and eagle's
    own transcendental functions (:mod:`hawk.libm`) and random draws (:mod:`hawk.philox`); CUDA C
    holds those of ``ops`` only (all when None)."""
    if dialect == "c":
        head = ("#include <math.h>\n#include <stdint.h>\n#include \"eagle/eagle.h\"\n"
                "#define HK_FN static inline\n"
                "#if defined(__clang__)\n"
                "#define HK_SAMPLES _Pragma(\"clang loop vectorize(assume_safety)\")\n"
                "#define HK_LANES HK_SAMPLES\n"
                "#else\n#define HK_SAMPLES _Pragma(\"GCC ivdep\")\n"
                # a loop over a block's lanes (hawk.lanes), kept whole for the vectoriser: gcc
                # unrolls a short loop completely before it vectorises, and the masked statements
                # of the unrolled loop stay scalar
                "#define HK_LANES _Pragma(\"GCC ivdep\") _Pragma(\"GCC unroll 1\")\n"
                # gcc's expansion (TER) moves a single-use value next to its use, which undoes
                # an interleaved loop's order (Emitter.interleaved) and leaves one chain at a
                # time; the FP rules are restated, as an optimize pragma may reset them
                "#pragma GCC optimize(\"no-tree-ter\", \"fp-contract=off\", \"no-math-errno\")\n"
                "#endif\n")
    else:
        # NVRTC has no C library headers: the fixed-width types by hand; any other compiler of
        # this CUDA C (nvcc, a host build for tests) has <stdint.h>.
        head = ("#ifdef __CUDACC_RTC__\n"
                "typedef long long int64_t; typedef unsigned long long uint64_t;\n"
                "typedef int int32_t; typedef unsigned int uint32_t; typedef unsigned char uint8_t;\n"
                "#define INT32_MIN (-2147483647 - 1)\n#define INT32_MAX 2147483647\n"
                "#define INT64_MIN (-9223372036854775807LL - 1)\n#define INT64_MAX 9223372036854775807LL\n"
                "#define UINT32_MAX 4294967295u\n#define UINT64_MAX 18446744073709551615ull\n"
                "#else\n#include <stdint.h>\n#endif\n"
                "#define HK_FN static __device__ __forceinline__\n#define HK_MATH HK_FN\n"
                "#define HK_TABLE static __device__ const\n")
    # C calls the math functions compiled once into hawk's math library (libm.load), but holds the
    # integer draws, all of them: every C prelude is the same, so fused runs share one (runs.py);
    # NVRTC links nothing, so CUDA C holds what it calls
    math = (libm.c_declarations() + philox.c_declarations() + "#define HK_MATH HK_FN\n" + libm.C_BITS
            + philox.c_functions(philox.INLINE) if dialect == "c"
            else libm.c_functions(ops) + philox.c_functions(ops))
    return head + "".join(_int_helpers(t) for t in ("i32", "i64", "u32", "u64")) + \
        "".join(_float_helpers(t) for t in ("f32", "f64")) + tables.c_helpers() + \
        tables.c_scatter_helpers() + math


def literal(c: Const) -> str:
    t, v = strong(c.dtype), c.value
    if is_float(t):
        suffix = "f" if t == "f32" else ""
        if math.isnan(v):
            return f"(0.0{suffix} / 0.0{suffix})"
        if math.isinf(v):
            return f"({'-' if v < 0 else ''}1.0{suffix} / 0.0{suffix})"
        return f"{float(v).hex()}{suffix}"
    if t == "bool":
        return "1" if v else "0"
    if t == "i64" and v == -(2 ** 63):
        return "INT64_MIN"
    return f"(({CTYPES[t]}){int(v)}{ {'i64': 'LL', 'u64': 'ULL', 'u32': 'U'}.get(t, '')})"


class Emitter:
    """Prints one phase body as a C function (CudaEmitter: as a CUDA kernel)."""

    dialect = "c"
    #: a sample loop holding a loop runs in blocks of lanes (:mod:`hawk.lanes`)
    lane_blocks = True
    #: the plain sample loop, over [rest, end) and sample i, skips blocks of samples where no
    #: sample takes a guard's arm (guarded); an emitter whose loop opens otherwise keeps it plain
    skips_blocks = True

    def __init__(self, slots: list[Slot]) -> None:
        self.slots = slots
        self.names: dict[int, str] = {}
        self.sample = "i"  # the sample the statements being printed work on
        self.stream = ""  # the suffix of their per-sample vars (one stream of an interleaved loop)
        self.bound_sites = 1  # the checked Table reads and Scatter writes of the kernel (their keys)
        #: id(ScatterAdd) -> its scratch and the row it records into
        self.scatter_sites: dict[int, tuple[tables.Scatter, records.Row]] = {}
        self.per_sample: set[int] = set()  # uniform vars the sample loop assigns: one per sample

    # ----------------------------------------------------------- operands
    def var(self, v: Var) -> str:
        suffix = f"_{v.name}" if v.name else ""
        name = self.names.setdefault(id(v), f"v{len(self.names)}{suffix}")
        return name if v.uniform and id(v) not in self.per_sample else name + self.stream

    def operand(self, o: Operand) -> str:
        return literal(o) if isinstance(o, Const) else self.var(o)

    def at(self, slot: int, comp: int) -> str:
        s = self.slots[slot]
        if s.role == "value":
            return f"p{slot}"
        if s.cell:
            return f"s{slot}[0]"
        return f"s{slot}[{comp} * n + {self.sample}]" if s.components > 1 else f"s{slot}[{self.sample}]"

    # --------------------------------------------------------- statements
    def expr(self, s: Op) -> str:
        a = [self.operand(x) for x in s.args]
        t = strong(s.args[0].dtype) if s.args else strong(s.dst.dtype)
        out = strong(s.dst.dtype)
        op = s.op
        if op == "copy":
            return a[0]
        if op == "sample":
            return f"(int64_t)({self.sample})"
        if op in philox.DRAWS:
            return philox.call(op, a)
        if op == "cast":
            return self.cast(a[0], t, out)
        if op == "select":
            return f"({a[0]} ? {a[1]} : {a[2]})"
        if op == "index_quotient":  # in range by hawk.grid_index's bound: no hk_to_i64 clamp
            return f"(int64_t)({a[0]} / {a[1]})"
        if op in ("lt", "le", "gt", "ge", "eq", "ne"):
            return f"(uint8_t)({a[0]} {_INFIX[op]} {a[1]})"
        if op in ("and", "or"):
            return f"(uint8_t)({a[0]} {'&&' if op == 'and' else '||'} {a[1]})"
        if op == "not":
            return f"(uint8_t)!{a[0]}"
        if op in ("minimum", "maximum"):
            cmp = "<" if op == "minimum" else ">"
            return f"(({a[0]} {cmp} {a[1]} || {a[0]} != {a[0]}) ? {a[0]} : {a[1]})"
        if is_float(out) and t == out:
            return self.float_op(op, a, out)
        return self.int_op(op, a, out)

    def float_op(self, op: str, a: list[str], t: str) -> str:
        f = "f" if t == "f32" else ""
        if op in ("add", "sub", "mul", "div"):
            return f"({a[0]} {_INFIX[op]} {a[1]})"
        if op == "neg":
            return f"(-{a[0]})"
        if op == "floordiv":
            return f"floor{f}({a[0]} / {a[1]})"
        if op == "mod":
            return f"hk_mod_{t}({a[0]}, {a[1]})"
        if op == "abs":
            return f"fabs{f}({a[0]})"
        if op in libm.FUNCTIONS:
            return f"hk_{op}_{t}({', '.join(a)})"
        if op in _MATH:
            return f"{op}{f}({', '.join(a)})"
        raise EagleAssertionError(f"no float form of {op}")

    def int_op(self, op: str, a: list[str], t: str) -> str:
        c = CTYPES[t]
        if t == "bool":  # NumPy: + is or, * is and
            return f"(uint8_t)({a[0]} {'|' if op == 'add' else '&'} {a[1]})"
        if op in ("add", "sub", "mul"):
            u = _UNSIGNED[t]
            return f"({c})(({u}){a[0]} {_INFIX[op]} ({u}){a[1]})"
        if op == "neg":
            return f"({c})(({_UNSIGNED[t]})0 - ({_UNSIGNED[t]}){a[0]})"
        if op in ("floordiv", "mod", "abs", "pow"):
            return f"hk_{op}_{t}({', '.join(a)})"
        if op in ("floor", "ceil"):
            return a[0]
        raise EagleAssertionError(f"no integer form of {op}")

    def cast(self, a: str, source: str, target: str) -> str:
        if target == "bool":
            return f"(uint8_t)({a} != 0)"
        if is_float(source) and not is_float(target):
            return f"hk_to_{target}((double){a})"
        return f"({CTYPES[target]}){a}"

    def statement(self, s: Stmt, out: list[str], pad: str) -> None:
        if isinstance(s, Store) and self.slots[s.slot].reduction:
            out.append(f"{pad}{self.partial_value(s.slot, self.operand(s.value))}")
        elif isinstance(s, Load):
            out.append(f"{pad}{self.var(s.dst)} = {self.at(s.slot, s.comp)};")
        elif isinstance(s, Op):
            out.append(f"{pad}{self.var(s.dst)} = {self.expr(s)};")
        elif isinstance(s, Store):
            out.append(f"{pad}{self.at(s.slot, s.comp)} = {self.operand(s.value)};")
        elif isinstance(s, Gather):
            out.append(pad + tables.c_gather(self, s))
        elif isinstance(s, Loop):
            self.loop(s, out, pad)
        elif isinstance(s, ScatterAdd):
            out.append(pad + tables.c_scatter(self, s))
        else:
            out.append(f"{pad}if ({self.var(s.cond)}) {{")
            for inner in s.then:
                self.statement(inner, out, pad + "    ")
            out.append(f"{pad}}} else {{")
            for inner in s.orelse:
                self.statement(inner, out, pad + "    ")
            out.append(f"{pad}}}")

    def loop(self, s: Loop, out: list[str], pad: str) -> None:
        """A counted C loop; its index is a local of the loop (each stream of an interleaved
        sample loop runs its own), the carried vars take their updates at the end of a turn."""
        index = self.var(s.index)
        count = self.operand(s.count)
        out.append(f"{pad}for (int64_t {index} = 0; {index} < (int64_t){count}; ++{index}) {{")
        for inner in s.body:
            self.statement(inner, out, pad + "    ")
        pairs = zip(s.carried, s.update, strict=True)
        out.extend(f"{pad}    {self.var(c)} = {self.var(u)};" for c, u in pairs)
        out.append(f"{pad}}}")

    # ----------------------------------------------------------- function
    def partial_value(self, slot: int, value: str) -> str:
        """A sample's reduction operand, taken into its block's partial.  Integer reductions are
        associative, so they accumulate in the loop; a float one keeps the block's values for
        libeagle's fixed tree, run after the loop."""
        s = self.slots[slot]
        if is_float(s.dtype):
            return f"t{slot}[{self.sample} - begin] = {value};"
        acc, u = f"r{slot}", _UNSIGNED.get(s.dtype, "uint8_t")
        return {"sum": f"{acc} = ({CTYPES[s.dtype]})(({u}){acc} + ({u}){value});",
                "max": f"{acc} = {value} > {acc} ? {value} : {acc};",
                "min": f"{acc} = {value} < {acc} ? {value} : {acc};",
                "all": f"{acc} = (uint8_t)({acc} && {value} != 0);",
                "any": f"{acc} = (uint8_t)({acc} || {value} != 0);"}[s.reduction]

    def reduce_partials(self, body: list[Stmt]) -> tuple[list[str], list[str]]:
        """The block's accumulators or buffers, and what stores the block's partial after the loop."""
        head, tail = [], []
        for k in sorted({s.slot for s in body if isinstance(s, Store) and self.slots[s.slot].reduction}):
            slot, t = self.slots[k], CTYPES[self.slots[k].dtype]
            if is_float(slot.dtype):
                head.append(f"    {t} t{k}[EAGLE_BLOCK];")
                tail.append(f"    if (end > begin) eagle_reduce_block(t{k}, end - begin, "
                            f"EAGLE_{_EAGLE_TYPE[slot.dtype]}, EAGLE_{slot.reduction.upper()}, "
                            f"&s{k}[begin / EAGLE_BLOCK]);")
            else:
                head.append(f"    {t} r{k} = {_identity(slot.reduction, slot.dtype)};")
                tail.append(f"    if (end > begin) s{k}[begin / EAGLE_BLOCK] = r{k};")
        return head, tail

    def function(self, name: str, body: list[Stmt]) -> str:
        after = [s for s in body if isinstance(s, Store) and self.slots[s.slot].cell]
        hoisted, loop = _hoisted(body, after)
        self.per_sample = {id(v) for v in _assigned(loop) if v.uniform}
        variables = {id(s.dst): s.dst for s in walk(body) if isinstance(s, (Op, Load, Gather))}
        buffers, reductions = self.reduce_partials(body)
        bad, report = tables.c_bounds(self, body)
        buffers, reductions = buffers + bad + tables.c_record_inits(self, body), report + reductions
        lines = [self.header(name)]
        lines += self.arguments()
        lines += buffers
        lines += [f"    {CTYPES[strong(v.dtype)]} {self.var(v)} = 0;"
                  for v in variables.values() if v.uniform and id(v) not in self.per_sample]
        for s in hoisted:
            self.statement(s, lines, "    ")
        varying = [v for v in variables.values() if not v.uniform or id(v) in self.per_sample]
        lines += self.positions()
        blocked = self.lane_blocks and lanes.has_loop(loop)
        if blocked:  # blocks of lanes: the loops vectorise
            lines += lanes.blocks(self, loop, varying, CTYPES)
        else:
            lines += self.interleaved(loop, varying)
        # guarded where the plain loop runs a short body over every sample (not the few samples a
        # block or a stream leaves, nor a long body, whose compile time the second copy would double)
        short = not blocked and _size(loop) < INTERLEAVED_FROM
        guard = _guard(loop) if self.skips_blocks and short else None
        lines += self.plain_loop(loop, varying) if guard is None else self.guarded(loop, varying, *guard)
        lines += reductions
        if after:
            lines.append(f"    if ({self.first_sample()}) {{")
            for s in after:
                self.statement(s, lines, "        ")
            lines.append("    }")
        lines.append("}")
        return "\n".join(lines)

    def plain_loop(self, loop: list[Stmt], varying: list[Var]) -> list[str]:
        lines = self.loop_open() + self.declarations(loop, varying, "        ")
        for s in loop:
            self.statement(s, lines, "        ")
        return [*lines, "    }"]

    def declarations(self, stmts: list[Stmt], varying: list[Var], pad: str) -> list[str]:
        """The per-sample vars that ``stmts`` assign or read, declared."""
        named = {id(v) for v in (*defined(stmts), *reads(stmts))}
        return [f"{pad}{CTYPES[strong(v.dtype)]} {self.var(v)};" for v in varying if id(v) in named]

    def guarded(self, loop: list[Stmt], varying: list[Var], at: int, guard: If) -> list[str]:
        """The plain loop in blocks of GUARD_BLOCK samples, for a body whose top level holds an
        ``if`` (a finished sample's mask, most often) after statements that only compute: each
        block first computes what the condition needs and tests it, then runs the body where some
        sample takes the ``then`` arm, and the body with the ``else`` arm in the ``if``'s place
        where none does, which is what the body does there.  A vectorised body computes its arms
        for every lane; the test lets a block of finished samples skip that work."""
        prefix, otherwise = loop[:at], [*guard.orelse, *loop[at + 1:]]
        test = _needed(prefix, [guard.cond])
        skipped = [*_needed(prefix, list(reads(otherwise))), *otherwise]
        lines = [f"    for (int64_t b = rest; b < end; b += {GUARD_BLOCK}) {{",
                 f"        const int64_t e = end - b < {GUARD_BLOCK} ? end : b + {GUARD_BLOCK};",
                 "        int32_t any = 0;",
                 "        HK_SAMPLES", "        for (int64_t i = b; i < e; ++i) {"]
        lines += self.declarations(test, varying, "            ")
        for s in test:
            self.statement(s, lines, "            ")
        lines += [f"            any |= {self.var(guard.cond)};", "        }"]
        for opening, body in (("if (any) {", loop), ("} else {", skipped)):
            lines += [f"        {opening}",
                      "            HK_SAMPLES", "            for (int64_t i = b; i < e; ++i) {"]
            lines += self.declarations(body, varying, "                ")
            for s in body:
                self.statement(s, lines, "                ")
            lines.append("            }")
        return [*lines, "        }", "    }"]

    def interleaved(self, loop: list[Stmt], varying: list[Var]) -> list[str]:
        """The loop over most of the samples as STREAMS interleaved streams: the range cut in
        STREAMS equal parts, each statement printed once per part.  A vector op then has STREAMS
        independent neighbours, so a long dependent chain (a fused run) issues at the FP units'
        throughput, not at their latency.  Samples never depend on one another, so the order
        across streams changes no bit; the rest of the range (fewer than STREAMS * LANES samples)
        is the plain loop after it."""
        if not INTERLEAVED_FROM <= _size(loop) < INTERLEAVED_BELOW:
            return ["    const int64_t rest = begin;"]
        # a stream of whole vectors ends in no scalar epilogue: what is left runs once, vectorised,
        # in the plain loop
        lines = [f"    const int64_t part = (end - begin) / {STREAMS * LANES} * {LANES};",
                 "    HK_SAMPLES", "    for (int64_t i = begin; i < begin + part; ++i) {"]
        for u in range(STREAMS):
            self.stream = f"_{u}"
            lines += [f"        {CTYPES[strong(v.dtype)]} {self.var(v)};" for v in varying]
        for s in loop:
            for u in range(STREAMS):
                self.stream, self.sample = f"_{u}", f"i + {u} * part" if u else "i"
                self.statement(s, lines, "        ")
        self.stream, self.sample = "", "i"
        lines += ["    }", f"    const int64_t rest = begin + {STREAMS} * part;"]
        return lines

    def header(self, name: str) -> str:
        return f"EAGLE_API void {name}(int64_t begin, int64_t end, const eagle_arg *a)\n{{"

    def arguments(self) -> list[str]:
        lines = [f"    const int64_t n = a[{len(self.slots)}].i64;", "    (void)n;"]
        for k, s in enumerate(self.slots):
            t = CTYPES[strong(s.dtype)]
            if s.role == "value":
                lines.append(f"    const {t} p{k} = ({t})a[{k}].{MEMBERS[strong(s.dtype)]};")
            else:
                const = "const " if s.role == "read" else ""
                lines.append(f"    {const}{t} *s{k} = ({const}{t} *)a[{k}].ptr;")
        return lines

    #: the end of the sample loop's positions (:meth:`positions` may declare it)
    stop = "end"

    def positions(self) -> list[str]:
        """Lines that declare the bounds of the sample loop's positions: none, [begin, end)."""
        return []

    def sample_at(self, position: str) -> str:
        """The sample at a position of the sample loop: the position itself."""
        return position

    def loop_open(self) -> list[str]:
        return ["    HK_SAMPLES", "    for (int64_t i = rest; i < end; ++i) {"]

    def first_sample(self) -> str:
        # over no samples libeagle calls the kernel once with begin == end == 0 (EAGLE_EMPTY_CALL):
        # a cell is written then too, a reduction's identity through it
        return "begin == 0"


class CudaEmitter(Emitter):
    dialect = "cuda"
    lane_blocks = False
    skips_blocks = False  # a grid-stride loop (and a warp whose threads skip an arm branches past it)

    def interleaved(self, loop: list[Stmt], varying: list[Var]) -> list[str]:
        return []  # a GPU thread's latency is hidden by the other warps

    def header(self, name: str) -> str:
        params = []
        for k, s in enumerate(self.slots):
            t = CTYPES[strong(s.dtype)]
            if s.role == "value":
                params.append(f"const {t} p{k}")
            else:
                params.append(f"{'const ' if s.role == 'read' else ''}{t} *__restrict__ s{k}")
        params += ["const int64_t n", "const int64_t end"]
        return f'extern "C" __global__ void {name}({", ".join(params)})\n{{'

    def arguments(self) -> list[str]:
        return ["    (void)n;"]

    def loop_open(self) -> list[str]:
        return ["    const int64_t stride = (int64_t)blockDim.x * gridDim.x;",
                "    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < end;"
                " i += stride) {"]

    def first_sample(self) -> str:
        return "blockIdx.x == 0 && threadIdx.x == 0"  # the grid has a block even over no samples

    def partial_value(self, slot: int, value: str) -> str:
        # on the GPU a phase writes the operand per sample, and the graph reduces the plane
        return f"s{slot}[i] = {value};"

    def reduce_partials(self, body: list[Stmt]) -> tuple[list[str], list[str]]:
        return [], []


def _is_uniform(s: Stmt) -> bool:
    """Computed once per call, before the sample loop: a uniform value, or an
    if on a uniform condition holding nothing else."""
    if isinstance(s, (Op, Load)):
        return s.dst.uniform
    if isinstance(s, If):
        return s.cond.uniform and all(_is_uniform(x) for x in [*s.then, *s.orelse])
    if isinstance(s, Loop):
        return all(c.uniform for c in s.carried) and all(_is_uniform(x) for x in s.body)
    return False


def _size(body: list[Stmt]) -> int:
    """The statements of a body, nested ones included."""
    return sum(1 for _ in walk(body))


def _guard(loop: list[Stmt]) -> tuple[int, If] | None:
    """Where the top level of a sample loop's body holds its first ``if`` over a per-sample
    condition with a ``then`` arm, and that ``if``, when only statements that compute come before
    it (loads, ops, reads of a Table that clamp or wrap: none records an error), so running them
    again changes nothing."""
    for at, s in enumerate(loop):
        if isinstance(s, If):
            return (at, s) if s.then and not s.cond.uniform else None
        if not (isinstance(s, (Op, Load)) or (isinstance(s, Gather) and s.mode != "check")):
            return None
    return None


def _needed(stmts: list[Stmt], wanted: list[Var]) -> list[Stmt]:
    """The statements of a straight run that the values ``wanted`` depend on, in order."""
    need, kept = {id(v) for v in wanted}, []
    for s in reversed(stmts):
        if id(s.dst) in need:
            kept.append(s)
            need |= {id(v) for v in reads([s])}
    return kept[::-1]


def _assigned(body: list[Stmt]) -> list[Var]:
    """The vars the statements assign (a loop's carried vars and index too)."""
    out: list[Var] = []
    for s in walk(body):
        if isinstance(s, (Op, Load, Gather)):
            out.append(s.dst)
        elif isinstance(s, Loop):
            out += [s.index, *s.carried]
    return out


def _hoisted(body: list[Stmt], after: list[Stmt]) -> tuple[list[Stmt], list[Stmt]]:
    """The statements computed once before the sample loop, and the sample loop's.  A uniform
    value the sample loop assigns again (a loop's carried var, a var a derivative's loop
    recomputes) is assigned in the sample loop only, once per sample (:attr:`Emitter.per_sample`)."""
    hoisted = [s for s in body if _is_uniform(s)]
    while True:
        loop = [s for s in body if not any(s is h for h in hoisted) and s not in after]
        again = {id(v) for v in _assigned(loop)}
        kept = [s for s in hoisted if not {id(v) for v in _assigned([s])} & again]
        if len(kept) == len(hoisted):
            return hoisted, loop
        hoisted = kept


def call_signature(slots: list[Slot]) -> list[str]:
    """The C parameter types of ``{prefix}_call``: n, then a pointer or a value per slot."""
    return ["int64_t", *("void *" if s.role != "value" else CTYPES[strong(s.dtype)] for s in slots)]


def direct_entry(slots: list[Slot], prefix: str) -> str:
    """``{prefix}_call(n, slot, …)``: a one-phase kernel over samples [0, n) on the calling
    thread, with plain arguments (what an eager call on one block uses)."""
    params = ", ".join(f"{t} x{k}" if k else f"{t} n" for k, t in enumerate(call_signature(slots)))
    fill = "".join(f"    a[{k}].{'ptr' if s.role != 'value' else MEMBERS[strong(s.dtype)]} = x{k + 1};\n"
                   for k, s in enumerate(slots))
    return (f"EAGLE_API void {prefix}_call({params})\n{{\n    eagle_arg a[{len(slots) + 1}];\n{fill}"
            f"    a[{len(slots)}].i64 = n;\n    {prefix}_p0(0, n, a);\n}}")


def source(ir: KernelIR, phased: Phased, prefix: str, dialect: str) -> str:
    """The whole translation unit: the prelude, then phase functions ``{prefix}_p0`` …
    (and for C with one phase, the direct entry ``{prefix}_call``)."""
    emitter_type = Emitter if dialect == "c" else CudaEmitter
    functions = []
    for j, body in enumerate(phased.phases):
        emitter = emitter_type(phased.slots)
        emitter.bound_sites = max(tables.sites(ir), 1)
        emitter.scatter_sites = {site: (s, row) for s in phased.scatters
                                 for site, row in zip(s.sites, s.rows, strict=True)}
        functions.append(emitter.function(f"{prefix}_p{j}", body))
    if phased.scatters:  # the Table-shaped outputs, summed after the last phase on one thread
        functions.append(tables.c_finish(emitter_type(phased.slots), phased.scatters, f"{prefix}_s"))
    if dialect == "c" and len(phased.phases) == 1:
        functions.append(direct_entry(phased.slots, prefix))
    ops = {s.op for body in phased.phases for s in walk(body) if isinstance(s, Op)}
    return prelude(dialect, ops) + f"\n/* hawk kernel {ir.name} */\n" + "\n\n".join(functions) + "\n"

