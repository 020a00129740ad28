"""``Graph.build(dispatch=...)``: the policy each dispatch group of a built graph runs by.

A kernel declares a dispatch group (hawk: ``match hawk.dispatch(sel, "g", policy=...)``); its
author's policy is kept, and ``dispatch=`` decides the ``"auto"`` ones: None keeps each launch as
it runs (``"switch"``, unless ``BoundPlan.with_dispatch`` chose), ``"switch"`` or ``"predicated"``
runs all of them so, a ``{group: policy}`` dict the ones it names (the others as None).
A built graph is one structure, so ``"segmented"`` (samples split among kernels as a
run goes) and ``"auto"`` (decided by measurement) are ``eagle.simulate``'s.  The nodes' kinds
say which groups they declare and give the node re-dispatched (``dispatch_groups`` and
``with_dispatch`` of :func:`eagle.graph.register_node_kind`); nodes inside bodies (an
``until_done``, a conditional) are found through ``Node.walk``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from eagle._errors import EagleValueError
from eagle._kinds import Node, kind_of

API = "eagle.Graph.build"
#: the policies a built graph can run by
BUILT = ("switch", "predicated")
#: every policy a group may name (eagle.plan.DISPATCH_POLICIES)
POLICIES = ("switch", "predicated", "segmented", "auto")


def _refuse_policy(shown: str, policy: object) -> None:
    if policy in ("segmented", "auto"):
        raise EagleValueError(f"{API}: dispatch={shown} splits kernels as a run goes; a built graph is one "
                         "structure: use 'switch' or 'predicated', or eagle.simulate(..., "
                         f"dispatch={policy!r})")
    if policy not in BUILT:
        raise EagleValueError(f"{API}: dispatch={shown} is not a policy; a built graph takes None, 'switch' "
                              "or "
                         "'predicated', or a {group: policy} dict of them")


def check(dispatch: object) -> None:
    """Refuse a ``dispatch=`` no built graph runs by (before anything is analysed)."""
    if dispatch is None:
        return
    if isinstance(dispatch, dict):
        for group, policy in dispatch.items():
            _refuse_policy(f"{{{group!r}: {policy!r}}}", policy)
        return
    _refuse_policy(repr(dispatch), dispatch)


def apply(nodes: Iterable[Node], dispatch: str | dict[str, str] | None
          ) -> tuple[dict[str, str], Callable[[], None]]:
    """Give every node with dispatch groups (its own bodies' nodes too) the policies ``dispatch``
    picks; the policy each group runs by, and an undo (a build that fails leaves the graph as
    it was)."""
    found = [(node, kind_of(node.kind)) for top in nodes for node in top.walk()]
    declared = [(node, kind, dict(kind.dispatch_groups(node.payload))) for node, kind in found
                if kind.dispatch_groups is not None]
    names = {name for _, _, groups in declared for name in groups}
    if isinstance(dispatch, dict):
        unknown = sorted(set(dispatch) - names)
        if unknown:
            have = f"its groups are {', '.join(map(repr, sorted(names)))}" if names else \
                "it declares no dispatch group"
            raise EagleValueError(f"{API}: dispatch names group {', '.join(map(repr, unknown))}, which no "
                             f"kernel of the graph declares; {have}")
    chosen: dict[str, tuple[str, Node]] = {}
    swaps = []
    for node, kind, groups in declared:
        # None keeps each plan as it runs (an "auto" group "switch", unless with_dispatch chose),
        # and so does a dict for the groups it does not name
        auto = [name for name, group in groups.items() if group.policy == "auto"]
        policies = {} if dispatch is None else {name: dispatch[name] for name in auto if name in dispatch} \
            if isinstance(dispatch, dict) else dict.fromkeys(auto, dispatch)
        for name, group in groups.items():
            policy = policies.get(name) or group.running or \
                (group.policy if group.policy != "auto" else "switch")
            first = chosen.setdefault(name, (policy, node))
            if first[0] != policy:
                raise EagleValueError(f"{API}: dispatch group {name!r} runs {first[0]!r} in node "
                                 f"{first[1].default_label()!r} but {policy!r} in node "
                                 f"{node.default_label()!r} (its author's policy); give the groups "
                                 "different names")
        if policies:
            swaps.append((node, node.payload, kind.with_dispatch(node.payload, policies)))
    for node, _, new in swaps:
        node.payload = new

    def undo() -> None:
        for node, old, _ in swaps:
            node.payload = old

    return {name: policy for name, (policy, _) in chosen.items()}, undo
