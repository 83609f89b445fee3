"""
A compiled-in program as a Python function that traced code can call: `traced_call(module)`
records the ops of the module's function into the trace in progress, its arguments bound
to the call's arrays, so an imported model (`mlc.import_onnx(path, params_as_args=True)`)
can sit inside a loss that `mlc.value_and_grad` (joint or split) differentiates:

    model = mlc.autodiff.traced_call(mlc.import_onnx(path, params_as_args=True))

    def loss(*args):                       # the weights, then the model's inputs, labels
        logits = model(*args[:-1])
        return cross_entropy(logits, args[-1])

The ops keep their own locations (the model's nodes), so the partitioner's remarks name
the nodes whose outputs are saved. The function's argument types must be static and match
the call's arrays: fix a model's dynamic dims (its batch) before importing it.
"""

from collections.abc import Callable
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue

from mlc.frontends.trace.array import TracedArray
from mlc.frontends.trace.recording import active_tracer, lift
from mlc.frontends.trace.tracer import trace_error
from mlc.ir import type_text


def _function(module: ModuleOp, name: str) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    names = ", ".join(f"@{op.sym_name.data}" for op in module.ops if isinstance(op, func.FuncOp))
    raise ValueError(f"traced_call: the module has no function @{name} (it has {names or 'none'})")


def traced_call(module: ModuleOp, name: str = "main") -> Callable[..., Any]:
    """A function recording `@name`'s ops into the trace it is called in (see above)."""
    function = _function(module, name)
    if len(function.body.blocks) != 1:
        raise ValueError(f"traced_call: @{name} has several blocks")
    inputs = list(function.function_type.inputs.data)
    for i, t in enumerate(inputs):
        if isinstance(t, TensorType) and not t.has_static_shape():
            raise ValueError(
                f"traced_call: argument #{i} of @{name} is {type_text(t)}: its dims must be "
                "static (fix the model's dynamic dims, its batch, before importing it)"
            )

    def call(*args: Any) -> Any:
        tracer = active_tracer(*args)
        if len(args) != len(inputs):
            trace_error(f"@{name} takes {len(inputs)} arguments, {len(args)} were given")
        values: list[SSAValue] = []
        for i, (arg, expected) in enumerate(zip(args, inputs, strict=True)):
            value = lift(tracer, arg).value
            if value.type != expected:
                trace_error(
                    f"@{name}'s argument #{i} is {type_text(expected)}, got {type_text(value.type)}"
                )
            values.append(value)
        block = function.body.block
        mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, values, strict=True))
        ret = block.last_op
        assert isinstance(ret, func.ReturnOp)
        for op in block.ops:
            if op is not ret:
                tracer.block.add_op(op.clone(value_mapper=mapping))
        results = [TracedArray(tracer, mapping.get(v, v)) for v in ret.operands]
        return results[0] if len(results) == 1 else tuple(results)

    call.__name__ = name
    return call
