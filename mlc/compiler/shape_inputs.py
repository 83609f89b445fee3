"""
ONNX models whose shape-deciding inputs are given at run time.

Some ONNX inputs decide shapes rather than data: Slice's axes and steps (its starts and
ends too where a step is negative), a non-constant Pad's pads, a reduction's axes,
Range's start and delta, Tile's repeats, Resize's scales... The importer needs their
values (`Node.const`); when
such a value is a graph input, or is computed from one, the import stops with an
`UnknownAtImportError` and records the value's name in `needed_at_import`.

`mlc.compile` then returns a `ShapeSpecializedModel` instead of failing. It is called
with every graph input, as onnxruntime takes them. It reads the shape-deciding ones
(`shape_inputs`) before native code runs and specialises on their values: the model is
imported with those inputs bound as constants (initializers, as if the model held
them), compiled, and kept under a guard on the values (dtype, shape and bytes); the
other inputs go to the compiled code. One variant is compiled per distinct value set,
up to `max_variants` (8, as `mlc.jit`); a value set past it is a `VariantLimitError`.
Each variant is a compile of its own bound model, so the compile cache keeps it too.

Some conversions need static dims rather than values: Det's matrix size and DeformConv's
kernel (both unrolled at import), a grouped ConvTranspose's channel counts, Resize's
antialiasing or keep_aspect_ratio_policy to given sizes. Given dynamic dims, the
importer records the value (`Node.dynamic_dims`, `needed_static`), and the model is
specialised the same way on the dims of the graph inputs it is computed from
(`dim_inputs`): each variant declares their shapes static, and the guard holds them.

Which graph inputs decide shapes is found from the values the importer reported: the
graph inputs they are computed from, through any nodes but `Shape` and `Size` (which
read only a shape) and into the subgraphs of an If or a Loop (what their branches
capture). A value computed from a dynamic input's shape cannot be bound this way: such
a model still fails to compile, with the importer's error. Binding one input
can bring the next to light (Slice's ends once its starts are known): a failed variant
compile looks again, and the guard grows by the new inputs.
"""

from collections import namedtuple
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mlc.compiler.errors import CompileError

# Ops whose outputs depend only on the shapes of their inputs, never on their values.
SHAPE_ONLY = frozenset({"Shape", "Size"})

DEFAULT_MAX_VARIANTS = 8

# As `mlc.jit`'s `cache_info()`, less its graph breaks.
CacheInfo = namedtuple("CacheInfo", ["hits", "misses", "variants"])


class VariantLimitError(RuntimeError):
    """A `ShapeSpecializedModel` was called with more value sets than it compiles."""


def graph_inputs(model: Any) -> list[Any]:
    """The model's graph inputs that are not initializers, in order (its arguments)."""
    initializers = {init.name for init in model.graph.initializer}
    return [info for info in model.graph.input if info.name not in initializers]


def inputs_deciding(
    model: Any, values: Sequence[str], through: frozenset[str] = frozenset()
) -> list[str]:
    """The graph inputs the graph values `values` are computed from (not through the
    shape-only ops but those in `through`), in the order of the graph's inputs."""
    arguments = [info.name for info in graph_inputs(model)]
    producers = {out: node for node in all_nodes(model.graph.node) for out in node.output if out}
    found: set[str] = set()
    pending, seen = list(values), set[str]()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in arguments:
            found.add(name)
        elif (node := producers.get(name)) is not None and (
            node.op_type not in SHAPE_ONLY or node.op_type in through
        ):
            pending.extend(reads(node))
    return [name for name in arguments if name in found]


def all_nodes(nodes: Sequence[Any]) -> list[Any]:
    """`nodes` and the nodes of their subgraphs (an If's branches, a Loop's body), deep."""
    found = []
    for node in nodes:
        found.append(node)
        for graph in subgraphs(node):
            found += all_nodes(graph.node)
    return found


def reads(node: Any) -> list[str]:
    """The values a node's outputs are computed from: its inputs and, for an If or a
    Loop, whatever its subgraphs read (their outputs come from their nodes, which may
    capture the values of the graph around them)."""
    names = [n for n in node.input if n]
    for graph in subgraphs(node):
        names += [o.name for o in graph.output]
        names += [n for inner in all_nodes(graph.node) for n in inner.input if n]
    return names


def subgraphs(node: Any) -> list[Any]:
    """The graphs a node's attributes hold."""
    graphs = []
    for attribute in node.attribute:
        if attribute.HasField("g"):
            graphs.append(attribute.g)
        graphs.extend(attribute.graphs)
    return graphs


def needed_inputs(model: Any) -> list[str]:
    """
    The graph inputs whose values the import of `model` needs and does not have: none
    if it imports, or fails for another reason.
    """
    return import_needs(model)[0]


def import_needs(model: Any) -> tuple[list[str], list[str]]:
    """
    What the import of `model` needs and does not have: the graph inputs whose values
    it needs, and those of dynamic dims whose dims it needs static (the inputs a value
    is computed from, through any node, Shape included); none if it imports, or fails
    for another reason.
    """
    # Imported here: the ONNX frontend needs the optional `onnx` package.
    from mlc.frontends.onnx.graph import GraphImporter, supports
    from mlc.frontends.onnx.model import OnnxImportError, load

    try:
        importer = GraphImporter(load(model, supports))
    except OnnxImportError:
        return [], []
    try:
        importer.run()
    except OnnxImportError:
        values = inputs_deciding(model, importer.needed_at_import)
        dims = inputs_deciding(model, importer.needed_static, through=SHAPE_ONLY)
        dynamic = {info.name for info in graph_inputs(model) if has_dynamic_dims(info)}
        return values, [name for name in dims if name in dynamic and name not in values]
    return [], []


def has_dynamic_dims(info: Any) -> bool:
    """Whether a graph input's declared shape leaves a dim (or the rank) unknown."""
    tensor_type = info.type.tensor_type
    if not tensor_type.HasField("shape"):
        return True
    return any(not dim.HasField("dim_value") for dim in tensor_type.shape.dim)


def fix_dims(model: Any, shapes: dict[str, tuple[int, ...]]) -> Any:
    """A copy of `model` whose graph inputs `shapes` names declare those static shapes."""
    # Imported here: the optional `onnx` package.
    import onnx

    fixed = onnx.ModelProto()
    fixed.CopyFrom(model)
    for info in fixed.graph.input:
        if (shape := shapes.get(info.name)) is None:
            continue
        dims = info.type.tensor_type.shape.dim
        del dims[:]
        for size in shape:
            dims.add().dim_value = size
    return fixed


def bind(model: Any, values: dict[str, np.ndarray]) -> Any:
    """A copy of `model` whose graph inputs `values` names are initializers holding them."""
    # Imported here: the optional `onnx` package.
    import onnx
    from onnx import numpy_helper

    bound = onnx.ModelProto()
    bound.CopyFrom(model)
    for name, value in values.items():
        bound.graph.initializer.append(numpy_helper.from_array(value, name))
    kept = [info for info in bound.graph.input if info.name not in values]
    del bound.graph.input[:]
    bound.graph.input.extend(kept)
    return bound


def host_array(value: Any) -> np.ndarray:
    """An argument as a numpy array (a GPU array is copied back)."""
    if not isinstance(value, np.ndarray) and hasattr(value, "get"):
        value = value.get()
    return np.asarray(value)


class ShapeSpecializedModel:
    """
    An ONNX model compiled once per value set of its shape-deciding inputs (see the
    module docstring). Called with every graph input; returns what the compiled
    variant returns.
    """

    def __init__(
        self,
        model: Any,
        shape_inputs: Sequence[str],
        compile_model: Callable[[Any], Any],
        max_variants: int = DEFAULT_MAX_VARIANTS,
        dim_inputs: Sequence[str] = (),
    ):
        self.model = model
        self.input_names = [info.name for info in graph_inputs(model)]
        self.shape_inputs = list(shape_inputs)
        # Inputs whose dims (not values) the variants are specialised on.
        self.dim_inputs = list(dim_inputs)
        self.max_variants = max_variants
        self._compile = compile_model
        self._dtypes = {info.name: _dtype_of(info) for info in graph_inputs(model)}
        self._variants: dict[tuple[Any, ...], Any] = {}
        self._hits = self._misses = 0

    @property
    def variants(self) -> int:
        return len(self._variants)

    def cache_info(self) -> CacheInfo:
        """Hits and misses of the guard, and the variants compiled."""
        return CacheInfo(self._hits, self._misses, len(self._variants))

    def __call__(self, *args: Any) -> Any:
        if len(args) != len(self.input_names):
            raise TypeError(
                f"the model takes {len(self.input_names)} inputs "
                f"({', '.join(self.input_names)}), got {len(args)}"
            )
        given = dict(zip(self.input_names, args, strict=True))
        executable = self._variants.get(self._key(given))
        if executable is None:
            self._misses += 1
            executable = self._variant(given)
        else:
            self._hits += 1
        return executable(*[given[n] for n in self.input_names if n not in self.shape_inputs])

    def _values(self, given: dict[str, Any]) -> dict[str, np.ndarray]:
        """The shape inputs among the arguments `given`, as numpy arrays of their dtype."""
        values = {}
        for name in self.shape_inputs:
            array = host_array(given[name])
            want = self._dtypes[name]
            if want is not None and array.dtype != want:
                raise TypeError(f"input '{name}': expected dtype {want}, got {array.dtype}")
            values[name] = array
        return values

    def _dims(self, given: dict[str, Any]) -> dict[str, tuple[int, ...]]:
        """The shapes of the dim inputs among the arguments `given`."""
        return {name: tuple(np.shape(host_array(given[name]))) for name in self.dim_inputs}

    def _key(self, given: dict[str, Any]) -> tuple[Any, ...]:
        """The guard's key: the shape inputs' values and the dim inputs' shapes."""
        return (*_key(self._values(given)), *self._dims(given).values())

    def _variant(self, given: dict[str, Any]) -> Any:
        """Compile the variant for the values in `given`, finding more shape inputs if
        binding these brings them to light; keep it under its key."""
        while True:
            if len(self._variants) >= self.max_variants:
                raise VariantLimitError(
                    f"the model's shape inputs ({self._specialised_on()}) were given "
                    f"{self.max_variants + 1} distinct value sets; it compiles at most "
                    f"max_variants={self.max_variants} variants (raise it, or give fewer "
                    "distinct values)"
                )
            bound = fix_dims(bind(self.model, self._values(given)), self._dims(given))
            try:
                executable = self._compile(bound)
            except CompileError:
                values, dims = import_needs(bound)
                more = [n for n in values if n not in self.shape_inputs]
                more_dims = [n for n in dims if n not in self.dim_inputs]
                if not more and not more_dims:
                    raise
                # The guard grows: variants compiled without these inputs bound are dropped.
                self.shape_inputs += more
                self.dim_inputs += more_dims
                self._variants.clear()
                continue
            self._variants[self._key(given)] = executable
            return executable

    def _specialised_on(self) -> str:
        dims = [f"the dims of {name}" for name in self.dim_inputs]
        return ", ".join([*self.shape_inputs, *dims])

    def __repr__(self) -> str:
        return (
            f"<mlc ONNX model specialised on {self._specialised_on()}: "
            f"{len(self._variants)} of at most {self.max_variants} variants>"
        )


def _key(values: dict[str, np.ndarray]) -> tuple[Any, ...]:
    """The guard's key of a value set: each value's dtype, shape and bytes."""
    return tuple((v.dtype.str, v.shape, v.tobytes()) for v in values.values())


def _dtype_of(info: Any) -> np.dtype | None:
    """The numpy dtype of a graph input's declared element type, if it has one."""
    # Imported here: the optional `onnx` package.
    from onnx import helper

    elem_type = info.type.tensor_type.elem_type
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, TypeError, ValueError):
        return None


def specialize(
    source_value: Any, error: CompileError, compile_model: Callable[[Any], Any]
) -> ShapeSpecializedModel:
    """
    A `ShapeSpecializedModel` for an ONNX model (a path or a `ModelProto`) whose import
    failed with `error`, if the failure is a shape-deciding graph input; else `error`.
    """
    # Imported here: the optional `onnx` package.
    import onnx

    model = source_value if isinstance(source_value, onnx.ModelProto) else None
    if model is None:
        try:
            model = onnx.load(str(source_value))
        except Exception:  # unreadable: the import's own error says so
            raise error from None
    names, dims = import_needs(model)
    if not names and not dims:
        raise error
    return ShapeSpecializedModel(model, names, compile_model, dim_inputs=dims)
