"""Plans: a native per-sample kernel with the roles of its parameters.

A Plan comes from any symbol of type ``eagle_kernel_fn`` (``eagle.h``): a
kernel compiled by hawk, by a test, or exported by a plugin's own shared
library.  ``plan.bind(...)`` fixes its arguments and gives a BoundPlan,
which ``Graph.add`` records as a node.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eagle._edges import same_view
from eagle._errors import EagleTypeError, EagleValueError
from eagle._flows import KernelFlow
from eagle._foreign import as_plane, refuse_write
from eagle._kinds import Fusible, GpuItems, HostItems, PlaneTuple, register_node_kind
from eagle._pictures import BoxPicture
from eagle._program import Program
from eagle._slots import typed_slot
from eagle._views import overlap
from eagle.native import Library

#: Parameter roles: planes by pointer (read, write, readwrite), scalars by value.
ROLES = ("read", "write", "readwrite", "value")
#: How a by-value parameter is stored in its eagle_arg slot.
VALUE_TYPES = ("f64", "f32", "i64", "i32", "u32", "u64")
#: How a dispatch group's arms run: one kernel with a per-sample branch, every arm computed and
#: the result selected, one kernel per arm over its samples, or chosen by eagle.
DISPATCH_POLICIES = ("switch", "predicated", "segmented", "auto")


@dataclass(frozen=True)
class Param:
    """One kernel parameter: its name, role and (for a value) slot type.

    A :class:`Plan` takes these, or plain ``(name, role[, type])`` tuples.

    >>> from eagle.plan import Param
    >>> Param("x", "readwrite"), Param("c", "value", "f32")
    (Param(name='x', role='readwrite', type='f64'), Param(name='c', role='value', type='f32'))
    """

    name: str
    role: str
    type: str = "f64"


@dataclass(frozen=True)
class DispatchGroup:
    """A dispatch group a kernel declares: a per-sample ``match`` over a selector.

    :param name: the group's name, unique in its kernel.
    :param policy: the author's policy, one of :data:`DISPATCH_POLICIES` (``"auto"`` included).
    :param arms: the case values in order: an int, a tuple for ``case 1 | 2``, None for ``case _``.
    :param selector: the plane (the bound array) the selector is read from, or None when the
        kernel computes it (then only ``"switch"`` and ``"predicated"`` can run it).
    :param running: the policy this launch runs the group by now (``"auto"`` groups run
        ``"switch"`` until :meth:`BoundPlan.with_dispatch` chooses); None: not known.

    >>> from eagle.plan import DispatchGroup
    >>> DispatchGroup("material", "auto", (0, (1, 2), None), None, "switch")
    DispatchGroup(name='material', policy='auto', arms=(0, (1, 2), None), selector=None, running='switch')
    """

    name: str
    policy: str
    arms: tuple[int | tuple[int, ...] | None, ...]
    selector: Any = field(default=None, compare=False)
    running: str | None = None


def _param(spec: Param | tuple[str, ...]) -> Param:
    param = spec if isinstance(spec, Param) else Param(*spec)
    if param.role not in ROLES or param.type not in VALUE_TYPES:
        raise EagleValueError(f"eagle.plan.Plan: parameter {param.name!r} has role {param.role!r} and type "
                         f"{param.type!r}; roles are {ROLES}, value types {VALUE_TYPES}")
    return param


class Plan:
    """A native per-sample kernel and the roles of its parameters.

    :param kernel: an ``eagle_kernel_fn`` function pointer (cffi cdata).
    :param params: ``Param`` or ``(name, role[, type])`` per argument slot, in order.
    :param name: the label nodes get by default.
    :param per_sample: the kernel reads and writes only its own sample, so a
        chain of such kernels may be block-fused.
    :param derivative: ``"vjp"`` or ``"jvp"`` for a derivative kernel, which
        enters a graph only through eagle.diff.
    :param own_writes: the kernel writes only its own sample and reduces nothing, though it may
        read other samples (a Table, whole): a per-sample mask of its writes covers it, as
        ``eagle.until_done`` masks a plan.  Default: ``per_sample``.

    >>> from eagle.native import Library, compile_library
    >>> from eagle.plan import Plan
    >>> source = '''
    ... #include "eagle/eagle.h"
    ... void scale(int64_t b, int64_t e, const eagle_arg *a)
    ... { double *x = a[0].ptr, c = a[1].f64; for (int64_t i = b; i < e; ++i) x[i] *= c; }
    ... '''
    >>> lib = Library(compile_library(source, name="doc_scale"))
    >>> scale = Plan(lib.kernel("scale"), [("x", "readwrite"), ("c", "value")], name="scale")
    >>> x = np.arange(4.0)
    >>> g = eagle.Graph().add(scale.bind(x, 3.0)).add(scale.bind(x, 0.5)).build().launch()
    >>> x
    array([0. , 1.5, 3. , 4.5])
    """

    def __init__(self, kernel: Any, params: Sequence[Param | tuple[str, ...]], *, name: str = "plan",
                 per_sample: bool = True, owner: object = None, derivative: str | None = None,
                 own_writes: bool | None = None) -> None:
        self.kernel = kernel
        self.params = tuple(_param(p) for p in params)
        self.name = name
        self.per_sample = per_sample
        self.own_writes = per_sample if own_writes is None else own_writes
        self.derivative = derivative
        self._owner = owner  # keeps the shared library loaded

    @classmethod
    def from_library(cls, library: Library | str | os.PathLike[str], symbol: str,
                     params: Sequence[Param | tuple[str, ...]], **kwargs: Any) -> Plan:
        """The kernel ``symbol`` of a shared library (a path or a loaded Library)."""
        lib = library if isinstance(library, Library) else Library(library)
        kwargs.setdefault("name", symbol)
        return cls(lib.kernel(symbol), params, owner=lib, **kwargs)

    def bind(self, *args: Any, **kwargs: Any) -> BoundPlan:
        """Fix the arguments, by position or by parameter name."""
        names = [p.name for p in self.params]
        if len(args) > len(names):
            raise EagleTypeError(f"eagle.plan.Plan.bind: {self.name} takes {len(names)} arguments "
                            f"({', '.join(names)}), got {len(args)}")
        values = dict(zip(names, args, strict=False))  # fewer args than names: the rest by keyword
        for key, value in kwargs.items():
            if key not in names:
                raise EagleTypeError(f"eagle.plan.Plan.bind: {self.name} has no parameter {key!r}; "
                                f"its parameters are {', '.join(names)}")
            if key in values:
                raise EagleTypeError(f"eagle.plan.Plan.bind: {self.name} got {key!r} twice")
            values[key] = value
        missing = [n for n in names if n not in values]
        if missing:
            raise EagleTypeError(f"eagle.plan.Plan.bind: {self.name} is missing {', '.join(missing)}")
        return BoundPlan(self, [values[n] for n in names])

    def __repr__(self) -> str:
        return f"<eagle.plan.Plan {self.name}({', '.join(f'{p.name}: {p.role}' for p in self.params)})>"


#: A launch's planes worked out from its args: (args, the planes, those read (readwrite too), those
#: only written); tuples, which the collector stops tracking (a graph holds thousands of launches).
_Split = tuple[list[Any], tuple[PlaneTuple, ...], tuple[PlaneTuple, ...], tuple[PlaneTuple, ...]]


class BoundPlan:
    """A Plan with its arguments: what ``Graph.add`` records.

    >>> from eagle.native import Library, compile_library
    >>> from eagle.plan import Plan
    >>> source = '''
    ... #include "eagle/eagle.h"
    ... void scale(int64_t b, int64_t e, const eagle_arg *a)
    ... { double *x = a[0].ptr, c = a[1].f64; for (int64_t i = b; i < e; ++i) x[i] *= c; }
    ... '''
    >>> lib = Library(compile_library(source, name="doc_scale"))
    >>> scale = Plan(lib.kernel("scale"), [("x", "readwrite"), ("c", "value")], name="scale")
    >>> bound = scale.bind(np.ones(3), c=2.0)     # by position or by parameter name
    >>> [(name, role) for name, _, role in bound.planes()]
    [('x', 'readwrite')]
    """

    #: its host items are native kernel calls only (no Python step), so they may run in a
    #: ``branch_tasks`` stage
    native = True

    def __init__(self, plan: Plan, args: list[Any]) -> None:
        self.plan = plan
        self._planes: _Split | None = None
        for param, arg in zip(plan.params, args, strict=True):
            if param.role == "value" and not isinstance(arg, (int, float, np.number)):
                raise EagleTypeError(f"eagle.plan.Plan.bind: {plan.name} parameter {param.name!r} is a "
                                     "value; "
                                f"got {type(arg).__name__}")
        # A plane is passed by pointer: as an ndarray over its memory (a kernel slot takes those)
        # or a device array; an ndarray already is one (the common case, not worth the message's
        # formatting).  Its writability is refuse()'s, at add and bind.
        self.args = [arg if p.role == "value" or type(arg) is np.ndarray else
                     as_plane(arg, "eagle.plan.Plan.bind",
                              f"{plan.name} parameter {p.name!r} ({p.role})")
                     for p, arg in zip(plan.params, args, strict=True)]
        self.samples = self._samples()

    def _samples(self) -> int:
        # A per-sample plane holds one value per sample along its last axis.
        planes = self.planes()
        if not planes:
            return 1
        return max(int(np.shape(a)[-1]) if np.ndim(a) else 1 for _, a, _ in planes)

    def planes(self) -> list[PlaneTuple]:
        """(parameter name, array, role) for every plane parameter."""
        return list(self._split()[1])

    def reads(self) -> list[PlaneTuple]:
        """The planes it reads (``read`` and ``readwrite``), as :meth:`planes` gives them."""
        return list(self._split()[2])

    def writes(self) -> list[PlaneTuple]:
        """The planes it only writes."""
        return list(self._split()[3])

    def _split(self) -> _Split:
        # Asked for by every check and pass (the node kind's reads and writes at each add and
        # build): worked out again only when ``args`` is replaced (a bind gives the launch a new list).
        if self._planes is None or self._planes[0] is not self.args:
            planes = tuple(self._plane_args())
            self._planes = (self.args, planes, tuple(t for t in planes if t[2] in ("read", "readwrite")),
                            tuple(t for t in planes if t[2] == "write"))
        return self._planes

    def _plane_args(self) -> list[PlaneTuple]:
        """What :meth:`planes` returns, worked out from ``args``."""
        return [(p.name, a, p.role) for p, a in zip(self.plan.params, self.args, strict=True)
                if p.role != "value"]

    def slots(self) -> list[Any]:
        """The argument slots as ``Program.kernel`` takes them: arrays, and filled values."""
        return [arg if param.role != "value" else typed_slot(param.type, arg)
                for param, arg in zip(self.plan.params, self.args, strict=True)]

    def emit(self, program: Program) -> None:
        """Append this launch to a libeagle program."""
        program.kernel(self.plan.kernel, self.slots(), self.samples, per_sample=self.plan.per_sample,
                       accesses=[(a, role) for _, a, role in self.planes()])

    def fusible(self, target: str) -> Fusible | None:
        """This launch as a member of a fused run on ``target`` ("cpu" or "gpu"): a native (C)
        kernel's code is its own, so it runs alone (a kernel language that writes its IR
        fuses)."""
        return None

    def position_dependent(self) -> bool:
        """Whether a sample's result may depend on its position in the plane (its index), not only
        on its own values: then moving samples (``eagle.simulate``'s compaction) would change the
        bits.  A native (C) kernel is given the indices and eagle cannot see what it does with
        them, so: True (a kernel language that writes its IR tells)."""
        return True

    def whole_reads(self) -> list[Any] | None:
        """The planes it reads whole (any sample's value, a Table), not one value per sample: none
        for a per-sample plan; for another, what its fused form says, else None (eagle cannot
        tell: a caller takes every plane it reads, or refuses)."""
        if self.plan.per_sample:
            return []
        fuse = self.fusible("cpu")
        return None if fuse is None else list(fuse.whole())

    def gpu_items(self) -> GpuItems:
        """This launch in a CUDA graph: a plan of a native (C) kernel has none."""
        raise EagleValueError(f"eagle.Graph.build: plan {self.plan.name!r} has device planes, but its kernel "
                              "is "
                         "native C, which runs on the CPU only; use a @hawk.kernel (compiled for both) "
                         "or pass NumPy arrays")

    def refuse(self, who: str) -> None:
        """Refuse what this launch cannot run right; ``who`` starts the message (the API and
        the plan): a plane that would need a copy before each launch, a written plane that cannot
        be written (read-only, a JAX array, a tensor autograd tracks), and written memory that
        another plane of the launch partly shares."""
        planes = self.planes()
        self._refuse_copy_bound(who, planes)
        for name, array, role in planes:
            if role != "read":
                refuse_write(array, f"{who} plane {name!r}")
        self.refuse_overlap(who)

    def _refuse_copy_bound(self, who: str, planes: list[PlaneTuple]) -> None:
        n = self.samples
        for name, array, _ in planes:
            shape = np.shape(array)
            if len(shape) >= 2 and shape[0] == n and shape[-1] != n:
                raise EagleValueError(f"{who} plane {name!r} is sample-major {shape}: a plane holds one "
                                      "value per "
                                 f"sample along its last axis; pass a ({shape[-1]}, {n}) array "
                                 "(e.g. np.ascontiguousarray(a.T))")
            flags = getattr(array, "flags", None)
            if flags is not None and not flags["C_CONTIGUOUS"]:
                raise EagleValueError(f"{who} plane {name!r} is not contiguous and would need a copy before "
                                 "every launch; pass a contiguous array (np.ascontiguousarray)")

    def refuse_overlap(self, who: str) -> None:
        """A kernel's samples run in blocks on several threads: one that writes memory another of
        its planes reads elsewhere reads values that another block may already have written.
        Only the very same view, in a per-sample kernel (each sample reads its own value first),
        is safe.  libeagle's overlap test decides, as for the edges."""
        planes = self.planes()
        if len(planes) < 2:  # no pair to compare (most launches write the one plane they read)
            return
        planes = [t for t in planes if np.size(t[1])]
        for k, (name_a, a, role_a) in enumerate(planes):
            for name_b, b, role_b in planes[k + 1:]:
                if role_a == role_b == "read" or not overlap(a, b):
                    continue
                if self.plan.per_sample and same_view(a, b):
                    continue
                (writer, _), (other, other_role) = sorted([(name_a, role_a), (name_b, role_b)],
                                                          key=lambda t: t[1] == "read")
                does = "reads" if other_role == "read" else "also writes"
                how = (f"partly overlaps plane {other!r} it {does}" if not same_view(a, b) else
                       f"is plane {other!r} it {does}, and the kernel is not per-sample")
                raise EagleValueError(f"{who} writes plane {writer!r}, which {how}: its samples would read "
                                 "values other samples already wrote, which depends on the thread count; "
                                 "pass a copy of the one it reads (e.g. x[1:].copy())")

    def rebuilt(self, swap: Callable[[Any], Any]) -> BoundPlan:
        """This launch over swapped arrays (``swap(a)``: what replaces ``a``), all else shared."""
        new = copy.copy(self)
        new.args = [swap(a) for a in self.args]
        new._planes = None  # the copied split holds the old arrays: the buffer plan lets them go
        return new

    def dispatch_groups(self) -> dict[str, DispatchGroup]:
        """The dispatch groups its kernel declares, by name: a native kernel declares none."""
        return {}

    def with_dispatch(self, policies: Mapping[str, str], *, skip: Any = None) -> BoundPlan:
        """This launch with the ``"auto"`` groups named in ``policies`` run by those policies
        (the others as they run now; a group its author gave a policy keeps it); ``skip``, a
        per-sample plane, leaves out of a ``"segmented"`` group's arms the samples where it is
        non-zero.  A launch without groups is itself; a name that is not a group is refused."""
        groups = self.dispatch_groups()
        unknown = sorted(set(policies) - set(groups))
        if unknown:
            have = ", ".join(map(repr, groups)) or "none"
            raise EagleValueError(f"eagle.plan.BoundPlan.with_dispatch: plan {self.plan.name!r} has no "
                                  "dispatch "
                             f"group {', '.join(map(repr, unknown))}; its groups are {have}")
        return self

    def launch(self) -> None:
        """Run the kernel now, over all samples (a one-item libeagle program)."""
        self.refuse(f"eagle.plan.BoundPlan.launch: {self.plan.name}")
        program = Program().stage()
        self.emit(program)
        program.finalize().run()

    def reference(self, interpreter: Any) -> None:
        """What this launch means, for the reference interpreter: a native kernel is its own
        definition, run alone (a kernel language with a reference evaluator overrides this)."""
        interpreter.lowered(HostItems(self.emit, native=True))

    def __repr__(self) -> str:
        plural = "" if self.samples == 1 else "s"
        return f"<eagle.plan.BoundPlan {self.plan.name} over {self.samples} sample{plural}>"


def _refuse_node(bound: BoundPlan, api: str, label: str | None) -> None:
    label = label or bound.plan.name
    if bound.plan.derivative:
        raise EagleTypeError(f"{api}: {label!r} is a {bound.plan.derivative} (derivative) kernel; derivative "
                        "kernels enter a graph only through eagle.diff: record the forward graph with "
                        "record=True and call eagle.diff.reverse")
    bound.refuse(f"{api}: plan {label!r}")


register_node_kind(
    "plan",
    reads=lambda b: b.reads(),
    writes=lambda b: b.writes(),
    lower_cpu=lambda b: HostItems(b.emit, native=b.native, fuse=b.fusible("cpu")),
    lower_gpu=lambda b: b.gpu_items(),
    reference=lambda b, interpreter: b.reference(interpreter),
    refuse=_refuse_node,
    label=lambda b: b.plan.name,
    picture=lambda b: BoxPicture("kernel"),
    rebuild=lambda b, swap: b.rebuilt(swap),
    flow=KernelFlow,
    samples=lambda b: b.samples,
    dispatch_groups=lambda b: b.dispatch_groups(),
    with_dispatch=lambda b, policies: b.with_dispatch(policies),
)
