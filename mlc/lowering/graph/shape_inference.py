"""
Refine the `?` dims of tensor types through `ml` ops, `scf` control flow and calls.

Each function is refined on its own, in two alternating steps until nothing changes:

- forward: every `ml` result is recomputed from its operand types by the op's own
  shape function (`infer_result_type`) and met with its declared type (a
  `tensor.cast` result is met with its operand's type); a loop-carried
  value of `scf.for` / `scf.while` starts as its init type and is joined with the
  yielded type until stable; `scf.if` results join their branches; `func.call`
  results take the callee's (refined) result types.
- backward: dims that an op's shape rule makes equal (matmul inner dims, broadcast
  partners that are not a static 1, ...) and argument dims that share a name in the
  `ml.dim_names` argument attribute are unified; a static size in a class refines every
  `ml` result dim of that class. Facts found in a block hold only where the block
  runs, so they refine values defined in that block or nested in it.

    func.func @f(%x: tensor<?x4xf32>, %w: tensor<4x8xf32>) -> tensor<?x?xf32> {
      %r = ml.relu %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %m = ml.matmul %r, %w : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x?xf32>
    // %m becomes tensor<?x8xf32>, and so does the function's result type

Function argument types never change. Where a refined value meets an op that needs
the exact old type (an `scf` init or yield wider than the carried type, a call
argument, any op that no longer verifies), a `tensor.cast` to that type is inserted.
Two different static sizes that must be equal are located errors (`op_error`).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func, scf, tensor
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import DiagnosticException

from mlc import shapes
from mlc.diagnostics import op_error, op_remark
from mlc.dialects import ml

Slot = tuple[SSAValue, int]  # one dim of one tensor value


def _equalities(op: ml.MLOp) -> list[shapes.Equality]:
    """The dims `op`'s shape rule makes equal (see `mlc.shapes` for the rules)."""
    s = [ml.base.shape_of(v) for v in op.operands]
    rank = len(ml.base.shape_of(op.results[0]))
    match op:
        case ml.BinaryOp() | ml.CmpOp() | ml.SelectOp():
            return shapes.broadcast_equalities(s, rank, runtime_broadcast=True)
        case ml.BroadcastToOp():
            target = ml.base.shape_of(op.results[0])
            return shapes.broadcast_to_equalities(s[0], target, op.shape is not None)
        case ml.MatmulOp():
            return shapes.matmul_equalities(*s, runtime_broadcast=True)
        case ml.TransposeOp():
            return shapes.transpose_equalities(op.perm.get_values())
        case ml.ConcatOp():
            return shapes.concat_equalities(len(s), rank, op.axis.value.data)
        case ml.GatherOp():
            return shapes.gather_equalities(len(s[0]), len(s[1]), op.axis.value.data)
        case ml.ReduceOp():
            axes, keep = op.axes.get_values(), bool(op.keepdims.value.data)
            return shapes.reduce_equalities(len(s[0]), axes, keep)
        case _:
            return _nn_equalities(op, s, rank)


def _nn_equalities(op: ml.MLOp, s: list[shapes.Shape], rank: int) -> list[shapes.Equality]:
    match op:
        case ml.ArgReduceOp():
            return shapes.reduce_equalities(len(s[0]), [op.axis.value.data], op.keepdims.value.data)
        case ml.UnaryOp() | ml.CastOp() | ml.SoftmaxOp() | ml.CumSumOp():
            return shapes.identity_equalities(rank)
        case ml.LayerNormOp():
            return shapes.layer_norm_equalities(*s)
        case ml.BatchNormOp():
            return shapes.batch_norm_equalities(rank)
        case ml.ConvOp():
            return shapes.conv_equalities(op.bias is not None, op.groups.value.data)
        case ml.PoolOp():
            return shapes.pool_equalities()
        case _:
            return []  # reshape, slice: no dim is equal to another by rule


def _set_type(value: SSAValue, new: Attribute) -> None:
    # xDSL has no public setter; the pass keeps every user consistent (see `_reconcile`).
    value._type = new  # pyright: ignore[reportPrivateUsage]


def _with_shape(t: Attribute, shape: shapes.Shape) -> Attribute:
    if not isinstance(t, TensorType):
        return t
    return TensorType(t.element_type, shape, t.encoding)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]


def _join(a: Attribute, b: Attribute) -> Attribute:
    if a == b or not isinstance(a, TensorType) or not isinstance(b, TensorType):
        return a
    return _with_shape(a, shapes.join(a.get_shape(), b.get_shape()))


@dataclass
class _Function:
    """The refinement state of one function: original types and unified dim sizes."""

    op: func.FuncOp
    original: dict[SSAValue, Attribute] = field(default_factory=dict[SSAValue, Attribute])
    facts: dict[Slot, int] = field(default_factory=dict[Slot, int])

    def __post_init__(self) -> None:
        for o in self.op.body.walk():
            self.original.update((r, r.type) for r in o.results)
            for region in o.regions:
                for block in region.blocks:
                    self.original.update((a, a.type) for a in block.args)

    # -- forward ---------------------------------------------------------------

    def infer_block(self, block: Block) -> None:
        for o in block.ops:
            match o:
                case ml.MLOp():
                    self.infer_ml(o)
                case scf.ForOp():
                    body = o.body.block
                    self.infer_loop(o.iter_args, body.args[1:], lambda b=body: self.run(b))
                    self.set_all(o.results, [a.type for a in body.args[1:]])
                case scf.WhileOp():
                    self.infer_while(o)
                case scf.IfOp():
                    self.infer_if(o)
                case func.CallOp():
                    self.infer_call(o)
                case tensor.CastOp():
                    self.infer_cast(o)
                case _:
                    for region in o.regions:
                        for b in region.blocks:
                            self.infer_block(b)

    def run(self, block: Block) -> list[Attribute]:
        """Infer the block; the types its terminator passes on."""
        self.infer_block(block)
        return [v.type for v in block.last_op.operands] if block.last_op else []

    def infer_ml(self, op: ml.MLOp) -> None:
        result = op.results[0]
        declared = self.original[result]
        _set_type(result, declared)  # reshape and broadcast_to read their declared type
        try:
            inferred = op.infer_result_type().get_shape()
        except shapes.ShapeError as error:
            op_error(op, str(error))
        written = ml.base.shape_of(result)
        if not shapes.compatible(written, inferred):
            shape = shapes.format_shape(inferred)
            op_error(op, f"result type {declared} contradicts the inferred shape ({shape})")
        known = tuple(self.facts.get((result, d), shapes.DYNAMIC) for d in range(len(written)))
        _set_type(result, _with_shape(declared, shapes.refine(written, inferred, known)))

    def infer_loop(
        self,
        inits: Sequence[SSAValue],
        args: Sequence[SSAValue],
        body: Callable[[], list[Attribute]],
    ) -> None:
        """Carried types start as the inits' and join what the body yields until stable."""
        carried = [v.type for v in inits]
        while True:
            self.set_all(args, carried)
            joined = [_join(c, y) for c, y in zip(carried, body(), strict=True)]
            if joined == carried:
                return
            carried = joined

    def infer_while(self, op: scf.WhileOp) -> None:
        before, after = op.before_region.block, op.after_region.block

        def body() -> list[Attribute]:
            self.set_all(after.args, self.run(before)[1:])  # past the condition flag
            return self.run(after)

        self.infer_loop(op.arguments, before.args, body)
        self.set_all(op.res, [a.type for a in after.args])

    def infer_if(self, op: scf.IfOp) -> None:
        branches = [self.run(r.block) for r in op.regions if r.blocks]
        types = branches[0]
        for other in branches[1:]:
            types = [_join(a, b) for a, b in zip(types, other, strict=True)]
        self.set_all(op.output, types)

    def infer_cast(self, op: tensor.CastOp) -> None:
        """A cast's result is its operand: it takes every static dim either side has."""
        declared, source = self.original[op.dest], op.source.type
        if not isinstance(declared, TensorType) or not isinstance(source, TensorType):
            return
        if source.get_num_dims() != declared.get_num_dims():
            return  # to or from an unranked tensor
        if not all(isinstance(u.operation, _REFINABLE_USERS) for u in op.dest.uses):
            return  # a user needs the written type (an scf init, a call), as the cast says
        known = shapes.refine(declared.get_shape(), source.get_shape())
        _set_type(op.dest, _with_shape(declared, known))

    def infer_call(self, op: func.CallOp) -> None:
        callee = SymbolTable.lookup_symbol(op, op.callee)
        if isinstance(callee, func.FuncOp):
            self.set_all(op.res, callee.function_type.outputs.data)

    def set_all(self, values: Sequence[SSAValue], types: Sequence[Attribute]) -> None:
        for value, t in zip(values, types, strict=True):
            _set_type(value, t)

    # -- backward ----------------------------------------------------------------

    def unify_block(self, block: Block, outer: dict[Slot, int]) -> None:
        """Unify the dims the block's ops make equal; record sizes of its own values."""
        unifier = shapes.DimUnifier[Slot]()
        if isinstance(block.parent_op(), func.FuncOp):
            self.unify_dim_names(unifier)
        for o in block.ops:
            if isinstance(o, ml.MLOp):
                self.unify_op(unifier, o, outer)
        known = {**outer, **{k: unifier.size(k) for k in unifier.keys()}}
        for k, size in known.items():
            if shapes.is_static(size) and _defined_in(k[0], block):
                self.facts[k] = size
        for o in block.ops:
            for region in o.regions:
                for nested in region.blocks:
                    self.unify_block(nested, known)

    def unify_op(
        self, unifier: shapes.DimUnifier[Slot], op: ml.MLOp, outer: dict[Slot, int]
    ) -> None:
        values = (*op.operands, op.results[0])
        for (pa, da), (pb, db) in _equalities(op):
            a, b = (values[pa], da), (values[pb], db)
            for slot in (a, b):
                unifier.add(slot, _static_size(slot, outer))
            if not unifier.unify(a, b):
                sa, sb = unifier.size(a), unifier.size(b)
                op_error(op, f"{_describe(pa, da)} ({sa}) must equal {_describe(pb, db)} ({sb})")

    def unify_dim_names(self, unifier: shapes.DimUnifier[Slot]) -> None:
        """Argument dims that share a name in `ml.dim_names` are one size."""
        first: dict[str, Slot] = {}
        for i, (arg, names) in enumerate(zip(self.op.args, _dim_names(self.op), strict=False)):
            rank = arg.type.get_num_dims() if isinstance(arg.type, TensorType) else None
            if names is not None and len(names) != rank:
                dims = "a non-tensor" if rank is None else f"{arg.type} with {rank}"
                op_error(
                    self.op, f"{ml.DIM_NAMES} of argument #{i} names {len(names)} dims, for {dims}"
                )
            for d, name in enumerate(names or ()):
                if not name:
                    continue
                slot = (arg, d)
                unifier.add(slot, _static_size(slot, {}))
                other = first.setdefault(name, slot)
                if not unifier.unify(other, slot):
                    sizes = f"{unifier.size(other)} and {unifier.size(slot)}"
                    op_error(
                        self.op, f"arguments share the dim name '{name}' but have sizes {sizes}"
                    )

    # -- driver ------------------------------------------------------------------

    def refine(self) -> int:
        """Alternate forward inference and unification until stable; the dims refined."""
        while True:
            self.infer_block(self.op.body.block)
            before = dict(self.facts)
            self.unify_block(self.op.body.block, {})
            if self.facts == before:
                break
        _reconcile(self.op, self.original)
        return sum(_static_count(v.type) - _static_count(t) for v, t in self.original.items())


# Users that accept a more static operand type as it is (`func.return` by updating
# the signature); others need the type a cast was written to give them.
_REFINABLE_USERS = (ml.MLOp, func.ReturnOp, tensor.DimOp, tensor.CastOp)


def _static_size(slot: Slot, outer: dict[Slot, int]) -> int:
    size = ml.base.shape_of(slot[0])[slot[1]]
    return size if shapes.is_static(size) else outer.get(slot, shapes.DYNAMIC)


def _static_count(t: Attribute) -> int:
    return sum(map(shapes.is_static, t.get_shape())) if isinstance(t, TensorType) else 0


def _defined_in(value: SSAValue, block: Block) -> bool:
    owner = value.owner
    return owner is block or (isinstance(owner, Operation) and owner.parent_block() is block)


def _describe(position: int, axis: int) -> str:
    return f"result dim {axis}" if position == shapes.RESULT else f"operand #{position} dim {axis}"


def _dim_names(op: func.FuncOp) -> list[list[str] | None]:
    """Per argument, the name of each dim ("" for unnamed) from `ml.dim_names`, if any."""
    if op.arg_attrs is None:
        return []
    result: list[list[str] | None] = []
    for attrs in op.arg_attrs.data:
        names = attrs.data.get(ml.DIM_NAMES)
        if not isinstance(names, ArrayAttr):
            result.append(None)
            continue
        result.append([n.data if isinstance(n, StringAttr) else "" for n in names.data])  # pyright: ignore[reportUnknownMemberType]
    return result


# ---------------------------------------------------------------------------
# Keeping the users of refined values valid
# ---------------------------------------------------------------------------


def _cast_operand(user: Operation, index: int, target: Attribute) -> None:
    """Make `user`'s operand `index` of type `target` through a `tensor.cast`."""
    value = user.operands[index]
    if value.type == target or not isinstance(target, TensorType):
        return
    cast = tensor.CastOp(value, target)  # pyright: ignore[reportUnknownArgumentType]
    cast.location = user.location
    Rewriter.insert_op(cast, InsertPoint.before(user))
    user.operands[index] = cast.dest


def _cast_all(user: Operation, start: int, targets: Sequence[SSAValue]) -> None:
    for i, target in enumerate(targets):
        _cast_operand(user, start + i, target.type)


def _reconcile(function: func.FuncOp, original: dict[SSAValue, Attribute]) -> None:
    """
    Give every user the types it must see: scf inits and yields the carried types, any
    other op that stopped verifying its operands' old types; then the signature.
    """
    for op in list(function.body.walk()):
        match op:
            case scf.ForOp():
                _cast_all(op, 3, op.body.block.args[1:])
            case scf.WhileOp():
                _cast_all(op, 0, op.before_region.block.args)
            case scf.YieldOp():
                _cast_all(op, 0, _yield_targets(op))
            case ml.MLOp() | scf.ConditionOp() | scf.IfOp() | func.ReturnOp():
                pass  # consistent by construction
            case _ if not _verifies(op):
                for i, value in enumerate(op.operands):
                    _cast_operand(op, i, original.get(value, value.type))
    function.update_function_type()


def _yield_targets(op: scf.YieldOp) -> Sequence[SSAValue]:
    """The values whose types an `scf.yield` must match: carried values or results."""
    match op.parent_op():
        case scf.ForOp() as loop:
            return loop.body.block.args[1:]
        case scf.WhileOp() as loop:
            return loop.before_region.block.args
        case Operation() as parent if len(parent.results) == len(op.operands):
            return parent.results  # scf.if, scf.execute_region, scf.index_switch
        case _:
            return op.operands


def _single_block(op: func.FuncOp) -> bool:
    return len(op.body.blocks) == 1


def _verifies(op: Operation) -> bool:
    try:
        op.verify(verify_nested_ops=False)
    except (DiagnosticException, ValueError):
        return False
    return True


# ---------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------


def refine_functions(module: ModuleOp) -> dict[func.FuncOp, int]:
    """
    Refine every function of `module`; the number of dims refined in each.

    A function's refined result types refine its callers' `func.call` results, so
    the functions are refined again until no signature changes.
    """
    # Functions in MLIR's graph form have one block; others (after cf lowering) are
    # past the level this pass works on and are left alone.
    functions = [op for op in module.walk() if isinstance(op, func.FuncOp) and _single_block(op)]
    refined = dict.fromkeys(functions, 0)
    while True:
        signatures = [f.function_type for f in functions]
        for f in functions:
            refined[f] += _Function(f).refine()
        if signatures == [f.function_type for f in functions]:
            return refined


def remark_refined(refined: dict[func.FuncOp, int]) -> None:
    for f, count in refined.items():
        if count:
            op_remark(f, f"refined {count} dim{'s' if count > 1 else ''}")


def infer_shapes(module: ModuleOp) -> bool:
    """Refine every function of `module`, remarking on each; whether any type changed."""
    refined = refine_functions(module)
    remark_refined(refined)
    return any(refined.values())


@dataclass(frozen=True)
class ArgumentDims:
    """Argument dims that must be one size at run time: `(argument, axis)` pairs."""

    dims: tuple[tuple[int, int], ...]
    size: int  # static size the class must have, or DYNAMIC


def argument_constraints(function: func.FuncOp) -> list[ArgumentDims]:
    """
    What a caller must guarantee about the dynamic dims of `function`'s arguments.

    The lowering assumes a dynamic dim equals every dim the shape rules tie it to (it
    is never a size-1 broadcast), so before native code runs the caller checks these
    classes: several argument dims of one size, or a dynamic argument dim that meets a
    static one. Ties through loop-carried values are not followed (a carried value may
    change shape), so the list can miss a constraint inside a loop, never invent one.
    """
    unifier = shapes.DimUnifier[Slot]()
    try:
        _Function(function).unify_dim_names(unifier)
    except DiagnosticException:
        return []  # malformed names: verification and shape-inference report them
    for op in function.walk():
        if not isinstance(op, ml.MLOp):
            continue
        values = (*op.operands, op.results[0])
        for (pa, da), (pb, db) in _equalities(op):
            a, b = (values[pa], da), (values[pb], db)
            for slot in (a, b):
                unifier.add(slot, _static_size(slot, {}))
            unifier.unify(a, b)  # conflicts are shape-inference's to report
    known = set(unifier.keys())
    groups: dict[Slot, list[tuple[int, int]]] = {}
    for i, arg in enumerate(function.args):
        if not isinstance(arg.type, TensorType):
            continue
        for d, size in enumerate(arg.type.get_shape()):
            if (arg, d) in known and not shapes.is_static(size):
                groups.setdefault(unifier.find((arg, d)), []).append((i, d))
    return [
        ArgumentDims(tuple(dims), unifier.size(root))
        for root, dims in groups.items()
        if len(dims) > 1 or shapes.is_static(unifier.size(root))
    ]


@dataclass(frozen=True)
class ShapeInferencePass(ModulePass):
    """Refine `?` dims through `ml` ops, `scf` control flow and signatures."""

    name = "shape-inference"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        infer_shapes(op)
