"""The front end: a decorated Python function, checked and lowered to the IR.

``parse`` reads the function's source once.  ``lower`` turns it into a
:class:`~hawk.ir.KernelIR` for one signature (the dtypes and shapes of one
call); the decorator lowers once with a default signature, so anything the
language does not have is refused at decoration, with the file and line.

Semantics that differ from plain Python, on purpose:

- ``and``, ``or`` and ``not`` give a bool; ``and``/``or`` evaluate a later
  operand only where it decides the result (:mod:`hawk.flow`: loops, ``break``,
  ``continue`` and early ``return`` too);
- ``if`` on a per-sample value runs per sample; a name assigned in one arm
  only may not be read after the ``if``;
- a ``Mutable`` parameter is written once, at the end, with its last value;
- numbers from the enclosing module (or closure) are folded in, as they are
  when the kernel is decorated: every signature compiled later sees those
  values;
- the return annotation is a contract: the result is converted to it (within
  its kind) or the kernel is refused.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import inspect
import numbers
import textwrap
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from eagle.extend import EagleSyntaxError
from hawk import composites, dispatch_groups, draws, frontend_values, intrinsics, tables, unroll
from hawk.flow import Flow
from hawk.flow import Unbound as _Unbound
from hawk.helpers import Func, Inlining
from hawk.ir import REDUCTIONS, Const, If, KernelIR, Load, Op, Operand, ScatterAdd, Slot, Stmt, Store, Var
from hawk.semantics import OPS, convert
from hawk.types import NUMPY, WEAK, Kind, of_numpy, promote, result_dtype, strong
from hawk.values import StructValue, Value, ValueKind, describe, flatten, same_shape


class KernelSyntaxError(EagleSyntaxError):
    """A kernel uses something hawk does not have; the message says what to write instead.

    >>> from hawk import Scalar
    >>> try:
    ...     @hawk.kernel
    ...     def halve(x: Scalar) -> Scalar:
    ...         while x > 1.0:
    ...             x = x / 2.0
    ...         return x
    ... except hawk.KernelSyntaxError as err:
    ...     print(type(err).__name__)
    KernelSyntaxError
    """


#: No return annotation: the outputs take the returned values' own types.
NO_CONTRACT = object()


@dataclass(frozen=True)
class Source:
    """A kernel function as the front end reads it."""

    fn: Callable[..., Any]
    tree: ast.FunctionDef
    filename: str
    line_offset: int
    lines: list[str]
    params: tuple[tuple[str, Kind], ...]
    returns: object = NO_CONTRACT  # the return contract (see _contract)
    #: module, closure and builtin names as the first lowering (at decoration) found them
    names: dict[str, object] = dataclasses.field(default_factory=dict)
    api: str = "hawk.kernel"  # what refusals name: a kernel's decorator, or a helper's
    #: the struct parameters, spread into one parameter per field, and the Params of value types,
    #: one per component (hawk.structs.spread_params)
    structs: dict[str, Any] = dataclasses.field(default_factory=dict)

    def refuse(self, node: ast.AST | None, message: str) -> KernelSyntaxError:
        line = getattr(node, "lineno", 1) + self.line_offset
        text = self.lines[line - self.line_offset - 1] if node is not None else None
        return KernelSyntaxError(f"{self.api}: {self.fn.__name__}: {message}",
                                 (self.filename, line, getattr(node, "col_offset", 0) + 1, text))


#: One parameter of one call: dtype, components (0: not known yet, any index
#: goes), whether it is one cell, and a Table's shape (``()``: not known yet).
@dataclass(frozen=True)
class ArgSpec:
    dtype: str
    components: int = 1
    cell: bool = False
    table: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Each:
    """``tuple[K, ...]``, ``list[K]`` or ``dict[str, K]``: every item of that container is K."""

    container: type
    item: object


def parse(fn: Callable[..., Any], scope: Mapping[str, Any] | None = None, api: str = "hawk.kernel") -> Source:
    """Read ``fn``'s source and annotations; refuse what cannot be a kernel.

    ``scope``: the locals of the code that decorated ``fn``, where a string
    annotation (``from __future__ import annotations``) may name something
    imported inside a function."""
    name = getattr(fn, "__name__", repr(fn))
    try:
        text = textwrap.dedent(inspect.getsource(fn))
        filename = inspect.getsourcefile(fn) or "<unknown>"
    except (OSError, TypeError) as err:
        raise KernelSyntaxError(
            f"hawk.kernel: {name}: its source is not available ({err}); hawk compiles a kernel from "
            "its source, so define it in a file (not in exec() or an interactive prompt)") from None
    tree = ast.parse(text)
    func = tree.body[0]
    if not isinstance(func, ast.FunctionDef):
        raise KernelSyntaxError(f"hawk.kernel: {name}: decorate a plain `def` function")
    # the source starts at the first decorator, the line co_firstlineno names
    source = Source(fn, func, filename, fn.__code__.co_firstlineno - 1, text.splitlines(), (), api=api)
    args = func.args
    extra = args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults
    if extra:
        raise source.refuse(func, "parameters are plain positional names with a hawk annotation "
                                  "(no *args, **kwargs, keyword-only parameters or defaults)")
    hints = dict(getattr(fn, "__annotations__", {}))
    params = []
    for arg in args.args:
        kind = _annotation(source, hints.get(arg.arg), arg, f"of parameter {arg.arg!r}", scope)
        kind = getattr(kind, "__hawk_kind__", kind)  # a @hawk.struct class: its StructKind
        if not isinstance(kind, Kind):
            raise source.refuse(arg, f"parameter {arg.arg!r} needs a hawk annotation: Scalar, Float32, "
                                     "Float64, Int32, UInt32, Param, Mutable[...], Table or Scatter")
        params.append((arg.arg, kind))
    returns = NO_CONTRACT
    if "return" in hints:
        node = func.returns
        returns = _contract(source, _annotation(source, hints["return"], node, "of the return", scope), node)
    return Source(fn, func, filename, source.line_offset, source.lines, tuple(params), returns, api=api)


def _annotation(source: Source, value: object, node: ast.AST, what: str,
                scope: Mapping[str, Any] | None) -> object:
    """An annotation as an object: a string one (``from __future__ import annotations``) is
    evaluated where its names live: the closure, the decorating scope, the module, builtins."""
    if not isinstance(value, str):
        return value
    fn = source.fn
    names = {**vars(builtins), **fn.__globals__, **(scope or {}), **inspect.getclosurevars(fn).nonlocals}
    try:
        return eval(value, {}, names)
    except Exception as err:  # noqa: BLE001 - any failure of a user's annotation is reported as one
        raise source.refuse(node, f"the annotation {value!r} {what} cannot be read ({type(err).__name__}: "
                                  f"{err}); import what it names at module level (from hawk import "
                                  "Scalar, ...), where hawk looks it up") from None


def _contract(source: Source, value: object, node: ast.AST) -> object:
    """A return annotation as a contract: None, a Kind, a tuple of contracts, or Each."""
    if value is None or value is type(None):
        return None
    value = getattr(value, "__hawk_kind__", value)  # a @hawk.struct class: its StructKind
    if isinstance(value, Kind):
        if value.role in ("table", "scatter"):
            raise source.refuse(node, "a kernel returns per-sample values: annotate the return Scalar (a "
                                      "Table or Scatter is an array parameter the kernel reads or writes)")
        if value.role == "mutable":
            plain = Kind("in", value.dtype)
            raise source.refuse(node, f"a kernel returns new values: annotate the return {plain!r}, not "
                                      "Mutable (a Mutable is a parameter written in place)")
        return value
    origin, items = getattr(value, "__origin__", None), getattr(value, "__args__", ())
    if isinstance(value, types.GenericAlias) and origin is tuple:
        if len(items) == 2 and items[1] is Ellipsis:
            return Each(tuple, _contract(source, items[0], node))
        return tuple(_contract(source, item, node) for item in items)
    if isinstance(value, types.GenericAlias) and origin is list and len(items) == 1:
        return Each(list, _contract(source, items[0], node))
    if isinstance(value, types.GenericAlias) and origin is dict and len(items) == 2 and items[0] is str:
        return Each(dict, _contract(source, items[1], node))
    raise source.refuse(node, f"the return annotation {value!r} is not a hawk type: annotate Scalar, "
                              "Float64, Float32, Int32, UInt32 (one value per sample), Param or "
                              "Param[Int32]... (one value for all samples), None, or tuple[...], list[...], "
                              "dict[str, ...] of them; or leave it out")


def default_signature(params: tuple[tuple[str, Kind], ...]) -> tuple[ArgSpec, ...]:
    """The signature decoration checks with: float64 planes of any number of components,
    float Params."""
    return tuple(ArgSpec("wf" if k.dtype is None else k.dtype) if k.role == "param"
                 else ArgSpec(k.dtype or "f64", table=()) if k.role in ("table", "scatter")
                 else ArgSpec(k.dtype or "f64", components=0) for _, k in params)


def lower(source: Source, signature: tuple[ArgSpec, ...],
          chosen: dispatch_groups.Chosen = dispatch_groups.SWITCH) -> KernelIR:
    """The IR of ``source`` for one signature, its dispatch groups run as ``chosen`` says."""
    return _Lowerer(source, signature, chosen).run()


_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv",
           ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul"}
_COMPARE = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
_CASTS = {"float32": "f32", "float64": "f64", "int32": "i32", "uint32": "u32"}
_STATEMENTS = ("assignments (`y = ...`, `y += ...`, `m[0] = ...`), if/elif/else, match, pass, "
               "`for i in range(...)`, `while hawk.capped(cond, cap)`, break, continue and return")


class _Lowerer(Flow, Inlining):
    def __init__(self, source: Source, signature: tuple[ArgSpec, ...],
                 chosen: dispatch_groups.Chosen = dispatch_groups.SWITCH) -> None:
        self.src = source
        self.dispatch = chosen
        self.groups: dict[str, dispatch_groups.Group] = {}  # the dispatch groups met, by name
        self.group_nodes: dict[str, ast.Match] = {}  # ... and their match (a loop lowers one again)
        self.slots: list[Slot] = []
        self.param_slot: dict[str, int] = {}
        self.kinds = dict(source.params)
        self.no_contract = NO_CONTRACT
        for (name, kind), spec in zip(source.params, signature, strict=True):
            role = {"in": "read", "param": "value", "mutable": "readwrite", "table": "read",
                    "scatter": "readwrite"}[kind.role]
            self.param_slot[name] = len(self.slots)
            self.slots.append(frontend_values.slot(name, role, kind, spec.dtype, spec.cell)
                              if isinstance(kind, ValueKind) else
                              Slot(name, role, spec.dtype, spec.components, spec.cell, table=spec.table))
        self.sites = 0  # checked Table reads and Scatter writes so far (hawk.tables numbers them)
        self.scatters: dict[str, bool] = {}  # Scatter parameter -> written with = (else +=)
        self.body: list[Stmt] = []
        self.env: dict[str, Operand | _Unbound] = {}
        self.mutated: dict[str, tuple[int, int, ast.AST]] = {}  # binding -> (slot, comp, first assignment)
        self.depth = 0
        self.result: object = None
        self.frame, self.loops, self.returns, self.leaves = "\1", [], None, []
        self.helpers: list[Func] = []  # the helpers being inlined, outermost first
        self.inlined = 0  # helper calls inlined so far: each has its own flags

    # ------------------------------------------------------------ driver
    def run(self) -> KernelIR:
        stmts = self.src.tree.body
        if stmts and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant) \
                and isinstance(stmts[0].value.value, str):
            stmts = stmts[1:]  # the docstring
        self.block(stmts)
        values = self.returned_values(stmts[-1] if stmts else self.src.tree)
        if values:
            for value, kind, node in zip(values, self.returns.kinds, self.returns.nodes, strict=True):
                self.output(value, kind, node)
            self.result = self.returns.tree
        if self.result is None and self.src.returns not in (None, NO_CONTRACT):
            last = stmts[-1] if stmts else self.src.tree
            raise self.src.refuse(last, f"the return annotation says {_shown(self.src.returns)} but the "
                                        "kernel returns nothing: return a value, or annotate -> None")
        self.store_mutables()
        outputs = [i for i, s in enumerate(self.slots) if s.name == "out"]
        for k, i in enumerate(outputs if len(outputs) > 1 else []):
            self.slots[i] = dataclasses.replace(self.slots[i], name=f"out{k}")
        body = unroll.unrolled(self.body, lambda s: isinstance(s, ScatterAdd), lambda why: self.src.refuse(
            self.src.tree, f"a Scatter is written in a loop: {why}"))
        return KernelIR(self.src.fn.__name__, self.slots, body, self.result, tuple(self.groups.values()))

    # -------------------------------------------------------- statements
    def statement(self, node: ast.stmt) -> None:
        if tables.scatter(self, node):
            return
        if isinstance(node, ast.Assign):
            if tables.unpack_sample2(self, node) or self.unpack(node):
                return
            value = self.expr(node.value)
            for target in node.targets:
                self.assign(target, value, node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self.assign(node.target, self.expr(node.value), node.value)
        elif isinstance(node, ast.AugAssign):
            op = _BINOPS.get(type(node.op))
            if op is None:
                raise self.src.refuse(node, f"the operator {type(node.op).__name__} is not in hawk; "
                                            "use + - * / // % **")
            current = ast.copy_location(ast.Name(node.target.id, ast.Load()), node.target) \
                if isinstance(node.target, ast.Name) else ast.copy_location(
                    ast.Subscript(node.target.value, node.target.slice, ast.Load()), node.target) \
                if isinstance(node.target, ast.Subscript) else ast.copy_location(
                    ast.Attribute(node.target.value, node.target.attr, ast.Load()), node.target) \
                if isinstance(node.target, ast.Attribute) else None
            if current is None:
                raise self.src.refuse(node, "augmented assignment needs a name, m[k] or v.x target")
            self.assign(node.target, self.apply(op, [self.expr(current), self.expr(node.value)], node), node)
        elif isinstance(node, ast.If):
            self.if_statement(node)
        elif isinstance(node, ast.Match):
            dispatch_groups.match_statement(self, node)
        elif isinstance(node, ast.Pass):
            pass
        elif isinstance(node, ast.Return):
            self.return_statement(node)
        elif isinstance(node, (ast.For, ast.While)):
            self.loop_statement(node)
        elif isinstance(node, (ast.Break, ast.Continue)):
            self.loop_exit(node)
        else:
            raise self.src.refuse(node, f"a {type(node).__name__} statement is not in hawk; a kernel has "
                                        f"{_STATEMENTS}")

    def assign(self, target: ast.expr, value: Operand, node: ast.AST) -> None:
        if isinstance(target, ast.Tuple):
            raise self.src.refuse(target, "unpacking is not in hawk; assign each name on its own line")
        if isinstance(target, (ast.Subscript, ast.Attribute)) and self.holds_value(target.value):
            # a component of a value: the whole value again, with that component new
            whole = self.expr(target.value)
            target, value = target.value, frontend_values.replaced(self, whole, target, value)
        if isinstance(target, ast.Attribute) and ast.unparse(target) in self.kinds:  # a struct's field
            target = ast.copy_location(ast.Name(ast.unparse(target), ast.Store()), target)
        if isinstance(target, ast.Name) and isinstance(self.kinds.get(target.id), ValueKind) \
                and target.id in self.param_slot:
            frontend_values.assign_param(self, target.id, self.kinds[target.id], value, node)
            return
        if isinstance(target, ast.Subscript):
            name, comp = self.subscript(target)
            key = f"{name}[{comp}]"
        elif isinstance(target, ast.Name):
            name, comp, key = target.id, 0, target.id
            slot = self.param_slot.get(name)
            if slot is not None and self.slots[slot].components > 1:
                raise self.src.refuse(target, f"{name!r} has {self.slots[slot].components} components; "
                                              f"assign {name}[0] … {name}[{self.slots[slot].components - 1}]")
        else:
            raise self.src.refuse(target, "assign to a name or to m[k] of a Mutable parameter")
        slot = self.param_slot.get(name)
        if slot is not None and self.slots[slot].role == "readwrite":
            self.mutated.setdefault(key, (slot, comp, node))
        elif isinstance(target, ast.Subscript):
            raise self.src.refuse(target, f"{name!r} is read-only: only a Mutable parameter is written")
        if isinstance(value, Var) and not value.name:
            value.name = name.replace(".", "_")  # a struct's field, b.pos: a C name
        self.env[key] = value

    def holds_value(self, node: ast.expr) -> bool:
        """``node`` names a vector, matrix, quaternion or struct: a local holding one, or a
        parameter of a value type (not a plain plane of components, indexed as before)."""
        if ast.unparse(node) in self.kinds:  # a parameter, or a struct parameter's field
            return isinstance(self.kinds[ast.unparse(node)], ValueKind)
        if not isinstance(node, ast.Name):
            return False
        if node.id in self.env:
            return isinstance(self.env[node.id], (Value, StructValue))
        return isinstance(self.kinds.get(node.id), ValueKind)

    def if_statement(self, node: ast.If) -> None:
        cond = self.truth(self.expr(node.test), node.test)
        if isinstance(cond, Const):  # decided now: only the taken arm exists
            for stmt in node.body if cond.value else node.orelse:
                self.statement(stmt)
            return
        self.branch(cond, [lambda: self.block(node.body), lambda: self.block(node.orelse)], node)

    def branch(self, cond: Var, arms: list[Callable[[], None]], node: ast.AST) -> None:
        """An ``If`` on a per-sample ``cond``: ``arms[0]()`` lowers its then-arm, ``arms[1]()`` its
        else-arm, each from the names as they are now; then the names merged."""
        stmt = If(cond)
        before, outer = dict(self.env), self.body
        self.depth += 1
        ends = []
        for lower_arm, body in zip(arms, (stmt.then, stmt.orelse), strict=True):
            self.env, self.body = dict(before), body
            lower_arm()
            ends.append(self.env)
        self.depth -= 1
        self.env, self.body = dict(before), outer
        outer.append(stmt)
        self.merge(stmt, ends[0], ends[1], node)

    def merge(self, stmt: If, then_env: dict, else_env: dict, node: ast.AST) -> None:
        """After an if: one var per name the arms bind differently (a phi)."""
        line = getattr(node, "lineno", 0) + self.src.line_offset
        for key in dict.fromkeys([*then_env, *else_env]):
            if key.startswith("\0"):
                continue  # a load made inside an arm stays there
            arms = [(stmt.then, then_env), (stmt.orelse, else_env)]
            values = [self.arm_value(body, env, key, line) for body, env in arms]
            if values[0] is values[1] or (isinstance(values[0], Const) and values[0].dtype == "bool"
                                          and values[0] == values[1]):  # a flag both arms set
                self.env[key] = values[0]
                continue
            if any(isinstance(v, _Unbound) for v in values):
                self.env[key] = _Unbound(line)
                continue
            self.env[key] = self.merged(stmt, values, node, key)

    def merged(self, stmt: If, values: list[object], node: ast.AST, key: str) -> object:
        """The value after ``stmt`` of what its arms hold: a phi per scalar operand."""
        if not same_shape(values):
            shown = " and ".join(describe(v) for v in values)
            raise self.src.refuse(node, f"{key!r} is {shown} in the two arms; give it one type in both")
        parts, rebuild = flatten(values[0])
        others = flatten(values[1])[0]
        return rebuild([a if a is b else self.phi(stmt, [a, b]) for a, b in zip(parts, others, strict=True)])

    def arm_value(self, body: list[Stmt], env: dict, key: str, line: int) -> Operand | _Unbound:
        """What ``key`` holds at the end of an arm; a parameter the arm left alone (a Mutable's
        component too) holds its value from before the if: a parameter is always assigned."""
        if key in env:
            return env[key]
        if key in self.mutated:
            slot, comp, _ = self.mutated[key]
        elif key in self.param_slot:
            slot, comp = self.param_slot[key], 0
        else:
            return self.missing(key, line)
        saved = self.body, self.env
        self.body, self.env = body, env
        value = self.read(key, self.slots[slot].name, comp, None)
        self.body, self.env = saved
        return value

    def phi(self, stmt: If, values: list[Operand]) -> Var:
        """A var the arms of ``stmt`` each set to their value."""
        dtype = promote(*(v.dtype for v in values))
        uniform = stmt.cond.uniform and all(map(_uniform, values))
        var = Var(dtype if uniform else strong(dtype), uniform)
        for body, value in ((stmt.then, values[0]), (stmt.orelse, values[1])):
            saved, self.body = self.body, body
            self.body.append(Op(var, "copy", (self.cast(value, var.dtype),)))
            self.body = saved
        return var

    def store_mutables(self) -> None:
        for key, (slot, comp, node) in self.mutated.items():
            self.body.append(Store(slot, comp, self.to_slot(self.env[key], self.slots[slot], key, node)))

    def output_tree(self, node: ast.expr, contract: object) -> object:
        """The output slots of a returned value or tree, held to the return annotation."""
        container = {ast.Tuple: tuple, ast.List: list, ast.Dict: dict}.get(type(node))
        if contract is None:
            raise self.src.refuse(node, f"the return annotation says None but the kernel returns "
                                        f"{_returned(node)}; drop the value or annotate its type")
        expected = contract.container if isinstance(contract, Each) else tuple \
            if isinstance(contract, tuple) else None
        if contract is not NO_CONTRACT and container is not expected:
            raise self.src.refuse(node, f"the return annotation says {_shown(contract)} but the kernel "
                                        f"returns {_returned(node)}; make the two agree")
        if isinstance(contract, tuple) and len(contract) != len(node.elts):
            raise self.src.refuse(node, f"the return annotation says {_shown(contract)} ({len(contract)} "
                                        f"values) but the kernel returns {len(node.elts)}")
        if container is dict:
            if not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys):
                raise self.src.refuse(node, "a returned dict needs string keys written out")
            item = contract.item if isinstance(contract, Each) else NO_CONTRACT
            return {k.value: self.output_tree(v, item) for k, v in zip(node.keys, node.values, strict=True)}
        if container is not None:
            items = contract if isinstance(contract, tuple) else \
                [contract.item if isinstance(contract, Each) else NO_CONTRACT] * len(node.elts)
            outs = [self.output_tree(e, c) for e, c in zip(node.elts, items, strict=True)]
            return container(outs)
        return self.leaf(node, contract)

    def output(self, value: Operand, kind: object, node: ast.AST) -> int:
        """One output slot: per sample, or one cell for a Param (or, unannotated, a uniform value)."""
        if isinstance(value, Value) or isinstance(kind, ValueKind):
            return frontend_values.output(self, node, value, kind)
        if kind is NO_CONTRACT:
            dtype, cell = strong(value.dtype), _uniform(value)
        elif kind.role == "param":
            if not _uniform(value):
                raise self.src.refuse(node, f"the return annotation says {kind!r} (one value for all "
                                            "samples) but the value returned differs per sample; annotate "
                                            "Scalar (one per sample), or return a reduction such as "
                                            "hawk.sum(...)")
            dtype, cell = kind.dtype or strong(value.dtype), True
        else:  # one value per sample: a uniform value is sent to every sample
            dtype, cell = kind.dtype or self.scalar_type(value), False
        value = self.conform(value, dtype, node, f"the returned value is {value.dtype} but the return "
                                                 f"annotation says {kind!r} ({dtype})")
        self.slots.append(Slot("out", "write", dtype, cell=cell))
        self.body.append(Store(len(self.slots) - 1, 0, value))
        return len(self.slots) - 1

    def scalar_type(self, value: Operand) -> str:
        """The float a ``Scalar`` result is: a float32 value's, and for a Python number the
        Scalar planes' width (float32 when they all are float32)."""
        planes = {s.dtype for s, (_, k) in zip(self.slots, self.src.params, strict=False)
                  if k.role != "param" and k.dtype is None}
        if value.dtype == "f32" or (value.dtype in WEAK and planes == {"f32"}):
            return "f32"
        return "f64"

    def to_slot(self, value: Operand, slot: Slot, key: str, node: ast.AST) -> Operand:
        if slot.cell and not _uniform(value):
            raise self.src.refuse(node, f"{key!r} is one cell but is assigned a per-sample value; "
                                                 "pass an array of one value per sample, or assign it a "
                                                 "reduction such as hawk.sum(...)")
        return self.conform(value, slot.dtype, node, f"{key!r} is {slot.dtype} but is assigned a "
                                                     f"{value.dtype} value")

    def conform(self, value: Operand, dtype: str, node: ast.AST, mismatch: str) -> Operand:
        """``value`` converted to ``dtype`` where NumPy converts within a kind (``same_kind``; a
        Python int goes anywhere), else refused with ``mismatch`` and the cast to write."""
        if value.dtype != "wi" and not np.can_cast(NUMPY[value.dtype], NUMPY[dtype], "same_kind"):
            raise self.src.refuse(node, f"{mismatch}; cast it, e.g. hawk.math.{_cast_name(dtype)}(...)")
        return self.cast(value, dtype)

    # ------------------------------------------------------- expressions
    def expr(self, node: ast.expr) -> Operand:
        if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float)):
            return _constant(node.value)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Name) and tables.is_table(self, node.value.id):
                return tables.gather(self, node)
            if not (isinstance(node.value, ast.Name) and node.value.id in self.param_slot) \
                    or self.holds_value(node.value):
                return frontend_values.subscript(self, self.expr(node.value), node)
            name, comp = self.subscript(node)
            return self.read(f"{name}[{comp}]", name, comp, node)
        if isinstance(node, ast.BinOp):
            op = _BINOPS.get(type(node.op))
            if op is None:
                raise self.src.refuse(node, f"the operator {type(node.op).__name__} is not in hawk; "
                                            "use + - * / // % ** (and hawk.math for functions)")
            return self.apply(op, [self.expr(node.left), self.expr(node.right)], node)
        if isinstance(node, ast.UnaryOp):
            value = self.expr(node.operand)
            if isinstance(node.op, ast.USub):
                return self.apply("neg", [value], node)
            if isinstance(node.op, ast.UAdd):
                return value
            if isinstance(node.op, ast.Not):
                return self.apply("not", [self.truth(value, node)], node)
            raise self.src.refuse(node, "bitwise ~ is not in hawk; use `not` for a condition")
        if isinstance(node, ast.BoolOp):
            return self.short_circuit(node)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.IfExp):
            return self.if_expression(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Attribute):
            key = ast.unparse(node)
            if key in self.kinds:  # a struct parameter's field: b.pos
                return self.read(key, key, 0, node)
            root = node.value
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name) and (root.id in self.env or root.id in self.kinds
                                               or any(k.startswith(f"{root.id}.") for k in self.kinds)):
                # a local's or a parameter's: v.x, s.pos, s.pos.x, b.pos.x (not a module's number)
                return frontend_values.attribute(self, self.expr(node.value), node)
            return self.folded(self.resolve(node), node)
        raise self.src.refuse(node, f"a {type(node).__name__} expression is not in hawk; a kernel computes "
                                    "with numbers, parameters, locals, arithmetic, comparisons, "
                                    "and/or/not, `a if c else b` and hawk.math")

    def name(self, node: ast.Name) -> Operand:
        return self.read(node.id, node.id, 0, node)

    def read(self, key: str, name: str, comp: int, node: ast.AST) -> Operand:
        if key in self.env:
            value = self.env[key]
            if isinstance(value, _Unbound):
                raise self.src.refuse(node, f"{key!r} may be unassigned here: it is assigned in "
                                            f"{value.place} at line {value.line} only; assign it before "
                                            "the if (the loop), or in both arms")
            return value
        slot = self.param_slot.get(name)
        if slot is None and isinstance(self.src.structs.get(name), ValueKind):  # a Param[hawk.vec3]
            return frontend_values.read_components(self, name, self.src.structs[name], node)
        if slot is None and name in self.src.structs:  # a struct parameter as a whole: its fields
            kind = self.src.structs[name]
            fields = (f"{name}.{field}" for field, _ in kind.fields)
            return StructValue(kind, tuple(self.read(key, key, 0, node) for key in fields))
        if slot is None:
            return self.folded(self.resolve(node), node)
        if self.slots[slot].table is not None:
            raise self.src.refuse(node, f"{name!r} is a Table or a Scatter (an array all samples share): "
                                        f"read or write a cell of it at an index, {name}[i]")
        if key == name and isinstance(self.kinds[name], ValueKind):
            return frontend_values.read_param(self, name, self.kinds[name], node)
        if self.slots[slot].components > 1 and key == name:
            k = self.slots[slot].components
            raise self.src.refuse(node, f"{name!r} has {k} components per sample; read {name}[0] … "
                                        f"{name}[{k - 1}]")
        cache = f"\0load:{key}"
        if cache not in self.env:
            s = self.slots[slot]
            var = Var(s.dtype if s.role == "value" else strong(s.dtype), s.uniform, name.replace(".", "_"))
            self.body.append(Load(var, slot, comp))
            self.env[cache] = var
        return self.env[cache]

    def subscript(self, node: ast.Subscript) -> tuple[str, int]:
        if not isinstance(node.value, ast.Name) or node.value.id not in self.param_slot:
            raise self.src.refuse(node, "indexing is only for the components of a parameter: x[0], x[1] …")
        name = node.value.id
        if tables.is_table(self, name):
            raise self.src.refuse(node, f"{name!r} is a Table, which a kernel only reads; write a "
                                        "per-sample result (return it, or assign a Mutable)")
        index = node.slice
        if not (isinstance(index, ast.Constant) and isinstance(index.value, int)):
            raise self.src.refuse(node, f"{name}[...] takes a written-out integer component index (a Table "
                                        "is read, a Scatter written, at computed indices)")
        k = self.slots[self.param_slot[name]].components
        if index.value < 0 or (k and index.value >= k):
            raise self.src.refuse(node, f"{name}[{index.value}] is out of range: this call gives {name} "
                                        f"{k} component{'s' * (k != 1)} (a ({k}, n) plane)")
        return name, index.value

    def resolve(self, node: ast.expr) -> object:
        """A global, closure or builtin name (or a.b.c of one), as an object: as the first lowering
        (at decoration) found it, so that every signature folds in the same numbers."""
        key = ast.unparse(node)
        if key not in self.src.names:
            self.src.names[key] = self.look_up(node)
        return self.src.names[key]

    def look_up(self, node: ast.expr) -> object:
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if not hasattr(base, node.attr):
                raise self.src.refuse(node, f"{ast.unparse(node)} does not exist")
            return getattr(base, node.attr)
        if isinstance(node, ast.Name):
            fn = self.src.fn
            closure = inspect.getclosurevars(fn).nonlocals
            for scope in (closure, fn.__globals__, vars(builtins)):
                if node.id in scope:
                    return scope[node.id]
            raise self.src.refuse(node, f"name {node.id!r} is not a parameter, a local or a number from "
                                        "the enclosing module")
        raise self.src.refuse(node, "only names and attributes of modules can be looked up")

    def folded(self, value: object, node: ast.AST) -> Const:
        if isinstance(value, (np.floating, np.integer, np.bool_)):
            return Const(value.item(), of_numpy(value.dtype))
        if isinstance(value, numbers.Number) and isinstance(value, (bool, int, float)):
            return _constant(value)
        raise self.src.refuse(node, f"{ast.unparse(node)} is not a number (a {type(value).__name__}); a "
                                    "kernel folds in numbers from its module only (and calls hawk.math)")

    def compare(self, node: ast.Compare) -> Operand:
        left, out = self.expr(node.left), None
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            name = _COMPARE.get(type(op))
            if name is None:
                raise self.src.refuse(node, f"{type(op).__name__} is not in hawk; compare with "
                                            "< <= > >= == !=")
            right = self.expr(right_node)
            test = self.apply(name, [left, right], node)
            out = test if out is None else self.apply("and", [out, test], node)
            left = right
        return out

    def if_expression(self, node: ast.IfExp) -> Operand:
        """``a if c else b``: an if statement into a fresh var, so only one arm runs."""
        cond = self.truth(self.expr(node.test), node.test)
        if isinstance(cond, Const):
            return self.expr(node.body if cond.value else node.orelse)
        stmt, outer, before = If(cond), self.body, self.env
        self.depth += 1
        values = []
        for branch, body in ((node.body, stmt.then), (node.orelse, stmt.orelse)):
            self.body, self.env = body, dict(before)  # a load made in one arm is that arm's only
            values.append(self.expr(branch))
        self.depth -= 1
        self.body, self.env = outer, before
        outer.append(stmt)
        return self.merged(stmt, values, node, ast.unparse(node))

    def call(self, node: ast.Call) -> Operand:
        fn = self.resolve(node.func)
        if isinstance(fn, Func):
            return self.inline(fn, node)
        made = frontend_values.call(self, fn, node)
        if made is not None:
            return made
        found = intrinsics.lookup(fn)
        if found is not None and found[0] in draws.SPELLED:  # takes sample= too
            return draws.call(self, found, node)
        if found is None or node.keywords:
            what = ast.unparse(node.func)
            raise self.src.refuse(node, f"{what}(...) cannot be called in a kernel; a kernel calls "
                                        f"{intrinsics.ALLOWED_CALLS} (positional arguments only)")
        op, arity = found
        if op == "sample2":
            raise self.src.refuse(node, "hawk.sample2 gives two values: write `i, j = hawk.sample2(width)` "
                                        "on a line of its own")
        if len(node.args) != arity:
            raise self.src.refuse(node, f"{ast.unparse(node.func)} takes {arity} argument"
                                        f"{'s' * (arity != 1)}, got {len(node.args)}")
        args = [self.expr(a) for a in node.args]
        if op in composites.LOWERINGS:
            return composites.LOWERINGS[op](self, args, node)
        if op in _CASTS:
            return self.cast(args[0], _CASTS[op], force=True)
        if op == "sample":
            return tables.sample_index(self)
        if op in REDUCTIONS:
            return self.reduction(op, args[0], node)
        if op == "where":
            cond = self.truth(args[0], node)
            if any(isinstance(a, Value) for a in args[1:]):
                return frontend_values.where(self, cond, args[1], args[2], node)
            dtype = promote(args[1].dtype, args[2].dtype)
            return self.emit("select", [cond, self.cast(args[1], dtype), self.cast(args[2], dtype)], dtype)
        return self.apply(op, args, node)

    def reduction(self, op: str, value: Operand, node: ast.AST) -> Var:
        if self.depth:
            raise self.src.refuse(node, f"hawk.{op} inside an if or a loop: a cross-sample reduction runs "
                                        "over every sample, so compute it before the if (the loop)")
        if _uniform(value):
            raise self.src.refuse(node, f"hawk.{op} needs a per-sample value; this one is the same for "
                                        "every sample")
        if op in ("any", "all") or (op in ("max", "min") and value.dtype == "bool"):
            # the max of bools is any, the min all: one identity for an empty batch (bool has no
            # lowest value of its own in libeagle, which reduces it as bytes)
            op = {"max": "any", "min": "all"}.get(op, op)
            value, dtype = self.truth(value, node), "bool"
        else:
            dtype = of_numpy(np.asarray(getattr(np, op)(np.ones(2, NUMPY[value.dtype]))).dtype)
        dst = Var(dtype, True)
        self.body.append(Op(dst, op, (self.cast(value, dtype),)))
        return dst

    # ------------------------------------------------------------ typing
    def apply(self, op: str, args: list[Operand], node: ast.AST) -> Operand:
        """``op`` over args, with the operands cast to the type NumPy computes it in."""
        if op == "matmul" or any(isinstance(a, Value) for a in args):
            return frontend_values.operator(self, op, args, node)
        try:
            out = result_dtype(op, *(a.dtype for a in args))
        except TypeError:
            raise self.src.refuse(node, f"{op} is not defined for {' and '.join(a.dtype for a in args)} "
                                        "(as in NumPy)") from None
        if op in ("and", "or", "not"):
            loop = "bool"
        elif out == "bool":  # a comparison: computed in the operands' common type
            loop = promote(*(a.dtype for a in args))
        else:
            loop = out
        return self.emit(op, [self.cast(a, loop) for a in args], out)

    def emit(self, op: str, args: list[Operand], dtype: str) -> Operand:
        if all(isinstance(a, Const) for a in args) and op != "cast":  # numbers only: fold now
            with np.errstate(all="ignore"):
                value = OPS[op](*(NUMPY[strong(a.dtype)](a.value) for a in args))
            return Const(np.asarray(value).astype(NUMPY[strong(dtype)]).item(), dtype)
        uniform = all(map(_uniform, args))
        dst = Var(dtype if uniform else strong(dtype), uniform)
        self.body.append(Op(dst, op, tuple(args)))
        return dst

    def cast(self, value: Operand, dtype: str, force: bool = False) -> Operand:
        """``value`` as ``dtype``; ``force`` keeps the new type even where the storage is the same
        (an explicit ``hawk.math.float64(p)`` of a weak Param is no longer weak)."""
        if value.dtype == dtype:
            return value
        if isinstance(value, Const):
            return Const(convert(value.value, dtype), dtype)
        if strong(value.dtype) == strong(dtype) and not force:
            return value
        return self.emit("cast", [value], dtype)

    def truth(self, value: Operand, node: ast.AST) -> Operand:
        """A value as a condition: bools as they are, numbers compared with 0."""
        if isinstance(value, Value):
            raise self.src.refuse(node, f"a {value.kind.type_name} is not a condition; test a component "
                                        "(v.x > 0.0) or a scalar such as hawk.length(v) > 0.0")
        if value.dtype == "bool":
            return value
        if isinstance(value, Const):
            return Const(bool(value.value), "bool")
        return self.apply("ne", [value, Const(0, "wi")], node)


def _uniform(value: Operand) -> bool:
    return isinstance(value, Const) or value.uniform


def _constant(value: bool | int | float) -> Const:
    if isinstance(value, bool):
        return Const(value, "bool")
    return Const(value, "wi" if isinstance(value, int) else "wf")


def _shown(contract: object) -> str:
    """A return contract as the annotation a user writes."""
    if isinstance(contract, Each):
        item = _shown(contract.item)
        shown = {tuple: f"tuple[{item}, ...]", list: f"list[{item}]", dict: f"dict[str, {item}]"}
        return shown[contract.container]
    if isinstance(contract, tuple):
        return f"tuple[{', '.join(map(_shown, contract))}]"
    return repr(contract)


def _returned(node: ast.expr) -> str:
    what = {ast.Tuple: "a tuple", ast.List: "a list", ast.Dict: "a dict"}.get(type(node), "one value")
    return f"{what} `{ast.unparse(node)}`"


def _cast_name(dtype: str) -> str:
    return {"f32": "float32", "f64": "float64", "i32": "int32", "u32": "uint32"}.get(dtype, "float64")
