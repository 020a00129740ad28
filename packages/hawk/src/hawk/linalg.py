"""Small per-sample linear algebra over vector, matrix and quaternion values.

``hawk.dot``, ``hawk.inverse`` ... work in a kernel on its values, and outside
one on component planes (a ``(k, n)`` array is a vector, a quaternion for the
``quat_`` functions; ``(r, c, n)`` a matrix), with the same arithmetic.

Every operation is written once over an *algebra* of scalars: the front
end's (each scalar step becomes one IR op, so the C and CUDA back ends, the
reference evaluator, the derivatives and fusion see plain scalar code) and
NumPy's (the same functions called outside a kernel, on component planes
``(k, n)`` / ``(r, c, n)``).  Sums run left to right, in the order written
here, so every target gives the same bits.

Degenerate inputs have a defined result whose derivative agrees with it:

- ``length(0)`` is 0 and ``normalize(0)`` the zero vector, both with a zero
  derivative (``normalize`` of the zero quaternion is the identity
  quaternion ``(0, 0, 0, 1)``);
- ``inverse(m)`` is the zero matrix where ``determinant(m)`` is exactly 0
  (a NaN determinant gives NaN), with a zero derivative there;
- ``solve(A, b)`` pivots on the largest remaining entry of each column (a
  select, no branch) and gives 0 for the components a zero pivot leaves
  undetermined.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from eagle.extend import EagleTypeError
from hawk import values
from hawk.semantics import OPS
from hawk.values import Value


class Algebra(Protocol):
    """Scalar steps: what an operation on values is made of."""

    def op(self, name: str, *args: Any) -> Any: ...

    def select(self, cond: Any, a: Any, b: Any) -> Any: ...

    def refuse(self, message: str) -> Exception: ...


class LinalgError(EagleTypeError):
    """A value operation outside a kernel given what it does not take."""


class NumpyAlgebra:
    """The algebra of NumPy arrays: hawk's meaning of each op (:mod:`hawk.semantics`)."""

    def op(self, name: str, *args: Any) -> Any:
        with np.errstate(all="ignore"):
            return OPS[name](*args)

    def select(self, cond: Any, a: Any, b: Any) -> Any:
        return np.where(cond, a, b)

    def refuse(self, message: str) -> Exception:
        return LinalgError(message)


# ------------------------------------------------------------ helpers


def _total(alg: Algebra, terms: Sequence[Any]) -> Any:
    out = terms[0]
    for t in terms[1:]:
        out = alg.op("add", out, t)
    return out


def _mapped(value: Value, fn: Callable[[Any], Any]) -> Value:
    return Value(value.kind, tuple(fn(c) for c in value.comps))


def _need(alg: Algebra, what: str, value: Any, *families: str, sizes: tuple[int, ...] = ()) -> Value:
    ok = isinstance(value, Value) and value.kind.family in families and (
        not sizes or value.kind.shape[0] in sizes)
    if not ok:
        wanted = " or ".join(f"a {f}{''.join(map(str, sizes)) if f == 'vec' else ''}" for f in families)
        raise alg.refuse(f"{what} takes {wanted}, got {values.describe(value)}")
    return value


def _vector(k: int, comps: Sequence[Any]) -> Value:
    return Value(values.kind_of("vec", (k,)), tuple(comps))


def _matrix(rows: Sequence[Sequence[Any]]) -> Value:
    k = len(rows)
    return Value(values.kind_of("mat", (k, k)), tuple(c for r in rows for c in r))


# ---------------------------------------------------------- operators


def operator(alg: Algebra, op: str, args: list[Any]) -> Value | Any:
    """``+ - * / @`` and unary minus where a value takes part (Warp's meanings: ``*`` of two
    matrices, of a matrix and a vector or of two quaternions is a product; of a scalar and a
    value a scaling; ``@`` a matrix product)."""
    if op == "neg":
        return _mapped(args[0], lambda c: alg.op("neg", c))
    a, b = args
    both = isinstance(a, Value) and isinstance(b, Value)
    if op in ("add", "sub") and both and a.kind.shape == b.kind.shape and a.kind.family == b.kind.family:
        return Value(a.kind, tuple(alg.op(op, x, y) for x, y in zip(a.comps, b.comps, strict=True)))
    if op in ("mul", "div") and not isinstance(b, Value):
        return _mapped(a, lambda c: alg.op(op, c, b))
    if op == "mul" and not isinstance(a, Value):
        return _mapped(b, lambda c: alg.op(op, a, c))
    if op == "mul" and both and a.kind.family == b.kind.family == "quat":
        return quat_mul(alg, a, b)
    if op in ("mul", "matmul") and both and "mat" in (a.kind.family, b.kind.family):
        return matmul(alg, a, b)
    shown = {"add": "+", "sub": "-", "mul": "*", "div": "/", "matmul": "@"}.get(op, op)
    hint = {"mul": "; for the element-wise product write hawk.cw_mul(a, b), for a dot product "
                   "hawk.dot(a, b)",
            "div": "; divide a value by a scalar, or element-wise with hawk.cw_div(a, b)",
            "matmul": "; @ multiplies a matrix with a matrix or a vector"}.get(op, "")
    raise alg.refuse(f"{values.describe(a)} {shown} {values.describe(b)} is not defined{hint}")


def matmul(alg: Algebra, a: Value, b: Value) -> Value:
    """Matrix–matrix, matrix–vector and (row) vector–matrix products, sums left to right."""
    if not (isinstance(a, Value) and isinstance(b, Value)) or "quat" in (a.kind.family, b.kind.family) or \
            a.kind.shape[-1] != b.kind.shape[0] or a.kind.family == b.kind.family == "vec":
        raise alg.refuse(f"{values.describe(a)} @ {values.describe(b)}: the inner sizes must agree "
                         "(matrix @ matrix, matrix @ vector, vector @ matrix); for vectors use hawk.dot")
    left = a.rows
    right = b.rows if b.kind.family == "mat" else [(c,) for c in b.comps]
    width = len(right[0])
    out = [[_total(alg, [alg.op("mul", row[k], right[k][j]) for k in range(len(right))])
            for j in range(width)] for row in left]
    if b.kind.family == "vec":
        return _vector(len(out), [r[0] for r in out])
    if a.kind.family == "vec":
        return _vector(width, out[0])
    return _matrix(out)


def cw(op: str, alg: Algebra, a: Value, b: Value) -> Value:
    if not (isinstance(a, Value) and isinstance(b, Value) and a.kind.shape == b.kind.shape):
        raise alg.refuse(f"hawk.cw_{op} takes two values of one type, got {values.describe(a)} and "
                         f"{values.describe(b)}")
    return Value(a.kind, tuple(alg.op(op, x, y) for x, y in zip(a.comps, b.comps, strict=True)))


# ------------------------------------------------------------ vectors


def dot(alg: Algebra, a: Value, b: Value) -> Any:
    _need(alg, "hawk.dot", a, "vec", "quat")
    _need(alg, "hawk.dot", b, "vec", "quat", sizes=(a.size,))
    return _total(alg, [alg.op("mul", x, y) for x, y in zip(a.comps, b.comps, strict=True)])


def cross(alg: Algebra, a: Value, b: Value) -> Value:
    _need(alg, "hawk.cross", a, "vec", sizes=(3,))
    _need(alg, "hawk.cross", b, "vec", sizes=(3,))
    (ax, ay, az), (bx, by, bz) = a.comps, b.comps

    def minor(p: Any, q: Any, r: Any, s: Any) -> Any:
        return alg.op("sub", alg.op("mul", p, q), alg.op("mul", r, s))

    return _vector(3, [minor(ay, bz, az, by), minor(az, bx, ax, bz), minor(ax, by, ay, bx)])


def length_sq(alg: Algebra, v: Value) -> Any:
    _need(alg, "hawk.length_sq", v, "vec", "quat")
    return dot(alg, v, v)


def _safe_sqrt(alg: Algebra, square: Any) -> tuple[Any, Any]:
    """(square > 0, sqrt(square) where positive else 1): the root where the derivative is finite."""
    positive = alg.op("gt", square, 0.0)
    return positive, alg.op("sqrt", alg.select(positive, square, 1.0))


def length(alg: Algebra, v: Value) -> Any:
    _need(alg, "hawk.length", v, "vec", "quat")
    positive, root = _safe_sqrt(alg, dot(alg, v, v))
    return alg.select(positive, root, 0.0)


def normalize(alg: Algebra, v: Value) -> Value:
    _need(alg, "hawk.normalize", v, "vec", "quat")
    positive, root = _safe_sqrt(alg, dot(alg, v, v))
    zero = [0.0] * (v.size - 1) + [1.0 if v.kind.family == "quat" else 0.0]
    return Value(v.kind, tuple(alg.select(positive, alg.op("div", c, root), z)
                               for c, z in zip(v.comps, zero, strict=True)))


def outer(alg: Algebra, a: Value, b: Value) -> Value:
    _need(alg, "hawk.outer", a, "vec")
    _need(alg, "hawk.outer", b, "vec", sizes=(a.size,))
    return _matrix([[alg.op("mul", x, y) for y in b.comps] for x in a.comps])


# ----------------------------------------------------------- matrices


def transpose(alg: Algebra, m: Value) -> Value:
    rows = _need(alg, "hawk.transpose", m, "mat").rows
    return _matrix([[r[j] for r in rows] for j in range(len(rows))])


def trace(alg: Algebra, m: Value) -> Any:
    rows = _need(alg, "hawk.trace", m, "mat").rows
    return _total(alg, [rows[i][i] for i in range(len(rows))])


def diag(alg: Algebra, v: Value) -> Value:
    _need(alg, "hawk.diag", v, "vec")
    return _matrix([[c if i == j else 0.0 for j in range(v.size)] for i, c in enumerate(v.comps)])


def _minors(alg: Algebra, rows: list[tuple[Any, ...]]) -> Callable[[tuple[int, ...], tuple[int, ...]], Any]:
    """det of the submatrix on these rows and columns, each computed once (cofactor expansion
    along the first of the rows, left to right)."""

    @functools.cache
    def det(rs: tuple[int, ...], cs: tuple[int, ...]) -> Any:
        if len(rs) == 1:
            return rows[rs[0]][cs[0]]
        out = None
        for k, c in enumerate(cs):
            term = alg.op("mul", rows[rs[0]][c], det(rs[1:], cs[:k] + cs[k + 1:]))
            out = term if out is None else alg.op("sub" if k % 2 else "add", out, term)
        return out

    return det


def determinant(alg: Algebra, m: Value) -> Any:
    rows = _need(alg, "hawk.determinant", m, "mat").rows
    every = tuple(range(len(rows)))
    return _minors(alg, rows)(every, every)


def inverse(alg: Algebra, m: Value) -> Value:
    """adjugate / determinant; the zero matrix where the determinant is exactly 0."""
    rows = _need(alg, "hawk.inverse", m, "mat").rows
    k = len(rows)
    det = _minors(alg, rows)
    every = tuple(range(k))
    d = det(every, every)
    regular = alg.op("ne", d, 0.0)
    scale = alg.op("div", 1.0, alg.select(regular, d, 1.0))

    def entry(i: int, j: int) -> Any:  # (adj m)[i][j] = cofactor(j, i)
        if k == 1:
            return scale
        cof = det(every[:j] + every[j + 1:], every[:i] + every[i + 1:])
        value = alg.op("mul", cof, scale)
        return alg.select(regular, alg.op("neg", value) if (i + j) % 2 else value, 0.0)

    return _matrix([[entry(i, j) for j in range(k)] for i in range(k)])


def solve(alg: Algebra, a: Value, b: Value) -> Value:
    """``x`` with ``a @ x == b``: Gaussian elimination with partial pivoting, rows swapped by
    selects; a component a zero pivot leaves undetermined is 0."""
    rows = [list(r) for r in _need(alg, "hawk.solve", a, "mat").rows]
    k = len(rows)
    rhs = list(_need(alg, "hawk.solve", b, "vec", sizes=(k,)).comps)
    for col in range(k):
        for r in range(col + 1, k):  # bring the largest |entry| of this column up, row by row
            bigger = alg.op("gt", alg.op("abs", rows[r][col]), alg.op("abs", rows[col][col]))
            for c in range(col, k):
                rows[col][c], rows[r][c] = (alg.select(bigger, rows[r][c], rows[col][c]),
                                            alg.select(bigger, rows[col][c], rows[r][c]))
            rhs[col], rhs[r] = alg.select(bigger, rhs[r], rhs[col]), alg.select(bigger, rhs[col], rhs[r])
        pivot = rows[col][col]
        usable = alg.op("ne", pivot, 0.0)
        inv = alg.op("div", 1.0, alg.select(usable, pivot, 1.0))
        for r in range(col + 1, k):
            f = alg.select(usable, alg.op("mul", rows[r][col], inv), 0.0)
            for c in range(col + 1, k):
                rows[r][c] = alg.op("sub", rows[r][c], alg.op("mul", f, rows[col][c]))
            rhs[r] = alg.op("sub", rhs[r], alg.op("mul", f, rhs[col]))
        rows[col].append(usable)
        rows[col].append(inv)
    x: list[Any] = [None] * k
    for r in reversed(range(k)):
        usable, inv = rows[r][k], rows[r][k + 1]
        terms = [rhs[r], *(alg.op("neg", alg.op("mul", rows[r][c], x[c])) for c in range(r + 1, k))]
        x[r] = alg.select(usable, alg.op("mul", _total(alg, terms), inv), 0.0)
    return _vector(k, x)


# -------------------------------------------------------- quaternions


def quat_mul(alg: Algebra, a: Value, b: Value) -> Value:
    """The Hamilton product (x, y, z, w order, as Warp's ``a * b``)."""
    (ax, ay, az, aw), (bx, by, bz, bw) = a.comps, b.comps

    def terms(*pairs: tuple[str, Any, Any]) -> Any:
        out = alg.op("mul", pairs[0][1], pairs[0][2])
        for sign, p, q in pairs[1:]:
            out = alg.op(sign, out, alg.op("mul", p, q))
        return out

    return Value(values.quat, (
        terms(("", aw, bx), ("add", bw, ax), ("add", ay, bz), ("sub", by, az)),
        terms(("", aw, by), ("add", bw, ay), ("add", az, bx), ("sub", bz, ax)),
        terms(("", aw, bz), ("add", bw, az), ("add", ax, by), ("sub", bx, ay)),
        terms(("", aw, bw), ("sub", ax, bx), ("sub", ay, by), ("sub", az, bz))))


def quat_conjugate(alg: Algebra, q: Value) -> Value:
    x, y, z, w = _need(alg, "hawk.quat_conjugate", q, "quat").comps
    return Value(values.quat, (alg.op("neg", x), alg.op("neg", y), alg.op("neg", z), w))


def quat_rotate(alg: Algebra, q: Value, v: Value) -> Value:
    """``v`` rotated by the unit quaternion ``q`` (Warp's formula:
    ``v (2w² - 1) + 2w (q⃗ × v) + 2 q⃗ (q⃗ · v)``)."""
    x, y, z, w = _need(alg, "hawk.quat_rotate", q, "quat").comps
    _need(alg, "hawk.quat_rotate", v, "vec", sizes=(3,))
    axis = _vector(3, (x, y, z))
    a = alg.op("sub", alg.op("mul", alg.op("mul", 2.0, w), w), 1.0)
    turn, along = cross(alg, axis, v), alg.op("mul", dot(alg, axis, v), 2.0)
    w2 = alg.op("mul", w, 2.0)
    return _vector(3, [alg.op("add", alg.op("add", alg.op("mul", c, a), alg.op("mul", t, w2)),
                              alg.op("mul", p, along))
                       for c, t, p in zip(v.comps, turn.comps, axis.comps, strict=True)])


def quat_rotate_inv(alg: Algebra, q: Value, v: Value) -> Value:
    return quat_rotate(alg, quat_conjugate(alg, q), v)


def quat_from_axis_angle(alg: Algebra, axis: Value, angle: Any) -> Value:
    """``(axis sin(angle/2), cos(angle/2))``; the axis is taken as given (unit length)."""
    _need(alg, "hawk.quat_from_axis_angle", axis, "vec", sizes=(3,))
    half = alg.op("mul", angle, 0.5)
    s = alg.op("sin", half)
    return Value(values.quat, (*(alg.op("mul", c, s) for c in axis.comps), alg.op("cos", half)))


def identity(k: int) -> Value:
    return _matrix([[1.0 if i == j else 0.0 for j in range(k)] for i in range(k)])


# ------------------------------------------------------ the public API

#: name -> (implementation over an algebra, arity)
FUNCTIONS: dict[str, tuple[Callable[..., Any], int]] = {
    "dot": (dot, 2), "cross": (cross, 2), "length": (length, 1), "length_sq": (length_sq, 1),
    "normalize": (normalize, 1), "outer": (outer, 2), "transpose": (transpose, 1),
    "determinant": (determinant, 1), "inverse": (inverse, 1), "trace": (trace, 1), "diag": (diag, 1),
    "solve": (solve, 2), "quat_conjugate": (quat_conjugate, 1), "quat_rotate": (quat_rotate, 2),
    "quat_rotate_inv": (quat_rotate_inv, 2), "quat_from_axis_angle": (quat_from_axis_angle, 2),
    "cw_mul": (functools.partial(cw, "mul"), 2), "cw_div": (functools.partial(cw, "div"), 2),
    "identity22": (lambda alg: identity(2), 0), "identity33": (lambda alg: identity(3), 0),
    "identity44": (lambda alg: identity(4), 0),
    "quat_identity": (lambda alg: Value(values.quat, (0.0, 0.0, 0.0, 1.0)), 0),
}
_BY_ID: dict[int, str] = {}


def lookup(fn: object) -> tuple[Callable[..., Any], int, str] | None:
    """The implementation, arity and name of a public value function (``hawk.dot`` ...)."""
    name = _BY_ID.get(id(fn))
    return None if name is None else (*FUNCTIONS[name], name)


def _from_array(x: Any, quaternion: bool) -> Any:
    """A component plane as a Value outside a kernel: (k, n) a vector (a quaternion for the
    quat_ functions), (r, c, n) a matrix; anything else a scalar."""
    x = np.asarray(x)
    if x.ndim == 2:
        kind = values.kind_of("quat" if quaternion and x.shape[0] == 4 else "vec", (x.shape[0],))
        return Value(kind, tuple(x))
    if x.ndim == 3:
        return Value(values.kind_of("mat", x.shape[:2]), tuple(x.reshape(-1, x.shape[-1])))
    return x


def to_array(value: Any) -> Any:
    """A Value's components as one plane ``(*shape, n)``."""
    if not isinstance(value, Value):
        return np.asarray(value)
    comps = np.broadcast_arrays(*(np.asarray(c) for c in value.comps))
    return np.stack(comps).reshape(*value.kind.shape, *comps[0].shape)


def _public(name: str) -> Callable[..., Any]:
    impl, arity = FUNCTIONS[name]
    quaternion = name.startswith("quat_")

    def fn(*args: Any) -> Any:
        if len(args) != arity:
            raise EagleTypeError(f"hawk.{name}: takes {arity} argument{'s' * (arity != 1)}, got {len(args)}")
        algebra = NumpyAlgebra()
        return to_array(impl(algebra, *(_from_array(a, quaternion) for a in args)))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _DOCS[name]
    _BY_ID[id(fn)] = name
    return fn


#: Each public function's docstring: what it computes, and an example on component planes.
_DOCS = {
    "dot": """\
    The dot product of two vectors (or quaternions), summed left to right.

    >>> v = np.array([[1.0], [2.0], [2.0]])
    >>> w = np.array([[0.0], [1.0], [0.0]])
    >>> hawk.dot(v, w)
    array([2.])

    In a kernel (every function here, on the kernel's values):

    >>> @hawk.kernel
    ... def facing(n: hawk.vec3, light: hawk.vec3) -> hawk.Scalar:
    ...     return hawk.math.maximum(hawk.dot(hawk.normalize(n), light), 0.0)
    >>> facing(v, w)
    array([0.66666667])
    """,
    "cross": """\
    The cross product of two vec3.

    >>> v = np.array([[1.0], [2.0], [2.0]])
    >>> w = np.array([[0.0], [1.0], [0.0]])
    >>> hawk.cross(v, w)[:, 0]
    array([-2.,  0.,  1.])
    """,
    "length": """\
    The Euclidean length; 0 for the zero vector, with a zero derivative there.

    >>> v = np.array([[1.0], [2.0], [2.0]])
    >>> hawk.length(v)
    array([3.])
    """,
    "length_sq": """\
    The squared length, ``dot(v, v)``.

    >>> v = np.array([[1.0], [2.0], [2.0]])
    >>> hawk.length_sq(v)
    array([9.])
    """,
    "normalize": """\
    ``v / length(v)``; the zero vector for the zero vector (the identity quaternion for the zero
    quaternion), with a zero derivative there.

    >>> v = np.array([[1.0], [2.0], [2.0]])
    >>> hawk.normalize(v)[:, 0]
    array([0.33333333, 0.66666667, 0.66666667])
    """,
    "outer": """\
    The outer product ``a bᵀ`` of two vectors of one size: a matrix.

    >>> v = np.array([[1.0], [2.0], [2.0]])
    >>> w = np.array([[0.0], [1.0], [0.0]])
    >>> hawk.outer(w, v)[:, :, 0]
    array([[0., 0., 0.],
           [1., 2., 2.],
           [0., 0., 0.]])
    """,
    "transpose": """\
    A matrix's transpose.

    >>> m = np.array([[2.0, 1.0], [1.0, 3.0]])[:, :, None]
    >>> hawk.transpose(m)[:, :, 0]
    array([[2., 1.],
           [1., 3.]])
    """,
    "determinant": """\
    The determinant, by cofactor expansion along the first row (the minors computed once).

    >>> m = np.array([[2.0, 1.0], [1.0, 3.0]])[:, :, None]
    >>> hawk.determinant(m)
    array([5.])
    """,
    "inverse": """\
    adjugate / determinant for a 2×2, 3×3 or 4×4 matrix; the zero matrix where the determinant is
    exactly 0 (a NaN one gives NaN), with a zero derivative there. For ``A⁻¹ b`` prefer
    :func:`hawk.solve`.

    >>> m = np.array([[2.0, 1.0], [1.0, 3.0]])[:, :, None]
    >>> hawk.inverse(m)[:, :, 0] * 5
    array([[ 3., -1.],
           [-1.,  2.]])
    """,
    "trace": """\
    The sum of the diagonal.

    >>> m = np.array([[2.0, 1.0], [1.0, 3.0]])[:, :, None]
    >>> hawk.trace(m)
    array([5.])
    """,
    "diag": """\
    The square matrix with ``v`` on its diagonal.

    >>> v = np.array([[1.0], [2.0], [2.0]])
    >>> hawk.diag(v)[:, :, 0]
    array([[1., 0., 0.],
           [0., 2., 0.],
           [0., 0., 2.]])
    """,
    "solve": """\
    ``x`` with ``a @ x == b``: Gaussian elimination with partial pivoting (rows swapped by selects, no
    branch); a component a zero pivot leaves undetermined is 0.

    >>> m = np.array([[2.0, 1.0], [1.0, 3.0]])[:, :, None]
    >>> v = np.array([[1.0], [2.0], [2.0]])
    >>> hawk.solve(m, v[:2])[:, 0]
    array([0.2, 0.6])
    """,
    "quat_conjugate": """\
    ``(-x, -y, -z, w)``: the inverse of a unit quaternion.

    >>> q = hawk.quat_from_axis_angle(np.array([[0.0], [0.0], [1.0]]), np.array([np.pi / 2]))
    >>> hawk.quat_conjugate(q)[:, 0].round(3)
    array([-0.   , -0.   , -0.707,  0.707])
    """,
    "quat_rotate": """\
    A vec3 rotated by a unit quaternion (Warp's formula; renormalise a drifting quaternion with
    :func:`hawk.normalize`).

    >>> q = hawk.quat_from_axis_angle(np.array([[0.0], [0.0], [1.0]]), np.array([np.pi / 2]))
    >>> v = np.array([[1.0], [2.0], [2.0]])
    >>> hawk.quat_rotate(q, v)[:, 0].round(12)
    array([-2.,  1.,  2.])
    """,
    "quat_rotate_inv": """\
    A vec3 rotated by the conjugate of a unit quaternion.

    >>> q = hawk.quat_from_axis_angle(np.array([[0.0], [0.0], [1.0]]), np.array([np.pi / 2]))
    >>> v = np.array([[1.0], [2.0], [2.0]])
    >>> hawk.quat_rotate_inv(q, v)[:, 0].round(12)
    array([ 2., -1.,  2.])
    """,
    "quat_from_axis_angle": """\
    The quaternion ``(axis sin(angle/2), cos(angle/2))``; the axis is taken as given (of unit length).

    >>> q = hawk.quat_from_axis_angle(np.array([[0.0], [0.0], [1.0]]), np.array([np.pi / 2]))
    >>> q[:, 0].round(3)
    array([0.   , 0.   , 0.707, 0.707])
    """,
    "cw_mul": """\
    The component-wise product of two values of one type (``*`` of two vectors is refused).

    >>> v = np.array([[1.0], [2.0], [2.0]])
    >>> hawk.cw_mul(v, v)[:, 0]
    array([1., 4., 4.])
    """,
    "cw_div": """\
    The component-wise quotient of two values of one type.

    >>> v = np.array([[1.0], [2.0], [2.0]])
    >>> hawk.cw_div(v, v + 1.0)[:, 0]
    array([0.5       , 0.66666667, 0.66666667])
    """,
    "identity22": """\
    The 2×2 identity matrix.

    >>> hawk.identity22()
    array([[1., 0.],
           [0., 1.]])
    """,
    "identity33": """\
    The 3×3 identity matrix.

    >>> hawk.identity33()[0]
    array([1., 0., 0.])
    """,
    "identity44": """\
    The 4×4 identity matrix.

    >>> hawk.identity44().shape
    (4, 4)
    """,
    "quat_identity": """\
    The identity quaternion ``(0, 0, 0, 1)``.

    >>> hawk.quat_identity()
    array([0., 0., 0., 1.])
    """,
}

PUBLIC = {name: _public(name) for name in FUNCTIONS}
