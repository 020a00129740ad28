"""The rewrite: a builder's ``if``, ``while``, ``for``, ``match``, ``break`` and
``continue`` become calls on the recorder; everything else is left alone.

Each construct becomes local functions for its arms or body, which reach
the function's own variables through ``nonlocal``, plus a getter and a
setter of the names the construct assigns (its *state*), so the recorder can
run an arm, restore the state, run the other arm and merge.  A Python
condition is decided by the recorder at once, with Python's semantics; a
device condition records both arms.  ``break``, ``continue`` and ``return``
inside a construct become returned signals that the call sites pass up.
``x = call(...)`` becomes ``x = rt.named("x", call(...))`` so nodes carry
the names of what they compute.

The rewritten code keeps the user's file name, lines and columns, so
tracebacks point at their code.  The rewrite runs once per code object; each
decorated function then gets its own function over that code, with its own
closure cells, globals and defaults, so two definitions of one nested
``def`` (a builder made inside a function) each see their own closure.
"""

from __future__ import annotations
import __future__

import ast
import builtins
import inspect
import types
from collections.abc import Callable
from typing import Any

from eagle.extend import EagleSyntaxError

RUNTIME = "__eagle_builder__"
_PREFIX = "__eagle_"
_SCOPE = f"{_PREFIX}scope"
_FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag

# id(original code) -> (original code, rewritten code); the original is kept, so its id is not reused.
# Keyed by identity: equal code objects from two files must not share a rewrite.
_cache: dict[int, tuple[types.CodeType, types.CodeType]] = {}


class RewriteError(EagleSyntaxError):
    """The builder cannot rewrite this function; the message says why and what to do."""


def rewritten(fn: Callable[..., Any], runtime: object) -> Callable[..., Any]:
    """``fn`` with its control flow rewritten onto ``runtime``: the rewritten code is cached per
    code object, the function around it made for this ``fn`` (its closure, globals, defaults)."""
    code = fn.__code__
    entry = _cache.get(id(code))
    if entry is None or entry[0] is not code:
        entry = _cache[id(code)] = (code, _rewrite(fn))
    cells = dict(zip(code.co_freevars, fn.__closure__ or (), strict=True))
    cells[RUNTIME] = types.CellType(runtime)
    new = entry[1]
    out = types.FunctionType(new, fn.__globals__, fn.__name__, fn.__defaults__,
                             tuple(cells[v] for v in new.co_freevars))
    out.__kwdefaults__, out.__annotations__ = fn.__kwdefaults__, dict(fn.__annotations__)
    out.__doc__, out.__qualname__, out.__module__ = fn.__doc__, fn.__qualname__, fn.__module__
    return out


def first_line(fn: Callable[..., Any]) -> int:
    """The first line of ``fn``'s source (its first decorator)."""
    return inspect.getsourcelines(fn)[1]


def _rewrite(fn: Callable[..., Any]) -> types.CodeType:
    """The code of ``fn`` rewritten, with ``RUNTIME`` and ``fn``'s free names as free names."""
    name = getattr(fn, "__qualname__", repr(fn))
    if fn.__name__ == "<lambda>":
        raise RewriteError(f"eagle.Graph.builder: {name}: a lambda cannot be a builder; write a def")
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as err:
        raise RewriteError(f"eagle.Graph.builder: {name}: its source is not available ({err}); the "
                           "builder rewrites a function from its source, so define it in a file (not in "
                           "exec() or an interactive prompt)") from None
    source = "".join(lines)
    indented = lines[0][:1] in (" ", "\t")
    if indented:  # keep the real columns: parse inside a dummy block instead of dedenting
        source = "if 1:\n" + source
    tree = ast.parse(source)
    func = tree.body[0].body[0] if indented else tree.body[0]
    if not isinstance(func, ast.FunctionDef):
        raise RewriteError(f"eagle.Graph.builder: {name}: decorate a plain `def` function")
    func.decorator_list = []
    _strip_signature(func.args)
    func.returns = None
    rewriter = _Rewriter(line_shift=1 if indented else 0)
    func.body = rewriter.function_body(func.body, func.args)
    factory = ast.FunctionDef(
        name=f"{_PREFIX}factory", args=_plain_args([RUNTIME, *fn.__code__.co_freevars]),
        body=[func, ast.Return(ast.Name(func.name, ast.Load()))], decorator_list=[], returns=None,
        **({"type_params": []} if "type_params" in ast.FunctionDef._fields else {}))
    module = ast.Module([factory], type_ignores=[])
    ast.fix_missing_locations(module)  # generated nodes take their parent's place ...
    ast.increment_lineno(module, first - (2 if indented else 1))  # ... then all move to the file's lines
    code = compile(module, fn.__code__.co_filename, "exec", flags=fn.__code__.co_flags & _FUTURE_FLAGS,
                   dont_inherit=True)
    scope: dict[str, Any] = {}
    exec(code, fn.__globals__, scope)
    return scope[f"{_PREFIX}factory"](None, *[None] * len(fn.__code__.co_freevars)).__code__


def _strip_signature(args: ast.arguments) -> None:
    """Defaults and annotations come from the original function, not from re-evaluating them."""
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None:
            arg.annotation = None
    args.defaults, args.kw_defaults = [], [None] * len(args.kwonlyargs)


def _plain_args(names: list[str]) -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in names], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])


def assigned_names(nodes: list[ast.stmt]) -> list[str]:
    """Names the statements bind, in order, not counting nested scopes or generated names."""
    found: dict[str, None] = {}

    class Visitor(ast.NodeVisitor):
        def visit_Name(self, node: ast.Name) -> None:
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                found[node.id] = None

        def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
            found[node.name] = None  # its body is another scope

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_ClassDef(self, node: ast.ClassDef) -> None:
            found[node.name] = None

        def visit_Lambda(self, node: ast.Lambda) -> None:
            pass

        def visit_ListComp(self, node: ast.AST) -> None:
            pass

        visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp

        def visit_alias(self, node: ast.alias) -> None:
            found[(node.asname or node.name).split(".")[0]] = None

        def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
            if node.name:
                found[node.name] = None
            self.generic_visit(node)

        def visit_MatchAs(self, node: ast.MatchAs) -> None:
            if node.name:
                found[node.name] = None
            self.generic_visit(node)

    for node in nodes:
        Visitor().visit(node)
    return [n for n in found if not n.startswith(_PREFIX)]


def _rt(attr: str) -> ast.Attribute:
    return ast.Attribute(ast.Name(RUNTIME, ast.Load()), attr, ast.Load())


def _call(attr: str, *args: ast.expr) -> ast.Call:
    return ast.Call(_rt(attr), list(args), [])


def _def(name: str, params: list[str], body: list[ast.stmt], state: list[str]) -> ast.FunctionDef:
    head: list[ast.stmt] = [ast.Nonlocal(state)] if state else []
    return ast.FunctionDef(name=name, args=_plain_args(params), body=head + (body or [ast.Pass()]),
                           decorator_list=[], returns=None,
                           **({"type_params": []} if "type_params" in ast.FunctionDef._fields else {}))


class _Rewriter:
    """Rewrites statement lists; ``inside`` says whether they sit in a generated function."""

    def __init__(self, line_shift: int) -> None:
        self.count = 0
        self.globals: set[str] = set()
        self.line_shift = line_shift  # the lines of the parsed text before the function's first

    def function_body(self, body: list[ast.stmt], args: ast.arguments) -> list[ast.stmt]:
        for node in ast.walk(ast.Module(body, [])):
            if isinstance(node, ast.Global):
                self.globals.update(node.names)
        state = [n for n in assigned_names(body) if n not in self.globals]
        out = self.block(body, inside=False)
        if state:  # every nonlocal needs a binding in the function, even one never executed
            never = ast.If(ast.Constant(False), [ast.Assign([ast.Name(n, ast.Store()) for n in state],
                                                             ast.Constant(None))], [])
            out.insert(0, ast.copy_location(never, body[0]))
        params = [a.arg for a in [*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg]
                  if a is not None]
        out.insert(0, ast.copy_location(self.scope_def([*dict.fromkeys([*params, *state])]), body[0]))
        return out

    @staticmethod
    def scope_def(names: list[str]) -> ast.FunctionDef:
        """``scope()`` -> {name: value} of the function's own names: the recorder looks there for
        another name holding the array a device construct is about to write."""
        values = [_call("look", ast.Lambda(_plain_args([]), ast.Name(n, ast.Load()))) for n in names]
        table = ast.Dict([ast.Constant(n) for n in names], values)
        return _def(_SCOPE, [], [ast.Return(table)], [])

    def block(self, body: list[ast.stmt], inside: bool) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in body:
            checks = self.mutation_checks(stmt)  # before truths(), which wraps the calls it looks for
            self.truths(stmt)
            out.extend(checks)
            out.extend(self.statement(stmt, inside))
        return out

    def truths(self, stmt: ast.stmt) -> None:
        """Send the truth tests Python makes outside if/while tests (``a if c else b``, ``and``,
        ``or``, ``not``, ``assert``, a comprehension's ``if``, a native match's subject) through
        the runtime, which refuses a device condition or an array there instead of reading it once
        while recording (in place, on this statement's own expressions)."""
        fix = _Truths(self)
        for field, value in ast.iter_fields(stmt):
            if isinstance(stmt, (ast.If, ast.While)) and field == "test":
                setattr(stmt, field, fix.condition(value))
            elif isinstance(value, ast.expr):
                setattr(stmt, field, fix.visit(value))
            elif isinstance(value, list):
                setattr(stmt, field, [fix.visit(v) if isinstance(v, ast.expr) else v for v in value])
        if isinstance(stmt, ast.Assert):
            stmt.test = fix.wrap(stmt.test, "assert")
        if isinstance(stmt, ast.Match) and not _literal_match(stmt):
            stmt.subject = fix.wrap(stmt.subject, "match with a guard or a case other than int literals")

    def mutation_checks(self, stmt: ast.stmt) -> list[ast.stmt]:
        """``rt.mutates(line, text)`` before a statement that changes a container item or an
        attribute: the recorder refuses it inside a device construct (which carries names and
        `name[key] = ...` items only)."""
        line = ast.Constant(self.line(stmt))
        return [ast.copy_location(ast.Expr(_call("mutates", line, ast.Constant(text))), stmt)
                for text in _mutations(stmt)]

    def statement(self, stmt: ast.stmt, inside: bool) -> list[ast.stmt]:
        if isinstance(stmt, ast.If):
            return self.construct(stmt, inside, self.if_call)
        if isinstance(stmt, ast.While):
            return self.construct(stmt, inside, self.while_call)
        if isinstance(stmt, ast.For):
            return self.construct(stmt, inside, self.for_call)
        if isinstance(stmt, ast.Match) and _literal_match(stmt):
            return self.construct(stmt, inside, self.match_call)
        if isinstance(stmt, (ast.Break, ast.Continue)) and inside:
            signal = "BREAK" if isinstance(stmt, ast.Break) else "CONTINUE"
            return [ast.copy_location(ast.Return(_rt(signal)), stmt)]
        if isinstance(stmt, ast.Return) and inside:
            value = ast.Tuple([_rt("RETURN"), stmt.value or ast.Constant(None)], ast.Load())
            return [ast.copy_location(ast.Return(value), stmt)]
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and isinstance(stmt.value, ast.Call):
            stmt.value = ast.copy_location(_call("named", ast.Constant(stmt.targets[0].id), stmt.value),
                                           stmt.value)
            return [stmt]
        for field in ("body", "orelse", "finalbody"):  # with, try, native match: rewrite inside
            if isinstance(getattr(stmt, field, None), list) and not isinstance(stmt, (ast.FunctionDef,
                                                                                     ast.AsyncFunctionDef,
                                                                                     ast.ClassDef)):
                setattr(stmt, field, self.block(getattr(stmt, field), inside))
        for handler in getattr(stmt, "handlers", []):
            handler.body = self.block(handler.body, inside)
        for case in getattr(stmt, "cases", []) if isinstance(stmt, ast.Match) else []:
            case.body = self.block(case.body, inside)
        return [stmt]

    def construct(self, stmt: ast.stmt, inside: bool, make: Callable[..., list[ast.stmt]]) -> list[ast.stmt]:
        self.count += 1
        k = self.count
        state = [n for n in assigned_names([stmt]) if n not in self.globals]
        defs, call = make(stmt, k, state)
        containers = _containers(stmt)
        if call.func.attr != "for_":  # a for over a Python iterable is never a device loop
            read = [ast.Tuple([ast.Constant(n), ast.Lambda(_plain_args([]), ast.Name(n, ast.Load())),
                               ast.Constant(rows)], ast.Load()) for n, rows in containers.items()]
            call.keywords += [ast.keyword("containers", ast.Tuple(read, ast.Load())),
                              ast.keyword("scope", ast.Name(_SCOPE, ast.Load()))]
        result = f"{_PREFIX}r"
        assign = ast.Assign([ast.Name(result, ast.Store())], call)
        passed = ast.Name(result, ast.Load()) if inside else ast.Subscript(
            ast.Name(result, ast.Load()), ast.Constant(1), ast.Load())
        propagate = ast.If(ast.Compare(ast.Name(result, ast.Load()), [ast.IsNot()], [ast.Constant(None)]),
                           [ast.Return(passed)], [])
        out = [*self.state_defs(k, state), *defs, assign, propagate]
        return [ast.copy_location(node, stmt) for node in out]

    def state_defs(self, k: int, state: list[str]) -> list[ast.stmt]:
        """``get_k()`` -> the state values (rt.UNBOUND for an unbound name); ``set_k(values)``."""
        get = _def(f"{_PREFIX}get_{k}", [], [ast.Return(ast.Tuple(
            [_call("look", ast.Lambda(_plain_args([]), ast.Name(n, ast.Load()))) for n in state],
            ast.Load()))], [])
        values = f"{_PREFIX}v"
        sets: list[ast.stmt] = []
        for i, n in enumerate(state):
            item = ast.Subscript(ast.Name(values, ast.Load()), ast.Constant(i), ast.Load())
            ignore = ast.ExceptHandler(ast.Name("NameError", ast.Load()), None, [ast.Pass()])
            unbind = ast.Try([ast.Delete([ast.Name(n, ast.Del())])], [ignore], [], [])
            sets.append(ast.If(ast.Compare(item, [ast.Is()], [_rt("UNBOUND")]), [unbind],
                               [ast.Assign([ast.Name(n, ast.Store())], item)]))
        setter = _def(f"{_PREFIX}set_{k}", [values], sets, state)
        return [get, setter]

    def line(self, stmt: ast.stmt) -> int:
        """A statement's line counted from the function's first line."""
        return stmt.lineno - self.line_shift

    def state_args(self, k: int, state: list[str], stmt: ast.stmt) -> list[ast.expr]:
        return [ast.Name(f"{_PREFIX}get_{k}", ast.Load()), ast.Name(f"{_PREFIX}set_{k}", ast.Load()),
                ast.Tuple([ast.Constant(n) for n in state], ast.Load()), ast.Constant(self.line(stmt))]

    def arm(self, name: str, body: list[ast.stmt], state: list[str],
            params: tuple[str, ...] = ()) -> ast.FunctionDef:
        return _def(name, list(params), self.block(body, inside=True), state)

    def if_call(self, stmt: ast.If, k: int, state: list[str]) -> tuple[list[ast.stmt], ast.expr]:
        then = self.arm(f"{_PREFIX}then_{k}", stmt.body, state)
        orelse = self.arm(f"{_PREFIX}else_{k}", stmt.orelse, state)
        call = _call("if_", _condition(stmt.test, self.line(stmt)), ast.Name(then.name, ast.Load()),
                     ast.Name(orelse.name, ast.Load()), *self.state_args(k, state, stmt))
        return [then, orelse], call

    def while_call(self, stmt: ast.While, k: int, state: list[str]) -> tuple[list[ast.stmt], ast.expr]:
        _no_else(stmt, "while")
        test = _def(f"{_PREFIX}test_{k}", [], [ast.Return(_condition(stmt.test, self.line(stmt)))], [])
        body = self.arm(f"{_PREFIX}body_{k}", stmt.body, state, (f"{_PREFIX}item",))
        call = _call("while_", ast.Name(test.name, ast.Load()), ast.Name(body.name, ast.Load()),
                     *self.state_args(k, state, stmt))
        return [test, body], call

    def for_call(self, stmt: ast.For, k: int, state: list[str]) -> tuple[list[ast.stmt], ast.expr]:
        _no_else(stmt, "for")
        item = f"{_PREFIX}item"
        bind = ast.copy_location(ast.Assign([stmt.target], ast.Name(item, ast.Load())), stmt)
        range_args = _range_args(stmt.iter)
        first = stmt.body[0]
        targets = {n.id for n in ast.walk(stmt.target) if isinstance(n, ast.Name)}
        capped = (range_args is not None and len(range_args) == 1 and isinstance(first, ast.If)
                  and not first.orelse and len(first.body) == 1 and isinstance(first.body[0], ast.Break)
                  and not targets & {n.id for n in ast.walk(first.test) if isinstance(n, ast.Name)})
        rows = _Rows(stmt.target.id, self.line_shift) if isinstance(stmt.target, ast.Name) else None
        if capped:
            stop = _def(f"{_PREFIX}stop_{k}", [], [ast.Return(_condition(first.test, self.line(first)))], [])
            if rows:
                stmt.body[1:] = [rows.visit(s) for s in stmt.body[1:]]
            body = self.arm(f"{_PREFIX}body_{k}", [bind, *stmt.body[1:]], state, (item,))
            call = _call("capped", range_args[0], ast.Name(stop.name, ast.Load()),
                         ast.Name(body.name, ast.Load()), *self.state_args(k, state, stmt))
            call.keywords = [_targets(stmt), ast.keyword("indexed", ast.Constant(bool(rows and rows.read)))]
            return [stop, body], call
        if range_args is not None:
            if rows:  # in place: the constructs around this one see the row moves, not item assignments
                stmt.body = [rows.visit(s) for s in stmt.body]
            body = self.arm(f"{_PREFIX}body_{k}", [bind, *stmt.body], state, (item,))
            call = _call("for_range", ast.Tuple(range_args, ast.Load()), ast.Name(body.name, ast.Load()),
                         *self.state_args(k, state, stmt))
            scan = rows is not None and not rows.python_uses(stmt.body)
            stacked = [ast.Tuple([ast.Constant(n), ast.Lambda(_plain_args([]), ast.Name(n, ast.Load()))],
                                 ast.Load()) for n in (rows.stacked if scan else ())]
            call.keywords = [_targets(stmt), ast.keyword("indexed", ast.Constant(bool(rows and rows.read))),
                             ast.keyword("stacked", ast.Tuple(stacked, ast.Load())),
                             ast.keyword("count", ast.Constant(ast.unparse(range_args[-1])))]
            return [body], call
        body = self.arm(f"{_PREFIX}body_{k}", [bind, *stmt.body], state, (item,))
        call = _call("for_", stmt.iter, ast.Name(body.name, ast.Load()), *self.state_args(k, state, stmt))
        return [body], call

    def match_call(self, stmt: ast.Match, k: int, state: list[str]) -> tuple[list[ast.stmt], ast.expr]:
        defs, cases = [], []
        default: ast.expr = ast.Constant(None)
        for j, case in enumerate(stmt.cases):
            fn = self.arm(f"{_PREFIX}case_{k}_{j}", case.body, state)
            defs.append(fn)
            values = _case_values(case.pattern)
            if values is None:
                default = ast.Name(fn.name, ast.Load())
            else:
                cases.append(ast.Tuple([ast.Tuple(values, ast.Load()), ast.Name(fn.name, ast.Load())],
                                       ast.Load()))
        call = _call("match_", stmt.subject, ast.Tuple(cases, ast.Load()), default,
                     *self.state_args(k, state, stmt))
        return defs, call


class _Rows(ast.NodeTransformer):
    """In a ``for t in range(...)`` body: ``xs[t]`` becomes ``rt.row(xs, t, line)`` and ``ys[t] = v``
    ``rt.put_row(ys, t, v, line)``, which move rows on the device when ``t`` is a device loop's
    index and index as Python does otherwise; notes whether the body reads ``t`` and which names
    it indexes by ``t`` (the stacked arrays a Python-counted loop may step through as one loop)."""

    def __init__(self, target: str, line_shift: int) -> None:
        self.target, self.line_shift = target, line_shift
        self.read = False
        self.stacked: dict[str, None] = {}

    def at_target(self, node: ast.Subscript) -> bool:
        """Whether the index reads ``t`` (``xs[t]``; ``xs[t + 1]``, which the runtime refuses)."""
        exact = isinstance(node.slice, ast.Name) and node.slice.id == self.target
        if exact and isinstance(node.value, ast.Name):
            self.stacked[node.value.id] = None
        return exact or any(isinstance(n, ast.Name) and n.id == self.target for n in ast.walk(node.slice))

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id == self.target and isinstance(node.ctx, ast.Load):
            self.read = True
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load) and self.at_target(node):
            line = ast.Constant(node.lineno - self.line_shift)
            return ast.copy_location(_call("row", node.value, node.slice, line), node)
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.stmt:
        target = node.targets[0]
        if len(node.targets) == 1 and isinstance(target, ast.Subscript) and self.at_target(target):
            self.read = True
            call = _call("put_row", self.visit(target.value), target.slice, self.visit(node.value),
                         ast.Constant(node.lineno - self.line_shift))
            return ast.copy_location(ast.Expr(call), node)
        self.generic_visit(node)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        return node  # another scope

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

    def python_uses(self, body: list[ast.stmt]) -> bool:
        """Whether the (rewritten) body reads ``t`` other than as an argument of a call that is not
        a builtin's (a kernel's, a row's), alone or as ``a * t + b`` with int literals: a Python
        loop whose body tests or counts with ``t`` stays a Python loop, unrolled as before."""
        passed: set[int] = set()
        for node in ast.walk(ast.Module(body, [])):
            if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name)
                                                   and hasattr(builtins, node.func.id)):
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    if self.affine(arg):
                        passed.update(id(n) for n in ast.walk(arg))
        return any(isinstance(n, ast.Name) and n.id == self.target and isinstance(n.ctx, ast.Load)
                   and id(n) not in passed for n in ast.walk(ast.Module(body, [])))

    def affine(self, node: ast.expr) -> bool:
        """``t``, ``-t``, or ``t`` times or plus or minus an int literal, nested."""
        if isinstance(node, ast.Name):
            return node.id == self.target
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return self.affine(node.operand)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            def number(n: ast.expr) -> bool:
                return isinstance(n, ast.Constant) and type(n.value) is int
            return (self.affine(node.left) and number(node.right)) or (number(node.left)
                                                                       and self.affine(node.right))
        return False


class _Truths(ast.NodeTransformer):
    """Wraps the operands Python tests for truth in an expression in ``rt.truth_of``."""

    def __init__(self, rewriter: _Rewriter) -> None:
        self.rewriter = rewriter

    def wrap(self, node: ast.expr, form: str) -> ast.expr:
        line = ast.Constant(node.lineno - self.rewriter.line_shift)
        return ast.copy_location(_call("truth_of", node, line, ast.Constant(form)), node)

    def condition(self, test: ast.expr) -> ast.expr:
        """An if/while test: its top ``not``/``and``/``or`` are the runtime's already."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test.operand = self.condition(test.operand)
        elif isinstance(test, ast.BoolOp):
            test.values = [self.condition(v) for v in test.values]
        else:
            test = self.visit(test)
        return test

    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        self.generic_visit(node)
        node.test = self.wrap(node.test, "... if <condition> else ...")
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        self.generic_visit(node)
        form = "and" if isinstance(node.op, ast.And) else "or"
        node.values = [*(self.wrap(v, form) for v in node.values[:-1]), node.values[-1]]
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            node.operand = self.wrap(node.operand, "not")
        else:
            node.operand = self.operand(node.operand, _SYMBOLS[type(node.op)])
        return node

    # Python arithmetic, comparisons and NumPy calls run while recording: on an array a replay
    # sets they would compute once, from bytes no replay has written yet (rt.operand_of refuses)
    def operand(self, node: ast.expr, form: str) -> ast.expr:
        if not hasattr(node, "lineno"):  # made by the rewrite itself
            return node
        line = ast.Constant(node.lineno - self.rewriter.line_shift)
        return ast.copy_location(_call("operand_of", node, line, ast.Constant(form)), node)

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        form = _SYMBOLS[type(node.op)]
        node.left, node.right = self.operand(node.left, form), self.operand(node.right, form)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        if not all(type(op) in _SYMBOLS for op in node.ops):  # `is`, `in`: identity, membership
            return node
        form = _SYMBOLS[type(node.ops[0])]
        node.left = self.operand(node.left, form)
        node.comparators = [self.operand(c, form) for c in node.comparators]
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute) and hasattr(node, "lineno") \
                and not (isinstance(node.func.value, ast.Name) and node.func.value.id == RUNTIME):
            # np.sin, a.sum (a plain name is a kernel or a block)
            line = ast.Constant(node.lineno - self.rewriter.line_shift)
            node.func = ast.copy_location(_call("callee", node.func, line), node.func)
        return node

    def visit_comprehension(self, node: ast.comprehension) -> ast.comprehension:
        self.generic_visit(node)
        node.ifs = [self.wrap(c, "a comprehension's if") for c in node.ifs]
        return node


_SYMBOLS: dict[type, str] = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.MatMult: "@", ast.Div: "/", ast.FloorDiv: "//",
    ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitXor: "^",
    ast.BitAnd: "&", ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Eq: "==", ast.NotEq: "!=",
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}

_MUTATORS = frozenset({"append", "extend", "insert", "pop", "popitem", "remove", "clear", "update",
                       "setdefault", "sort", "reverse"})


def _carried(target: ast.expr) -> bool:
    """``name[key] = ...``: an item of a dict or list that a device construct carries like a name."""
    return isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
        and isinstance(target.ctx, ast.Store)


def _containers(stmt: ast.stmt) -> dict[str, bool]:
    """The names whose items a construct assigns (``name[key] = ...`` anywhere in it), in order,
    each with whether it is assigned only at a for's variable (``rt.put_row``: a row, for an array)."""
    found: dict[str, bool] = {}
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "put_row" and isinstance(node.func.value, ast.Name) \
                and node.func.value.id == RUNTIME and isinstance(node.args[0], ast.Name):
            found.setdefault(node.args[0].id, True)
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AugAssign) else []
        for target in [t for s in targets for t in ast.walk(s) if _carried(t)]:
            found[target.value.id] = False
    return found


def _mutations(stmt: ast.stmt) -> list[str]:
    """What a simple statement changes in place: ``s['v'] = ...``, ``del s[k]``, ``o.a += ...``,
    ``acc.append(...)`` (a compound statement's own statements are checked one by one)."""
    if any(isinstance(getattr(stmt, f, None), list) for f in ("body", "cases")):
        return []
    found: list[str] = []
    stores = [*stmt.targets] if isinstance(stmt, (ast.Assign, ast.Delete)) else \
        [stmt.target] if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) else []
    for target in [t for s in stores for t in ast.walk(s) if isinstance(t, (ast.Subscript, ast.Attribute))
                   and isinstance(t.ctx, (ast.Store, ast.Del))]:
        if isinstance(stmt, (ast.Assign, ast.AugAssign)) and _carried(target):
            continue  # the device construct around it carries the item
        if isinstance(stmt, ast.Delete):
            found.append(f"del {ast.unparse(target)}")
        elif isinstance(stmt, ast.AugAssign):
            found.append(ast.unparse(ast.AugAssign(target, stmt.op, ast.Name("..."))))
        else:
            found.append(f"{ast.unparse(target)} = ...")
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in _MUTATORS:
            found.append(f"{ast.unparse(node.func)}(...)")
    return found


def _no_else(stmt: ast.For | ast.While, what: str) -> None:
    if stmt.orelse:
        raise RewriteError(f"eagle.Graph.builder: line {stmt.lineno}: `{what} ... else:` is not supported "
                           "in a builder; set a flag before break and test it after the loop",
                           (None, stmt.lineno, stmt.col_offset + 1, None))


def _targets(stmt: ast.For) -> ast.keyword:
    """The names a for binds to its items: a device loop has no items, so they keep their values."""
    names = [n.id for n in ast.walk(stmt.target) if isinstance(n, ast.Name)]
    return ast.keyword("targets", ast.Tuple([ast.Constant(n) for n in names], ast.Load()))


def _condition(test: ast.expr, line: int) -> ast.expr:
    """A condition with ``not``, ``and`` and ``or`` at its top sent to the runtime, which knows
    a one-cell device array from a Python value (``line`` names the construct in its refusals)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return ast.copy_location(_call("not_", _condition(test.operand, line), ast.Constant(line)), test)
    if isinstance(test, ast.BoolOp):
        thunks = [ast.Lambda(_plain_args([]), _condition(v, line)) for v in test.values]
        op = "and_" if isinstance(test.op, ast.And) else "or_"
        return ast.copy_location(_call(op, ast.Constant(line), *thunks), test)
    return test


def _range_args(node: ast.expr) -> list[ast.expr] | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" \
            and not node.keywords and 1 <= len(node.args) <= 3:
        return list(node.args)
    return None


def _case_values(pattern: ast.pattern) -> list[ast.expr] | None:
    """The literal values a case matches; None for the wildcard ``case _``."""
    if isinstance(pattern, ast.MatchAs) and pattern.pattern is None and pattern.name is None:
        return None
    if isinstance(pattern, ast.MatchOr):
        return [v for p in pattern.patterns for v in _case_values(p)]
    return [pattern.value]


def _literal_match(stmt: ast.Match) -> bool:
    """Cases of int literals (or ``|`` of them) and a final ``_``: what a device switch can be."""
    def literal(p: ast.pattern) -> bool:
        if isinstance(p, ast.MatchOr):
            return all(literal(q) for q in p.patterns)
        return isinstance(p, ast.MatchValue) and isinstance(p.value, ast.Constant) \
            and isinstance(p.value.value, int)

    cases = stmt.cases
    if any(c.guard is not None for c in cases):
        return False
    last_wild = _case_values(cases[-1].pattern) is None
    return all(literal(c.pattern) for c in (cases[:-1] if last_wild else cases))
