"""
`mlc.vjp`: JAX's `vjp` as two compiled halves, the forward and the backward that the
`autodiff-partition` split makes of the joint program.

    outputs, vjp_fn = mlc.vjp(fn, *primals)     # runs the forward half
    grads = vjp_fn(cotangents)                  # runs the backward half

`fn` is traced on the primals (arrays), its VJP recorded after it as one joint function
(`joint_function`: a cotangent argument per floating-point result, a gradient per
floating-point argument), optimised as one (`cse`), then split at the minimum cut of
saved bytes. The module of both halves is compiled once per function and argument types
and cached; the forward returns the outputs and the residuals, which `vjp_fn` holds
(`vjp_fn.residuals`, `vjp_fn.saved_bytes`) and hands to the backward with the
cotangents, as many times as it is called. `mlc.value_and_grad` keeps the joint form:
one program computing both, which is what a training step that needs both wants.

On `cuda` both halves run on device arrays (`mlc.autodiff.device`): the residuals stay
on the GPU between them. Outputs and gradients come back as `GPUArray`s when the primals
were `GPUArray`s, else as numpy arrays (copied out; the residuals never are).
"""

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, ModuleOp, StringAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.autodiff import device
from mlc.autodiff.differentiate import backprop, is_float_value
from mlc.autodiff.emitter import Emitter
from mlc.autodiff.joint import JointLayout, mark_joint
from mlc.autodiff.partition import SplitNames, split
from mlc.compiler.compile_path import compile as compile_module
from mlc.diagnostics import OpError
from mlc.frontends.trace.array import is_traced
from mlc.frontends.trace.program import Outputs, bind_inputs, finish, function_name, verified
from mlc.frontends.trace.tracer import TraceError, Tracer, tensor_type, tracing
from mlc.lowering.graph.cse import CSEPass


def joint_function(f: func.FuncOp, name: str) -> func.FuncOp:
    """
    The joint VJP function of `f` (which stays): `(args..., cts...) -> (results...,
    grads...)`, a cotangent per floating-point result and a gradient per floating-point
    argument, marked `ml.joint`.
    """
    joint = f.clone()
    joint.sym_name = StringAttr(name)
    block = joint.body.block
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    results = list(ret.operands)
    differentiated = [v for v in results if is_float_value(v)]
    em = Emitter(InsertPoint.before(ret))
    em.location = joint.location
    seeds: list[tuple[SSAValue, SSAValue]] = []
    for v in differentiated:
        ct = block.insert_arg(v.type, len(block.args))
        ct.name_hint = "cotangent"
        seeds.append((v, ct))
    wrt = [a for a in block.args[: len(f.args)] if is_float_value(a)]
    ops = list(block.ops)[:-1]
    grads = backprop(ops, wrt, seeds, em)
    new_ret = func.ReturnOp(*results, *grads)
    new_ret.location = ret.location
    Rewriter.replace_op(ret, new_ret)
    inputs: list[Attribute] = [a.type for a in block.args]
    joint.function_type = FunctionType.from_lists(inputs, [v.type for v in new_ret.operands])
    if joint.arg_attrs is not None:
        joint.arg_attrs = ArrayAttr([*joint.arg_attrs.data, *[DictionaryAttr({})] * len(seeds)])
    joint.res_attrs = None
    mark_joint(joint, JointLayout(cotangents=len(seeds), values=len(results)))
    return joint


class _Halves:
    """One function's compiled forward and backward, for one set of argument types."""

    def __init__(self, fn: Callable[..., Any], primals: Sequence[np.ndarray], target: str):
        tracer = Tracer(fn)
        types = [tensor_type(p.shape, p.dtype) for p in primals]
        with tracing(tracer):
            bound = bind_inputs(tracer, fn, primals, types)
            output = fn(*bound)
            traced, self.outputs = finish(tracer, function_name(fn), output)
        verified(ModuleOp([traced]))
        name = traced.sym_name.data
        self.names = SplitNames(f"{name}_forward", f"{name}_backward")
        try:
            joint = joint_function(traced, f"{name}_vjp")
            module = ModuleOp([joint])
            CSEPass().apply(Context(), module)
            forward, backward, cut = split(joint, self.names)
        except OpError as error:
            raise TraceError([error.diagnostic()]) from None
        self.float_results = [is_float_value(r) for r in traced.get_return_op().operands]
        self.float_args = [is_float_value(a) for a in traced.args]
        self.residual_count = len(cut.saved)
        self.results = len(self.float_results)
        self.target = target
        executable = compile_module(ModuleOp([forward, backward]), target)
        self.forward = executable[self.names.forward]
        self.backward = executable[self.names.backward]


class VJPFunction:
    """The backward half bound to one forward run's residuals: call it on cotangents."""

    def __init__(
        self,
        halves: _Halves,
        values: Sequence[Any],
        residuals: tuple[Any, ...],
        to_host: bool = True,
    ):
        self.halves = halves
        self.values = values
        self.residuals = residuals  # device arrays on the GPU, numpy arrays on the CPU
        self.to_host = to_host  # gradients copied out (the primals were numpy arrays)

    @property
    def saved_bytes(self) -> int:
        """The bytes the forward kept for the backward."""
        return sum(int(r.nbytes) for r in self.residuals)

    def __call__(self, cotangents: Any) -> tuple[Any, ...]:
        halves = self.halves
        leaves = _leaves(halves.outputs, cotangents)
        per_result: list[Any] = [None] * halves.results
        for source, ct in zip(halves.outputs.sources, leaves, strict=True):
            if source is None or ct is None or not halves.float_results[source]:
                continue  # a constant or integer result, or no cotangent given
            if not device.is_device_array(ct):
                ct = np.asarray(ct, dtype=self.values[source].dtype)
            known = per_result[source]
            per_result[source] = ct if known is None else known + ct
        gpu = device.on_device(halves.target)
        cts = []
        for i, is_float in enumerate(halves.float_results):
            if is_float:
                known = per_result[i]
                if known is None:
                    value = self.values[i]
                    known = device.zeros(value.shape, value.dtype, gpu)
                cts.append(device.to_device(known) if gpu else known)
        grads = iter(_as_tuple(halves.backward(*self.residuals, *cts)))
        out = [next(grads) if f else None for f in halves.float_args]
        return tuple(device.to_host(g) if self.to_host else g for g in out)


def _leaves(outputs: Outputs, cotangents: Any) -> list[Any]:
    """The cotangents' leaves, in the order of the outputs' (the same nesting)."""
    leaves: list[Any] = []

    def walk(tree: Any, value: Any) -> None:
        if tree is None:
            leaves.append(value)
            return
        kind, items = tree
        if value is None:  # no cotangents for this part of the outputs: zeros
            for item in items:
                walk(item, None)
            return
        if not isinstance(value, tuple | list) or len(value) != len(items):
            raise TypeError(
                f"vjp_fn: the cotangents must nest as the outputs do ({kind.__name__} of "
                f"{len(items)}), got {type(value).__name__}"
            )
        for item, v in zip(items, value, strict=True):
            walk(item, v)

    walk(outputs.tree, cotangents)
    return leaves


def _as_tuple(result: Any) -> tuple[Any, ...]:
    return result if isinstance(result, tuple) else (result,)


_cache: "weakref.WeakKeyDictionary[Callable[..., Any], dict[Any, _Halves]]" = (
    weakref.WeakKeyDictionary()
)


def vjp(fn: Callable[..., Any], *primals: Any, target: str = "cpu") -> tuple[Any, VJPFunction]:
    """
    `(fn(*primals), vjp_fn)`: `vjp_fn(cotangents)` (nested as `fn`'s outputs; None for
    zeros, and ignored for integer outputs) returns a tuple with the cotangent of each
    primal (None for an integer one). Forward and
    backward are compiled once per `fn` and argument types; each call of `mlc.vjp` runs
    the forward, each call of `vjp_fn` the backward.
    """
    if any(is_traced(p) for p in primals):
        raise TypeError(
            "mlc.vjp runs on arrays, not inside a trace: in mlc.jit, use mlc.value_and_grad "
            "(one program) or call mlc.vjp outside"
        )
    on_gpu = any(device.is_device_array(p) for p in primals)
    if on_gpu and not device.on_device(target):
        raise TypeError(f"mlc.vjp: GPUArray arguments need target='cuda', not {target!r}")
    arrays = [p if device.is_device_array(p) else np.asarray(p) for p in primals]
    key = (target, tuple((a.shape, np.dtype(a.dtype).str) for a in arrays))
    per_fn = _cache.setdefault(fn, {})
    halves = per_fn.get(key)
    if halves is None:
        halves = per_fn[key] = _Halves(fn, [device.host_like(a) for a in arrays], target)
    if device.on_device(target):  # every argument on the device: so are the residuals
        arrays = [device.to_device(a) for a in arrays]
    returned = _as_tuple(halves.forward(*arrays))
    values, residuals = returned[: halves.results], returned[halves.results :]
    if not on_gpu:
        values = tuple(device.to_host(v) for v in values)
    outputs = halves.outputs.rebuild(values)
    return outputs, VJPFunction(halves, values, residuals, to_host=not on_gpu)
