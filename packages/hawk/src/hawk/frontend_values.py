"""The front end's part for vector, matrix and quaternion values.

``frontend._Lowerer`` calls these where a value can appear: reading a value
parameter, indexing, ``v.x``, constructors and the :mod:`hawk.linalg`
functions, operators, component assignment, writing a ``Mutable`` value and
returning one.  Everything lowers to scalar IR ops (see :mod:`hawk.values`).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from hawk import linalg, values
from hawk.ir import Const, Operand, Slot, Store
from hawk.types import promote
from hawk.values import LETTERS, StructKind, Value, ValueKind

if TYPE_CHECKING:
    from hawk.frontend import _Lowerer


class KernelAlgebra:
    """:class:`hawk.linalg.Algebra` over IR operands: each step one op of the kernel's body."""

    def __init__(self, lowerer: _Lowerer, node: ast.AST) -> None:
        self.lw, self.node = lowerer, node

    def op(self, name: str, *args: Any) -> Operand:
        return self.lw.apply(name, [_operand(a) for a in args], self.node)

    def select(self, cond: Any, a: Any, b: Any) -> Operand:
        cond, a, b = _operand(cond), _operand(a), _operand(b)
        dtype = promote(a.dtype, b.dtype)
        if isinstance(cond, Const):
            return self.lw.cast(a if cond.value else b, dtype)
        return self.lw.emit("select", [cond, self.lw.cast(a, dtype), self.lw.cast(b, dtype)], dtype)

    def refuse(self, message: str) -> Exception:
        return self.lw.src.refuse(self.node, message)


def _operand(x: Any) -> Operand:
    return Const(x, "wf") if isinstance(x, float) else x


def slot(name: str, role: str, kind: ValueKind, dtype: str, cell: bool) -> Slot:
    """The slot of a value parameter: its components, and a matrix's (r, c) per-sample shape."""
    return Slot(name, role, dtype, kind.size, cell, shape=kind.shape if len(kind.shape) > 1 else ())


def read_param(lw: _Lowerer, name: str, kind: ValueKind, node: ast.AST) -> Value:
    """A value parameter (or a Mutable one's current value) as a Value of its components."""
    return Value(kind, tuple(lw.read(f"{name}[{k}]", name, k, node) for k in range(kind.size)))


def read_components(lw: _Lowerer, name: str, kind: ValueKind, node: ast.AST) -> Value:
    """A ``Param`` of a value type (``Param[hawk.vec3]``), spread into one Param per component
    (``g.0`` ...), as a Value the same for every sample."""
    return Value(kind, tuple(lw.read(f"{name}.{k}", f"{name}.{k}", 0, node) for k in range(kind.size)))


def _index(lw: _Lowerer, value: Any, node: ast.Subscript) -> int | tuple[int, int] | int:
    """The written-out index of ``value[...]``: a component (flat), or (row,) of a matrix."""
    if not isinstance(value, Value):
        raise lw.src.refuse(node, f"{ast.unparse(node.value)} is a scalar; only a vector, matrix, "
                                  "quaternion or a plane of components is indexed")
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    numbers = []
    for part in parts:
        const = part.operand if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub) else part
        if not (isinstance(const, ast.Constant) and type(const.value) is int):
            raise lw.src.refuse(node, f"{ast.unparse(node)}: a value takes written-out integer indices "
                                      "(v[0], m[1, 2], m[1] for a row)")
        numbers.append(-const.value if const is not part else const.value)
    shape = value.kind.shape
    if len(numbers) > len(shape):
        raise lw.src.refuse(node, f"{ast.unparse(node)}: {values.describe(value)} has {len(shape)} "
                                  f"ind{'ex' if len(shape) == 1 else 'ices'}")
    fixed = []
    for number, size in zip(numbers, shape, strict=False):
        if not -size <= number < size:
            raise lw.src.refuse(node, f"{ast.unparse(node)} is out of range for {values.describe(value)}")
        fixed.append(number % size)  # a negative index counts from the end, as in Warp and NumPy
    if len(fixed) == 2:
        return fixed[0] * shape[1] + fixed[1]
    return fixed[0] if len(shape) == 1 else (fixed[0],)


def subscript(lw: _Lowerer, value: Any, node: ast.Subscript) -> Any:
    """``v[i]``, ``m[i, j]``, ``m[i]`` (a row, as a vector)."""
    index = _index(lw, value, node)
    if isinstance(index, tuple):
        width = value.kind.shape[1]
        return Value(values.kind_of("vec", (width,)), value.comps[index[0] * width:(index[0] + 1) * width])
    return value.comps[index]


def _letter(lw: _Lowerer, value: Any, node: ast.Attribute) -> int:
    k = LETTERS.get(node.attr)
    if not isinstance(value, Value) or value.kind.family == "mat" or k is None or k >= value.size:
        raise lw.src.refuse(node, f"{ast.unparse(node)}: {values.describe(value)} has no component "
                                  f"{node.attr!r}; a vector or quaternion has .x .y .z .w (as many as "
                                  "its size)")
    return k


def attribute(lw: _Lowerer, value: Any, node: ast.Attribute) -> Any:
    """``v.x`` ... ``v.w``; a struct's field, ``s.pos``."""
    if isinstance(value, values.StructValue):
        if node.attr not in [n for n, _ in value.kind.fields]:
            raise lw.src.refuse(node, f"{ast.unparse(node)}: {value.kind!r} has no field {node.attr!r}")
        return value.field(node.attr)
    return value.comps[_letter(lw, value, node)]


def replaced(lw: _Lowerer, whole: Any, target: ast.Subscript | ast.Attribute, new: Any) -> Any:
    """``whole`` with the component ``target`` names (``v[0]``, ``v.x``, ``m[1, 2]``, ``m[1]``)
    set to ``new`` (a struct: the field ``target`` names)."""
    if isinstance(whole, values.StructValue) and isinstance(target, ast.Attribute):
        attribute(lw, whole, target)  # a field it has
        return whole.replaced(target.attr, new)
    if isinstance(target, ast.Attribute):
        index = _letter(lw, whole, target)
    else:
        index = _index(lw, whole, target)
    if isinstance(index, tuple):
        width = whole.kind.shape[1]
        if not (isinstance(new, Value) and new.kind.family == "vec" and new.size == width):
            raise lw.src.refuse(target, f"{ast.unparse(target)} is a row of {width}; assign a vec{width}")
        for j, comp in enumerate(new.comps):
            whole = whole.replaced(index[0] * width + j, comp)
        return whole
    if isinstance(new, Value):
        raise lw.src.refuse(target, f"{ast.unparse(target)} is one component; assign a scalar, not "
                                    f"{values.describe(new)}")
    return whole.replaced(index, new)


def construct(lw: _Lowerer, kind: ValueKind, args: list[Any], node: ast.AST) -> Value:
    """``hawk.vec3(a, b, c)``, ``hawk.vec3(s)`` (every component s), ``hawk.vec3()`` (zeros),
    ``hawk.mat33(9 scalars)`` or ``hawk.mat33(row, row, row)``; a fixed-width type casts."""
    rows = kind.shape[0]
    if not args:
        comps: list[Any] = [Const(0.0, "wf")] * kind.size
    elif len(args) == 1 and not isinstance(args[0], Value):
        comps = [args[0]] * kind.size
    elif kind.family == "mat" and len(args) == rows and all(
            isinstance(a, Value) and a.kind.family == "vec" and a.size == kind.shape[1] for a in args):
        comps = [c for a in args for c in a.comps]
    elif len(args) == kind.size and not any(isinstance(a, Value) for a in args):
        comps = list(args)
    else:
        rows_form = f", or {rows} vec{kind.shape[1]} rows" if kind.family == "mat" else ""
        raise lw.src.refuse(node, f"{kind!r}(...) takes {kind.size} scalars{rows_form}, one scalar for "
                                  f"every component, or nothing (zeros); got {len(args)} argument"
                                  f"{'s' * (len(args) != 1)}")
    for c in comps:
        if c.dtype == "bool":
            raise lw.src.refuse(node, f"{kind!r}(...) takes numbers, not a bool")
    if kind.dtype is not None:
        comps = [lw.conform(c, kind.dtype, node, f"{kind!r} is {kind.dtype} but a component is {c.dtype}")
                 for c in comps]
    return Value(values.kind_of(kind.family, kind.shape), tuple(comps))


def call(lw: _Lowerer, fn: object, node: ast.Call) -> Any:
    """A constructor or a :mod:`hawk.linalg` function, or None when ``fn`` is neither."""
    struct = getattr(fn, "__hawk_kind__", None)
    if isinstance(struct, StructKind):
        return build_struct(lw, struct, node)
    if isinstance(fn, ValueKind):
        if node.keywords:
            raise lw.src.refuse(node, f"{fn!r}(...) takes positional arguments only")
        return construct(lw, fn, [lw.expr(a) for a in node.args], node)
    found = linalg.lookup(fn)
    if found is None:
        return None
    impl, arity, name = found
    if len(node.args) != arity or node.keywords:
        raise lw.src.refuse(node, f"hawk.{name} takes {arity} positional argument{'s' * (arity != 1)}, "
                                  f"got {len(node.args) + len(node.keywords)}")
    return impl(KernelAlgebra(lw, node), *(lw.expr(a) for a in node.args))


def operator(lw: _Lowerer, op: str, args: list[Any], node: ast.AST) -> Any:
    if op not in ("add", "sub", "mul", "div", "neg", "matmul"):
        shown = " and ".join(values.describe(a) for a in args)
        raise lw.src.refuse(node, f"{op} is not defined for {shown}; compare or test components "
                                  "(v.x < 0.0) or a scalar such as hawk.length(v)")
    return linalg.operator(KernelAlgebra(lw, node), op, args)


def where(lw: _Lowerer, cond: Operand, a: Any, b: Any, node: ast.AST) -> Any:
    """``hawk.math.where(c, a, b)`` of values: a select per component."""
    if not values.same_shape([a, b]):
        raise lw.src.refuse(node, f"hawk.math.where: the two values are {values.describe(a)} and "
                                  f"{values.describe(b)}; give both one type")
    alg = KernelAlgebra(lw, node)
    parts, rebuild = values.flatten(a)
    return rebuild([alg.select(cond, x, y) for x, y in zip(parts, values.flatten(b)[0], strict=True)])


def assign_param(lw: _Lowerer, name: str, kind: ValueKind, value: Any, node: ast.AST) -> None:
    """``v = ...`` of a value parameter: of a ``Mutable``, each component, stored at the end; of a
    read-only one, a local of that name from here on (as a scalar parameter is rebound)."""
    slot = lw.param_slot[name]
    if not (isinstance(value, Value) and value.kind.shape == kind.shape
            and value.kind.family == kind.family):
        raise lw.src.refuse(node, f"{name!r} is a {kind.type_name} but is assigned {values.describe(value)}")
    if lw.slots[slot].role != "readwrite":
        lw.env[name] = value
        return
    for k, comp in enumerate(value.comps):
        key = f"{name}[{k}]"
        lw.mutated.setdefault(key, (slot, k, node))
        lw.env[key] = comp


def output(lw: _Lowerer, node: ast.expr, value: Any, kind: object) -> int:
    """A returned value: one plane of its components ((k, n), a matrix (r, c, n))."""
    wanted = kind if isinstance(kind, ValueKind) else None
    if not isinstance(value, Value) or (wanted is not None and (
            wanted.family, wanted.shape) != (value.kind.family, value.kind.shape)):
        expected = wanted if wanted is not None else kind
        raise lw.src.refuse(node, f"the return annotation says {expected!r} but the kernel returns "
                                  f"{values.describe(value)}; make the two agree")
    if wanted is None and kind is not lw.no_contract:
        raise lw.src.refuse(node, f"the return annotation says {kind!r} but the kernel returns "
                                  f"{values.describe(value)}; annotate hawk.{value.kind.type_name}")
    common = promote(*(c.dtype for c in value.comps))
    if common == "bool":
        raise lw.src.refuse(node, f"a returned {value.kind.type_name} holds bools; it holds numbers")
    dtype = wanted.dtype if wanted is not None and wanted.dtype else lw.scalar_type(Const(0.0, common))
    lw.slots.append(slot("out", "write", value.kind, dtype, cell=False))
    out = len(lw.slots) - 1
    for k, comp in enumerate(value.comps):
        mismatch = f"the returned {value.kind.type_name} is {dtype} but a component is {comp.dtype}"
        lw.body.append(Store(out, k, lw.conform(comp, dtype, node, mismatch)))
    return out


def _field_nodes(lw: _Lowerer, kind: StructKind, node: ast.Call) -> dict[str, ast.expr]:
    """The argument written for each field of ``Body(pos=..., ...)`` (positional ones in order)."""
    names = [name for name, _ in kind.fields]
    given = dict(zip(names, node.args, strict=False))
    for keyword in node.keywords:
        if keyword.arg in given or keyword.arg not in names:
            raise lw.src.refuse(node, f"{kind!r}(...): {keyword.arg!r} is not a field or is given twice; its "
                                      f"fields are {', '.join(names)}")
        given[keyword.arg] = keyword.value
    if len(node.args) > len(names) or set(given) != set(names):
        raise lw.src.refuse(node, f"{kind!r}(...) gives every field once: {', '.join(names)}")
    return given


def build_struct(lw: _Lowerer, kind: StructKind, node: ast.Call) -> values.StructValue:
    """``Body(pos=p, mass=m)`` in a kernel: a struct value, each field of its declared type."""
    given = _field_nodes(lw, kind, node)
    fields = []
    for name, field in kind.fields:
        value = lw.expr(given[name])
        if values.shape_of(value) != ((field.family, field.shape) if isinstance(field, ValueKind) else None):
            raise lw.src.refuse(node, f"{kind!r}.{name} is {field!r}; got {values.describe(value)}")
        fields.append(value)
    return values.StructValue(kind, tuple(fields))


def struct_leaves(lw: _Lowerer, node: ast.expr, value: Any, contract: object) -> dict[str, object]:
    """A returned struct (``Body(pos=p, vel=v, mass=m)``, or a local holding one): one leaf of the
    returned tree per field, given back as a dict of planes by field name."""
    if not isinstance(value, values.StructValue) or \
            (isinstance(contract, StructKind) and contract.cls is not value.kind.cls):
        raise lw.src.refuse(node, f"the return annotation says {contract!r}; return {contract!r}(field=..., "
                                  f"...) with every field (the kernel returns {values.describe(value)})")
    return values.StructTree(value.kind.cls, {name: lw.held(value.field(name), field, node)
                                              for name, field in value.kind.fields})
