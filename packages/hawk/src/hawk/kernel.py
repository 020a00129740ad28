"""``@hawk.kernel``: a kernel object that checks its calls, compiles per
signature, runs at once on NumPy arrays, or becomes an eagle plan.

A signature is what the IR depends on: each parameter's dtype, its number
of components and whether it is one cell.  The first call with a new
signature lowers and compiles (the shared object is cached on disk by
eagle.native); later calls reuse it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eagle import extend
from eagle.extend import EagleTypeError, EagleValueError, GpuItems, ffi
from eagle.extend import flatten as leaves  # the leaves of a result tree, in order
from eagle.native import Library, compile_library
from eagle.plan import BoundPlan, DispatchGroup, Plan
from hawk import checks, cuda, derive, emit, frontend, fusion, libm, recording, runs, segments, tables, values
from hawk.dispatch_groups import SWITCH, Chosen, choose
from hawk.frontend import ArgSpec
from hawk.ir import KernelIR, Op, Slot, walk
from hawk.phases import Phased, split
from hawk.reference import evaluate
from hawk.types import NUMPY, Kind, Param, Scalar, Table, of_numpy
from hawk.values import ValueKind, check_plane


@dataclass
class Compiled:
    """One signature of a kernel, compiled for the CPU."""

    ir: KernelIR
    phased: Phased
    library: Library
    functions: list[Any]  # one eagle_kernel_fn per phase (then the scatters' finish, if any)
    prefix: str  # of the symbols: {prefix}_p0 …, {prefix}_call
    signature: tuple[ArgSpec, ...] = ()
    chosen: Chosen = field(default=SWITCH)  # the policies its dispatch groups run by

    @functools.cached_property
    def fused_size(self) -> int | None:
        """The statements a launch brings to a fused run, None where it joins none: asked of
        every launch a build lowers, worked out once per kernel and signature."""
        return fusion.size(self.ir) if fusion.fusible(self.ir) else None

    @functools.cached_property
    def plane_roles(self) -> list[tuple[int, str]]:
        """(slot index, role) of every plane slot, scratch included: a launch's accesses."""
        return [(k, s.role) for k, s in enumerate(self.phased.slots) if s.role != "value"]

    def direct_fn(self) -> Any:
        """``{prefix}_call(n, slot, …)`` of a one-phase kernel, typed for cffi."""
        signature = ", ".join(emit.call_signature(self.phased.slots))
        return ffi.cast(f"void(*)({signature})", self.library.address(f"{self.prefix}_call"))


class Kernel:
    """A hawk kernel: call it, ``plan`` it into an eagle graph, or derive from it.

    ``@hawk.kernel`` makes one; the constructor is not for users.

    :param name: the kernel's name (labels, messages, symbols).
    :param params: (name, Kind) per parameter, in order.
    :param lower: signature -> IR.

    >>> from hawk import Param, Scalar
    >>> @hawk.kernel
    ... def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    ...     return a * x + b
    >>> affine
    <hawk.kernel affine(x: Scalar, a: Param, b: Param)>
    >>> affine(np.arange(3.0), 2.0, 1.0)          # a call runs at once
    array([1., 3., 5.])
    >>> affine.vjp(np.arange(3.0), 2.0, 1.0, np.ones(3))["a"]   # d sum(a*x+b) / da
    array([3.])
    """

    def __init__(self, name: str, params: Sequence[tuple[str, Kind]],
                 lower: Callable[[tuple[ArgSpec, ...]], KernelIR], *, derivative: str | None = None) -> None:
        self.__name__ = name
        self.params = tuple(params)
        self._lower = lower
        #: keyed on the signature, and on the dispatch policies where they are not all "switch"
        #: (each policy is its own code)
        self._irs: dict[Any, KernelIR] = {}
        self._compiled: dict[Any, Compiled] = {}
        #: id of a Compiled -> (it, its KernelPlan): the launches of one signature share a plan.
        self._plans: dict[int, tuple[Compiled, KernelPlan]] = {}
        self._direct: dict[tuple[Any, ...], Callable[..., Any]] = {}  # call shape -> its replay
        #: (eager, call shape) -> its signature, samples and compiled code: a shape that passed the
        #: argument checks with every argument taken as it is passes them again (a recording's
        #: thousands of calls check each shape once).
        self._checked: dict[tuple[Any, ...], tuple[tuple[ArgSpec, ...], int, Compiled]] = {}
        self._fast: Callable[..., Any] = _miss
        self.derivative = derivative  # "vjp" / "jvp" for a derived kernel
        #: a vjp's reductions (its Params' gradients) wait for none: they share one phase, one barrier
        self._shared_phases = derivative == "vjp"
        self._derived: dict[Any, Kernel] = {}  # "jvp", or ("vjp", wrt, seeded)
        #: (signature, chosen policies, skip dtype) -> the code of a launch split by a group
        self._splits: dict[Any, segments.Split] = {}

    # ---------------------------------------------------------- looking
    def __repr__(self) -> str:
        return f"<hawk.kernel {self.__name__}({', '.join(f'{n}: {k!r}' for n, k in self.params)})>"

    def ir(self, *args: Any) -> KernelIR:
        """The IR for a call with these arguments."""
        return self._lower(self._signature(args, "ir")[0])

    def c_source(self, *args: Any) -> str:
        """The C this kernel compiles to for a call with these arguments."""
        return self._compile(self._signature(args, "c_source")[0], build=False)

    def cuda_source(self, *args: Any) -> str:
        """The CUDA C for a call with these arguments (see :mod:`hawk.cuda`)."""
        ir = self.ir(*args)
        return emit.source(ir, split(ir, shared=self._shared_phases), f"hk_{self.__name__}", "cuda")

    def ptx(self, *args: Any, arch: str | None = None) -> str:
        """The PTX NVRTC makes of :meth:`cuda_source` (NVRTC needed, no GPU)."""
        return cuda.compile_ptx(self.cuda_source(*args), f"hk_{self.__name__}", arch)

    @property
    def vjp(self) -> Kernel:
        """The reverse-mode kernel: ``vjp(*args, *cotangents) -> {argument: gradient}``.

        It takes this kernel's arguments (a ``Mutable`` one as its value before
        the call), then one cotangent per float output and per float Mutable
        written (``vjp.params`` names them, ``d_out``, ``d_y``), and returns the
        gradient of every float argument; a ``Param``'s is one cell, summed
        over samples in eagle's fixed order.
        """
        return self.vjp_of()

    def vjp_of(self, wrt: Iterable[str] | None = None, seeded: Iterable[str] | None = None) -> Kernel:
        """The reverse-mode kernel of only some gradients (:attr:`vjp` when both are None).

        :param wrt: the float arguments whose gradient it returns; a ``Param`` left out has no
            cross-sample sum, so the vjp of a per-sample kernel is per-sample too.
        :param seeded: the float outputs and Mutables (by their slot names, ``out``, ``y``) that
            take a cotangent; the others' cotangents are zero and nothing is derived from them.

        >>> from hawk import Param, Scalar
        >>> @hawk.kernel
        ... def affine(x: Scalar, a: Param, b: Param) -> Scalar:
        ...     return a * x + b
        >>> only_x = affine.vjp_of(wrt=("x",))
        >>> only_x(np.arange(3.0), 2.0, 1.0, np.ones(3))
        {'x': array([2., 2., 2.])}
        >>> only_x.per_sample, affine.vjp.per_sample
        (True, False)
        """
        key = ("vjp", None if wrt is None else frozenset(wrt), None if seeded is None else frozenset(seeded))
        if key not in self._derived:
            primal = self.ir_of(frontend.default_signature(self.params))
            chosen = _chosen(primal, key[2])
            cotangents = [(c.name, _plane_kind(primal.slots[c.slot])) for c in derive.seeded(primal)
                          if c.slot in chosen]
            arguments = [(n, dataclasses.replace(k, role="in") if k.role == "mutable" else k)
                         for n, k in self.params]
            count = len(self.params)

            def lower(signature: tuple[ArgSpec, ...]) -> KernelIR:
                ct_slots = [Slot(name, "read", spec.dtype, spec.components, spec.cell, table=spec.table)
                            for (name, _), spec in zip(cotangents, signature[count:], strict=True)]
                ir = self.ir_of(signature[:count])
                seeds = [c for c in derive.seeded(ir) if c.slot in _chosen(ir, key[2])]
                wanted = [k for k in derive.inputs(ir) if key[1] is None or ir.slots[k].name in key[1]]
                return derive.vjp(ir, ct_slots, seeds, wanted)

            self._derived[key] = Kernel(f"{self.__name__}_vjp", [*arguments, *cotangents], lower,
                                        derivative="vjp")
        return self._derived[key]

    @property
    def jvp(self) -> Kernel:
        """The forward-mode kernel: ``jvp(*args, *tangents) -> (result, {"result": tangent, …})``.

        It takes this kernel's arguments, then one tangent per float argument
        (``t_x``; a Param's tangent is a number), runs the kernel (writing its
        Mutables) and returns its result with the tangents of the result and
        of each float Mutable it writes.
        """
        if "jvp" not in self._derived:
            primal = self.ir_of(frontend.default_signature(self.params))
            tangents = [(f"t_{primal.slots[k].name}", Param if primal.slots[k].role == "value"
                         else _plane_kind(primal.slots[k])) for k in derive.inputs(primal)]
            count = len(self.params)

            def lower(signature: tuple[ArgSpec, ...]) -> KernelIR:
                t_slots = [Slot(name, "value" if kind.role == "param" else "read", spec.dtype,
                                spec.components, spec.cell, table=spec.table)
                           for (name, kind), spec in zip(tangents, signature[count:], strict=True)]
                primal = self.ir_of(signature[:count])
                for k, t in zip(derive.inputs(primal), t_slots, strict=True):
                    if t.table != primal.slots[k].table and t.table != ():
                        raise EagleValueError(f"hawk.kernel {self.__name__}_jvp: tangent {t.name!r} has "
                                              "shape "
                                         f"{t.table}; it is the tangent of Table {primal.slots[k].name!r}, "
                                         f"of shape {primal.slots[k].table}: pass one of that shape")
                return derive.jvp(primal, t_slots)

            self._derived["jvp"] = Kernel(f"{self.__name__}_jvp", [*self.params, *tangents], lower,
                                          derivative="jvp")
        return self._derived["jvp"]

    @property
    def per_sample(self) -> bool:
        """Reads and writes only its own sample and reduces nothing."""
        return self.ir_of(frontend.default_signature(self.params)).per_sample

    def ir_of(self, signature: tuple[ArgSpec, ...], chosen: Chosen = SWITCH) -> KernelIR:
        """The IR of one signature, its dispatch groups run as ``chosen`` says (only a kernel read
        from Python declares groups; a derived one lowers its primal's switch form)."""
        key = signature if chosen == SWITCH else (signature, chosen)
        if key not in self._irs:
            self._irs[key] = self._lower(signature) if chosen == SWITCH else self._lower(signature, chosen)
        return self._irs[key]

    # ---------------------------------------------------------- calling
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs and recording.active() is None:
            out = self._fast(*args)  # the last call shape, replayed without the checks
            if out is not _MISS:
                return out
        return self._call(args, kwargs)

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        recorder = recording.active()
        if recorder is not None:
            return recorder.call(self, args, kwargs)
        key = None if kwargs else _call_key(args)
        if key in self._direct:
            self._fast = self._direct[key]
            out = self._fast(*args)
            if out is not _MISS:
                return out
        bound = self.plan(*args, eager=True, **kwargs)
        bound.run()
        if key is None:  # an array of another library among the arguments: count what was written
            extend.count_writes([array for _, array, role in bound.planes() if role != "read"])
        if key is not None and bound.direct and not bound._checks():
            self._fast = self._direct[key] = _direct_call(bound)
        return bound.result()

    def plan(self, *args: Any, buffer: Any = None, eager: bool = False) -> KernelBound:
        """This call as an eagle BoundPlan (``Graph.add(kernel.plan(x, 2.0))``).

        Outputs are allocated (``buffer=``: an array, or a tree of arrays
        shaped like the return, to write them into instead).
        """
        api = f"hawk.kernel {self.__name__}"
        shape = _call_key(args)
        key = None if shape is None else (eager, *shape)
        known = self._checked.get(key) if key is not None else None
        if known is not None:
            signature, n, compiled = known
            arrays = list(args)
        else:
            signature, n, arrays = self._signature(args, api, eager=eager)
            compiled = self.compiled_for(signature)
            if key is not None and all(v is a for v, a in zip(arrays, args, strict=True)):
                self._checked[key] = (signature, n, compiled)
        return KernelBound.make(self, compiled, arrays, n, buffer, api)

    def reference(self, *args: Any) -> Any:
        """This call evaluated by the NumPy reference evaluator (what the C back end is tested
        against); Mutable arguments are written as a call would write them."""
        api = f"hawk.kernel {self.__name__}.reference"
        signature, n, arrays = self._signature(args, api, eager=True)
        ir = self.ir_of(signature)
        outputs = _outputs(ir, n, None, api)
        evaluate(ir, [*arrays, *outputs], n)
        return _tree(ir.result, outputs, len(ir.slots) - len(outputs))

    # --------------------------------------------------------- checking
    def _signature(self, args: tuple[Any, ...], api: str,
                   eager: bool = False) -> tuple[tuple[ArgSpec, ...], int, list[Any]]:
        if len(args) != len(self.params):
            names = ", ".join(n for n, _ in self.params)
            raise EagleTypeError(f"{api}: takes {len(self.params)} arguments ({names}), got {len(args)}")
        values = [_argument(name, kind, arg, api, eager) for (name, kind), arg in zip(self.params, args,
                                                                                       strict=True)]
        lengths = {name: a.shape[-1] for (name, kind), a in zip(self.params, values, strict=True)
                   if kind.role not in ("param", "table", "scatter")}
        # NumPy's broadcasting: a plane of one value goes with any length, 0 included (a rank's empty shard).
        n = max((length for length in lengths.values() if length != 1), default=1)
        specs = []
        for (name, kind), value in zip(self.params, values, strict=True):
            if kind.role == "param":
                specs.append(ArgSpec(_value_dtype(name, kind, value, api)))
                continue
            if kind.role in ("table", "scatter"):
                specs.append(ArgSpec(of_numpy(value.dtype), table=tuple(int(d) for d in value.shape)))
                continue
            cell = value.ndim == 1 and value.shape[0] == 1 and n != 1
            if not cell and value.shape[-1] != n:
                shown = ", ".join(f"{k}: {v}" for k, v in lengths.items())
                raise EagleValueError(f"{api}: per-sample planes must have one length; got {shown} "
                                 f"({name!r} differs). A plane of one value is read as the same for "
                                 "every sample")
            components = int(np.prod(value.shape[:-1]))  # (k, n) or a matrix's (r, c, n)
            specs.append(ArgSpec(of_numpy(value.dtype), components, cell))
        return tuple(specs), n, values

    def compiled_for(self, signature: tuple[ArgSpec, ...], chosen: Chosen = SWITCH) -> Compiled:
        """The code of one signature and one choice of dispatch policies, compiled once."""
        key = signature if chosen == SWITCH else (signature, chosen)
        return self._compiled.get(key) or self._compile(signature, chosen=chosen)

    def _compile(self, signature: tuple[ArgSpec, ...], build: bool = True, chosen: Chosen = SWITCH) -> Any:
        ir = self.ir_of(signature, chosen)
        phased = split(ir, shared=self._shared_phases)
        prefix = f"hk_{self.__name__}"
        source = emit.source(ir, phased, prefix, "c")
        if not build:
            return source
        libm.load()  # the functions the library calls
        library = Library(compile_library(source, name=f"hawk_{self.__name__}"))
        compiled = Compiled(ir, phased, library,
                            [library.kernel(f"{prefix}_p{j}") for j in range(len(phased.phases))]
                            + ([library.kernel(f"{prefix}_s")] if phased.scatters else []), prefix,
                            signature, chosen)
        self._compiled[signature if chosen == SWITCH else (signature, chosen)] = compiled
        return compiled


def from_ir(ir: KernelIR, derivative: str | None = None) -> Kernel:
    """A kernel whose IR is ``ir``, made by a transform rather than read from Python (the vjp of a
    fused run): one parameter per slot that is not an output, each of its slot's dtype; a call
    whose arguments give another signature is refused.

    >>> from hawk.ir import KernelIR, Load, Op, Slot, Store, Var
    >>> from hawk.kernel import from_ir
    >>> x, y = Var("f64", False), Var("f64", False)
    >>> ir = KernelIR("twice", [Slot("x", "read", "f64"), Slot("out", "write", "f64")],
    ...               [Load(x, 0), Op(y, "add", (x, x)), Store(1, 0, y)], result=1)
    >>> from_ir(ir)(np.arange(3.0))
    array([0., 2., 4.])
    """
    params = [(s.name, Kind("param", None if s.dtype == "wf" else s.dtype) if s.role == "value"
               else Kind("table", s.dtype) if s.table is not None else Kind("in", s.dtype))
              for s in ir.slots if s.role != "write"]
    wanted = tuple(ArgSpec(s.dtype) if s.role == "value" else ArgSpec(s.dtype, table=s.table)
                   if s.table is not None else ArgSpec(s.dtype, s.components, s.cell)
                   for s in ir.slots if s.role != "write")

    def lower(signature: tuple[ArgSpec, ...]) -> KernelIR:
        if signature != wanted:
            raise EagleTypeError(f"hawk.kernel {ir.name}: made for arguments {wanted}, called with "
                                 f"{signature}")
        return ir

    return Kernel(ir.name, params, lower, derivative=derivative)


def _apart_from_tables(ir: KernelIR, arrays: Sequence[Any], api: str) -> None:
    """Refuse a launch that writes memory it also reads as a Table, or whose Scatter shares memory
    with another of its planes: every sample reads the whole Table (and may write any cell of a
    Scatter), so a sample's write would change what the others read (NumPy's bounds test: when
    in doubt, they overlap)."""
    for k, slot in enumerate(ir.slots):
        if slot.table is None or slot.role == "write":
            continue
        for j, other in enumerate(ir.slots):
            a, b = arrays[j], arrays[k]
            if j == k or not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or \
                    (other.role == "read" and slot.role == "read") or not np.may_share_memory(a, b):
                continue
            if slot.role == "read":
                raise EagleValueError(f"{api}: writes plane {other.name!r}, which it also reads whole as "
                                      "Table "
                                 f"{slot.name!r}: a sample's write would change what the other samples read; "
                                 "write a new array (a returned value, or another Mutable) and read "
                                 f"{slot.name!r} from the one before")
            raise EagleValueError(f"{api}: Scatter {slot.name!r} shares memory with plane {other.name!r}: "
                                  "its "
                             "cells are written after every sample ran; pass a Scatter array of its own")


def _plane_kind(slot: Slot) -> Kind:
    """The annotation of a plane like ``slot`` (a cotangent, a tangent): a Table's is a Table, a
    matrix's (r, c, n) plane is a matrix's."""
    if slot.table is not None:
        return Table
    return values.kind_of("mat", slot.shape) if slot.shape else Scalar


def _chosen(ir: KernelIR, names: frozenset[str] | None) -> set[int]:
    """The slots of ``ir`` named in ``names`` (every slot when None)."""
    return {k for k, s in enumerate(ir.slots) if names is None or s.name in names}


def _argument(name: str, kind: Kind, arg: Any, api: str, eager: bool) -> Any:
    """Check one argument; a plane comes back as an ndarray or a device array (an array of another
    library as the one over its memory; read planes made contiguous when eager)."""
    if kind.role == "param":
        if isinstance(arg, np.ndarray) and arg.size == 1:
            arg = arg.reshape(-1)[0]
        if not isinstance(arg, (int, float, bool, np.number, np.bool_)):
            raise EagleTypeError(f"{api}: parameter {name!r} is a Param (one number for all samples); "
                            f"got {type(arg).__name__}")
        return arg
    if not extend.is_plane(arg):
        what = "a Table" if kind.role in ("table", "scatter") else "a per-sample plane"
        raise EagleTypeError(f"{api}: parameter {name!r} is {what}; pass a NumPy array, got "
                             f"{type(arg).__name__}")
    arg = extend.as_plane(arg, api, f"parameter {name!r}")
    device = extend.on_device(arg)
    if kind.role in ("table", "scatter"):
        return _table(name, kind, arg, api, eager, device)
    if device and eager:
        raise EagleTypeError(f"{api}: parameter {name!r} is a device array; a call runs on NumPy "
                        "arrays (device arrays run inside a GPU graph)")
    if isinstance(kind, ValueKind):
        check_plane(name, kind, arg, api)
    elif arg.ndim not in (1, 2):
        raise EagleValueError(f"{api}: parameter {name!r} has shape {arg.shape}; a plane is (n,) or, with "
                         "k values per sample, (k, n) (a matrix, (r, c, n), is annotated hawk.mat33 ...)")
    wanted = kind.dtype
    if wanted is None and arg.dtype not in (np.float64, np.float32):
        raise EagleTypeError(f"{api}: parameter {name!r} is a Scalar (a float32 or float64 plane); got "
                        f"{arg.dtype}: pass x.astype(np.float64), or annotate it Int32/UInt32")
    if wanted is not None and arg.dtype != NUMPY[wanted]:
        raise EagleTypeError(f"{api}: parameter {name!r} is {kind!r} ({np.dtype(NUMPY[wanted])}); got "
                        f"{arg.dtype}: pass an array of that dtype")
    if not extend.contiguous(arg):
        if kind.role == "mutable":
            raise EagleValueError(f"{api}: parameter {name!r} is written in place but is not contiguous; "
                             "pass a contiguous array (np.ascontiguousarray) and read it back")
        if device:
            raise EagleValueError(f"{api}: parameter {name!r} is a strided device array; a GPU kernel reads "
                             "contiguous planes: pass a contiguous one (cupy.ascontiguousarray)")
        if eager:
            arg = np.ascontiguousarray(arg)
    if kind.role == "mutable":
        extend.refuse_write(arg, f"{api}: parameter {name!r}", "is written in place")
    return arg


def _table(name: str, kind: Kind, arg: Any, api: str, eager: bool, device: bool) -> Any:
    """Check a Table (or Scatter) argument: an array of any shape with a cell on every axis, of
    the dtype the annotation says (a float one for ``Table``), contiguous."""
    if device and eager:
        raise EagleTypeError(f"{api}: Table {name!r} is a device array; a call runs on NumPy arrays (device "
                        "arrays run inside a GPU graph)")
    if arg.ndim == 0 or 0 in arg.shape:
        raise EagleValueError(f"{api}: Table {name!r} has shape {arg.shape}; a Table has at least one cell "
                              "on "
                         "each of at least one axis")
    if kind.dtype is None and arg.dtype not in (np.float64, np.float32):
        raise EagleTypeError(f"{api}: Table {name!r} is a float Table (float32 or float64); got {arg.dtype}: "
                        "pass x.astype(np.float64), or annotate it Table[Int32]")
    if kind.dtype is not None and arg.dtype != NUMPY[kind.dtype]:
        raise EagleTypeError(f"{api}: Table {name!r} is {kind!r} ({np.dtype(NUMPY[kind.dtype])}); got "
                        f"{arg.dtype}: pass an array of that dtype")
    if not extend.contiguous(arg):
        if not eager or device or kind.role == "scatter":
            raise EagleValueError(f"{api}: {kind!r} {name!r} is not contiguous; pass a contiguous array "
                             "(np.ascontiguousarray)")
        arg = np.ascontiguousarray(arg)
    if kind.role == "scatter":
        extend.refuse_write(arg, f"{api}: Scatter {name!r}")
    return arg


def _value_dtype(name: str, kind: Kind, value: Any, api: str) -> str:
    if kind.dtype is not None:
        if isinstance(value, (float, np.floating)) and kind.dtype not in ("f32", "f64"):
            raise EagleTypeError(f"{api}: parameter {name!r} is {kind!r}; got the float {value!r}")
        return kind.dtype
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, np.number):
        return of_numpy(value.dtype)
    return "wf" if isinstance(value, float) else "wi"


class KernelPlan(Plan):
    """An eagle Plan for one compiled signature of a hawk kernel.

    >>> from hawk import Scalar
    >>> @hawk.kernel
    ... def inc(x: Scalar) -> Scalar:
    ...     return x + 1.0
    >>> plan = inc.plan(np.zeros(4)).plan
    >>> type(plan).__name__, plan.name, plan.per_sample
    ('KernelPlan', 'inc', True)
    """

    def __init__(self, kernel: Kernel, compiled: Compiled) -> None:
        final = compiled.functions[len(compiled.phased.phases) - 1]
        super().__init__(final, runs.plan_params(compiled.phased.slots),
                         name=kernel.__name__, per_sample=compiled.ir.per_sample, owner=compiled.library,
                         derivative=kernel.derivative, own_writes=compiled.ir.own_writes)
        self.compiled = compiled
        self.source = kernel  # the hawk Kernel (eagle.diff takes its vjp)

    @functools.cached_property
    def depends(self) -> dict[str, frozenset[str]]:
        """Each output or Mutable written -> the float arguments its value carries a derivative
        of (:func:`hawk.derive.dependencies`)."""
        slots = self.compiled.ir.slots
        return {slots[out].name: frozenset(slots[k].name for k in ins)
                for out, ins in derive.dependencies(self.compiled.ir).items()}


class KernelBound(BoundPlan):
    """A hawk kernel bound to its arrays: the user's, its outputs and its scratch.

    ``kernel.plan(*args)`` makes one; :meth:`eagle.Graph.add` records it.

    >>> from hawk import Scalar
    >>> @hawk.kernel
    ... def inc(x: Scalar) -> Scalar:
    ...     return x + 1.0
    >>> bound = inc.plan(np.arange(3.0))
    >>> g = eagle.Graph().add(bound, name="inc").build().launch()
    >>> bound.outputs
    [array([1., 2., 3.])]

    Consecutive launches of a built graph fuse into one function (``g.fused``), checked Table
    reads and Scatters too; after the run, the first launch that went wrong raises its own error:

    >>> from hawk import Table
    >>> @hawk.kernel
    ... def right(x: Scalar, t: Table) -> Scalar:
    ...     return x * t[hawk.sample() + 1]
    >>> g = eagle.Graph().add(bound, name="inc").add(right.plan(bound.outputs[0], np.ones(3)),
    ...                                              name="right").build()
    >>> g.fused
    [('inc', 'right')]
    >>> g.launch()
    Traceback (most recent call last):
    eagle.errors.IndexError: hawk.kernel right: sample 2 read Table 't' (shape (3,)) at index 3 on axis 0, ...
    """

    #: what a group run "segmented" adds to the launch (:mod:`hawk.segments`); None: not split
    split: segments.SplitLaunch | None = None

    @classmethod
    def make(cls, kernel: Kernel, compiled: Compiled, arrays: list[Any], n: int, buffer: Any,
             api: str, skip: Any = None) -> KernelBound:
        slots = compiled.phased.slots
        device = next((a for a in arrays if extend.on_device(a)), None)
        outputs = _outputs(compiled.ir, n, buffer, api, device)
        _apart_from_tables(compiled.ir, [*arrays, *outputs], api)
        scratch = runs.scratch(slots[len(arrays) + len(outputs):], n, device)
        held = kernel._plans.get(id(compiled))
        if held is None:
            held = kernel._plans[id(compiled)] = (compiled, KernelPlan(kernel, compiled))
        self = cls(held[1], [*arrays, *outputs, *scratch, n])
        self.outputs = outputs
        if segments.split_group(compiled.ir, compiled.chosen) is not None:
            segments.refuse(compiled.ir, compiled.chosen, bool(self._checks()), api)
            self.split = segments.SplitLaunch.make(kernel, compiled, self.args, n, skip, api)
        return self

    def _plane_args(self) -> list[tuple[str, Any, str]]:
        """The planes the graph sees: the arguments and the outputs (scratch is the node's own),
        and a split launch's skip plane."""
        skip = [] if self.split is None or self.split.skip is None else [("skip", self.split.skip, "read")]
        return [t for t in super()._plane_args() if not t[0].startswith("_")] + skip

    def _samples(self) -> int:
        return int(self.args[-1])

    def rebuilt(self, swap: Any) -> KernelBound:
        new = super().rebuilt(swap)
        new.outputs = [swap(a) for a in self.outputs]  # what the call returned, re-pointed alike
        if self.split is not None:
            skip = self.split.skip
            new.split = dataclasses.replace(self.split, selector=swap(self.split.selector),
                                            skip=None if skip is None else swap(skip))
        return new

    def emit(self, program: Any) -> None:
        compiled = self.plan.compiled
        args = self.args
        if self.split is not None:  # refused with checked reads: nothing to check after it
            self.split.emit(program, self.slots(), [(args[k], role) for k, role in compiled.plane_roles],
                            self.samples)
            return
        runs.emit_phases(program, compiled.phased, compiled.functions, self.slots(), args, self.samples,
                         [(args[k], role) for k, role in compiled.plane_roles], self.plan.per_sample)
        cells = self._checks()
        if cells:  # checked Table reads, placing Scatters: raise in the launch that went wrong
            program.callback(lambda: tables.check(compiled.ir, cells, f"hawk.kernel {self.plan.name}"),
                             touches=list(cells.values()))

    @property
    def native(self) -> bool:
        """Only native calls: nothing checked after the launch (a Python step)."""
        return not self._checks()

    def _checks(self) -> dict[str, Any]:
        """The check cells of a launch (:data:`hawk.tables.BOUNDS`, :data:`hawk.tables.PLACES`)."""
        return tables.check_cells(self.plan.compiled.phased.slots, self.args)

    def fusible(self, target: str) -> extend.Fusible | None:
        """This launch as a member of a fused run (:mod:`hawk.runs`); a split one runs alone."""
        return None if self.split is not None else runs.fusible(self, target)

    def whole_reads(self) -> list[Any]:
        """The Tables it reads: every other plane is read one value per sample, split or not (a
        split launch reads sample ``index[j]``'s own values)."""
        read = {id(a) for _, a, role in self.planes() if role == "read"}
        return [a for a, s in zip(self.args, self.plan.compiled.ir.slots, strict=False)
                if s.table is not None and id(a) in read]

    def position_dependent(self) -> bool:
        """The kernel reads its sample's index: ``hawk.sample()``, a grid index, or a draw keyed by
        the default ``sample=`` (the sample's position).  A draw keyed by an id plane
        (``hawk.random.uniform(seed, counter, sample=pid)``) is not."""
        return any(isinstance(s, Op) and s.op == "sample" for s in walk(self.plan.compiled.ir.body))

    def gpu_items(self) -> GpuItems:
        """The launch in a CUDA graph: each phase a grid-stride kernel compiled by NVRTC, and
        eagle's fixed-order reduction of the operand plane between phases."""
        return GpuItems(self._emit_gpu, fuse=self.fusible("gpu"))

    def _emit_gpu(self, gpu: Any) -> None:
        compiled = self.plan.compiled
        if self.split is not None:  # refused with checked reads: nothing to check after it
            self.split.emit_gpu(gpu, runs.typed_args(compiled.phased.slots, self.args), self.samples)
            return
        source = emit.source(compiled.ir, compiled.phased, compiled.prefix, "cuda")
        runs.emit_gpu_phases(gpu, source, compiled.phased, compiled.prefix, self.args, self.samples)
        cells = self._checks()
        if cells:  # checked Table reads, placing Scatters: raised by the wait of the launch that went wrong
            api = f"hawk.kernel {self.plan.name}"
            checks.on_gpu(gpu, cells, lambda found: tables.check(compiled.ir, found, api))

    def reference(self, interpreter: Any) -> None:
        """This launch by hawk's NumPy evaluator of the IR, over the samples a replay processes
        (eagle.testing.interpret: what the compiled phases are held to)."""
        ir = self.plan.compiled.ir
        n = interpreter.samples(self.samples)
        # the planes cut to the samples that run; a Table (or Scatter) is read and written whole
        args = [a[..., :n] if isinstance(a, np.ndarray) and a.shape[-1] == self.samples and not s.cell
                and s.table is None else a for a, s in zip(self.args, ir.slots, strict=False)]
        skip = None if self.split is None or self.split.skip is None else self.split.skip[:n] != 0
        # a split launch leaves the samples skip marks as they were
        written = [] if skip is None else \
            [a for a, s in zip(args, ir.slots, strict=False) if s.role in ("write", "readwrite")]
        kept = [a[..., skip].copy() for a in written]
        evaluate(ir, args, n)
        for a, old in zip(written, kept, strict=True):
            a[..., skip] = old

    @property
    def direct(self) -> bool:
        """One phase over one block: a plain call on this thread does it all."""
        return len(self.plan.compiled.functions) == 1 and self.samples <= extend.BLOCK and self.split is None

    def run(self) -> None:
        """Run now: a direct call when that does it all, else a libeagle program."""
        self.refuse_overlap(f"hawk.kernel {self.plan.name}")
        if not self.direct:
            self.launch()
            return
        slots = self.plan.compiled.phased.slots
        self.plan.compiled.direct_fn()(self.samples, *(ffi.from_buffer(a) if s.role != "value" else a
                                                      for a, s in zip(self.args, slots, strict=False)))
        tables.check(self.plan.compiled.ir, self._checks(), f"hawk.kernel {self.plan.name}")

    def dispatch_groups(self) -> dict[str, DispatchGroup]:
        """The dispatch groups its kernel declares (``match hawk.dispatch(...)``), by name, each with
        its author's policy and the plane its selector is read from.

        >>> from hawk import Int32, Scalar
        >>> @hawk.kernel
        ... def pick(x: Scalar, m: Int32) -> Scalar:
        ...     y = x
        ...     match hawk.dispatch(m, "arm"):
        ...         case 0:
        ...             y = x + 1.0
        ...         case _:
        ...             y = x * 3.0
        ...     return y
        >>> bound = pick.plan(np.ones(3), np.array([0, 1, 0], np.int32))
        >>> group = bound.dispatch_groups()["arm"]
        >>> group.policy, group.arms, group.selector, group.running
        ('auto', (0, None), array([0, 1, 0], dtype=int32), 'switch')
        >>> g = eagle.Graph().add(bound.with_dispatch({"arm": "predicated"})).build().launch()
        >>> bound.outputs[0]
        array([2., 3., 2.])
        """
        compiled = self.plan.compiled
        planes = [None if g.selector is None else self.args[g.selector] for g in compiled.ir.groups]
        return {g.name: DispatchGroup(g.name, g.policy, g.arms, plane, compiled.chosen.policy(g))
                for g, plane in zip(compiled.ir.groups, planes, strict=True)}

    def with_dispatch(self, policies: Mapping[str, str], *, skip: Any = None) -> KernelBound:
        """This launch with the "auto" groups ``policies`` names run by those policies ({group:
        policy}; the others as they run now, a group the author gave a policy as the author
        said), writing the same outputs: each choice is its own code, compiled once."""
        super().with_dispatch(policies, skip=skip)  # a name that is no group is refused there
        compiled = self.plan.compiled
        who = f"eagle.plan.BoundPlan.with_dispatch: plan {self.plan.name!r}"
        chosen = choose(compiled.ir.groups, dict(policies), compiled.chosen, who)
        if chosen == compiled.chosen and (skip is None or self.split is None):
            return self  # skip= changes nothing where no group is split (the caller masks)
        kernel = self.plan.source
        arrays = self.args[:len(compiled.ir.slots) - len(self.outputs)]
        return type(self).make(kernel, kernel.compiled_for(compiled.signature, chosen), arrays, self.samples,
                               self.outputs or None, who, skip=skip)

    def result(self) -> Any:
        """The output arrays in the shape of the kernel's return (None without one)."""
        ir = self.plan.compiled.ir
        return _tree(ir.result, self.outputs, len(ir.slots) - len(self.outputs))


_MISS = object()


def _miss(*args: Any) -> Any:
    return _MISS


#: The number types a call shape names by type alone: what the checks of a value depend on.
_NUMBERS = (int, float, bool, np.number, np.bool_)


def _call_key(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """Everything the checks of a call depend on; None when an argument is neither a NumPy
    array nor a number (a device array, a subclass: always checked in full)."""
    key = []
    for a in args:
        if type(a) is np.ndarray:
            flags = a.flags
            key.append((a.dtype, a.shape, flags.c_contiguous, flags.writeable))
        elif isinstance(a, _NUMBERS):
            key.append(type(a))
        else:
            return None
    return tuple(key)


def _direct_call(bound: KernelBound) -> Callable[..., Any]:
    """A checked call shape, replayed without the full checks: new outputs, one native call.

    The replay is a small function written for this shape (as dataclasses
    write their __init__): it checks only that the arguments still have the
    shape it was written for (else it answers _MISS and the call takes the
    checked path), so a call costs about what a ufunc call does.
    """
    compiled = bound.plan.compiled
    slots = compiled.phased.slots
    first_output = len(slots) - len(bound.outputs)
    names = [f"a{k}" if k < first_output else f"o{k - first_output}" for k in range(len(slots))]
    scope: dict[str, Any] = {"fn": compiled.direct_fn(), "fb": ffi.from_buffer, "empty": np.empty,
                             "nd": np.ndarray, "MISS": _MISS, "msm": np.may_share_memory}
    same = []
    for k, (arg, slot) in enumerate(zip(bound.args[:first_output], slots, strict=False)):
        scope[f"t{k}"] = type(arg) if slot.role == "value" else arg.dtype
        if slot.role == "value":
            same.append(f"type(a{k}) is t{k}")
            continue
        same.append(f"type(a{k}) is nd and a{k}.dtype is t{k} and a{k}.shape == {arg.shape!r} "
                    f"and a{k}.flags.c_contiguous"
                    + (f" and a{k}.flags.writeable" if slot.role != "read" else ""))
    same += _apart(bound, slots[:first_output])
    passed = ", ".join(n if s.role == "value" else f"fb({n})" for n, s in zip(names, slots, strict=True))
    allocate = "".join(f"    o{j} = empty({a.shape!r}, {a.dtype.str!r})\n"
                       for j, a in enumerate(bound.outputs))
    code = (f"def call(*args):\n"
            f"    if len(args) != {first_output}:\n        return MISS\n"
            f"    {''.join(f'{n}, ' for n in names[:first_output])}= args\n"
            f"    if not ({' and '.join(same) or 'True'}):\n        return MISS\n{allocate}"
            f"    fn({bound.samples}, {passed})\n"
            f"    return {_tree_source(compiled.ir.result, first_output)}\n")
    exec(compile(code, f"<hawk {compiled.prefix} direct call>", "exec"), scope)
    return scope["call"]


def _apart(bound: KernelBound, slots: Sequence[Any]) -> list[str]:
    """Conditions of a direct call: a written argument and another plane argument are two arrays
    that each own their memory (two flag reads), or share no bytes' range (NumPy's bounds test),
    or are that very object in a per-sample kernel.  Anything else takes the checked path, which
    refuses a partial overlap."""
    planes = [k for k, s in enumerate(slots) if s.role != "value"]
    pairs = [(k, j) for i, k in enumerate(planes) for j in planes[i + 1:]
             if (slots[k].role, slots[j].role) != ("read", "read")]
    same = "a{k} is a{j} or " if bound.plan.per_sample else ""
    return [(f"(a{k} is not a{j} and a{k}.flags.owndata and a{j}.flags.owndata or "
             + same.format(k=k, j=j) + f"not msm(a{k}, a{j}))") for k, j in pairs]


def _tree_source(shape: Any, first: int) -> str:
    """Python source building the result tree from output names o0, o1, …"""
    if shape is None:
        return "None"
    if isinstance(shape, dict):
        return "{" + ", ".join(f"{k!r}: {_tree_source(v, first)}" for k, v in shape.items()) + "}"
    if isinstance(shape, tuple):
        return "(" + "".join(f"{_tree_source(v, first)}, " for v in shape) + ")"
    if isinstance(shape, list):
        return "[" + ", ".join(_tree_source(v, first) for v in shape) + "]"
    return f"o{shape - first}"


def _outputs(ir: KernelIR, n: int, buffer: Any, api: str, device: Any = None) -> list[Any]:
    """The kernel's output arrays: given by ``buffer=``, else new, beside ``device`` (a device
    array of the call) when there is one."""
    specs = [s for s in ir.slots if s.role == "write"]  # the outputs come last
    given = leaves(buffer) if buffer is not None else [None] * len(specs)
    if len(given) != len(specs):
        raise EagleValueError(f"{api}: buffer= gives {len(given)} arrays for {len(specs)} outputs")
    out = []
    for spec, array in zip(specs, given, strict=True):
        if array is not None:
            array = extend.as_plane(array, api, f"buffer= for output {spec.name!r}", writes=True)
        shape = spec.table if spec.table is not None else (1,) if spec.cell else \
            (*spec.shape, n) if spec.shape else \
            (spec.components, n) if spec.components > 1 else (n,)
        dtype = NUMPY[spec.dtype]
        if array is None:
            array = (np.empty(shape, dtype) if device is None
                     else extend.empty_like_device(device, shape, dtype))
        elif (extend.on_device(array) != (device is not None) or tuple(array.shape) != shape
              or array.dtype != dtype or not extend.contiguous(array)):
            where = "" if device is None else "device "
            raise EagleValueError(f"{api}: buffer= for output {spec.name!r} must be a contiguous "
                             f"{np.dtype(dtype)} {where}array of shape {shape}")
        out.append(array)
    return out


def _tree(shape: Any, outputs: list[np.ndarray], first: int) -> Any:
    """The result tree ``shape`` (output slot numbers as leaves) holding the outputs."""
    if shape is None:  # a kernel that returns nothing (in place): most recorded calls
        return None
    slots = leaves(shape)  # a leaf of None stays None
    return extend.unflatten(shape, (None if slot is None else outputs[slot - first] for slot in slots))
