"""
What `mlc.compile` returns: an `Executable`, whose public functions (`CompiledFunction`)
check their arguments against the program's signatures and call the backend's code.
"""

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects.builtin import TensorType

from mlc.backend import cpu
from mlc.backend.compiled import CompiledObject
from mlc.backend.cuda import is_device_array
from mlc.backend.jit import JITModule
from mlc.backend.runtime import REFUSED
from mlc.compiler.donation import donated_buffers
from mlc.compiler.signature import Signature, buffer_types
from mlc.ir import type_text
from mlc.profiler import Peaks, Profile, kernel_table, profile_call
from mlc.timing import Timer


class CompiledFunction:
    """One public function of a compiled program, callable on numpy arrays."""

    def __init__(
        self,
        signature: Signature,
        native: Any,
        device_arrays: bool = False,
        fits: Callable[[tuple[Any, ...]], Any] | None = None,
    ):
        self.signature = signature
        self._native = native
        self._device_arrays = device_arrays
        # A call that checks the arguments natively and refuses what `Signature.check`
        # would convert or reject (`mlc.backend.runtime.CompiledFunction.call_if_fits`):
        # for functions of arrays alone, with no dims tied across them or results left in
        # donated arguments, whose checks are then the dtype, rank, static sizes and
        # contiguity it makes.
        plain = not (signature.aliases or signature.constraints or device_arrays)
        arrays = all(isinstance(t, TensorType) for t in signature.inputs)
        self._fits = fits if plain and arrays else None

    @property
    def name(self) -> str:
        return self.signature.name

    def __call__(self, *args: Any) -> Any:
        if self._fits is not None:
            result = self._fits(args)
            if result is not REFUSED:
                return result
        checked = self.signature.check(args, self._device_arrays)
        if self.signature.aliases:
            return self._call_donating(checked)
        return self._native(*checked)

    def _call_donating(self, checked: list[Any]) -> Any:
        """
        A call whose aliased results are written into their donated arguments: the
        native function returns the other results, and each aliased one is the
        argument's own array (a copy of it where it could not be written, see
        `donated_buffers`).
        """
        aliases = self.signature.aliases
        on_host = not any(is_device_array(a) for a in checked)
        donated = [a for _, a in aliases]
        buffers, write_back = donated_buffers(checked, donated, self._device_arrays)
        out = self._native(*buffers)
        for staged, array in write_back:
            staged.get(ary=array)  # a host array donated to a GPU program: copied back
        kept = len(self.signature.outputs) - len(aliases)
        returned = [] if kept == 0 else [out] if kept == 1 else list(out)
        if write_back and on_host:  # the staged arrays made the other results device ones
            returned = [r.get() if is_device_array(r) else r for r in returned]
        returned = iter(returned)
        by_result = {result: buffers[arg] for result, arg in aliases}
        for staged, array in write_back:
            by_result = {r: array if b is staged else b for r, b in by_result.items()}
        results = [
            by_result[i] if i in by_result else next(returned)
            for i in range(len(self.signature.outputs))
        ]
        return results[0] if len(results) == 1 else tuple(results)

    def __repr__(self) -> str:
        inputs = ", ".join(type_text(t) for t in self.signature.inputs)
        outputs = ", ".join(type_text(t) for t in self.signature.outputs)
        return f"<mlc function @{self.name}({inputs}) -> ({outputs})>"


class Executable:
    """
    A compiled program. Calling it calls its entry function: `main` if there is
    one, else its only public function; others are reachable by name (`exe["f"]`).
    """

    def __init__(
        self,
        functions: dict[str, CompiledFunction],
        jit: JITModule | None,
        target: str,
        *,
        from_cache: bool = False,
        compile_times: dict[str, float] | None = None,
        ptx: str = "",
        host_jit: JITModule | None = None,
    ):
        self.functions = functions
        self.jit = jit  # None for a GPU program, whose kernels are `ptx`
        self.ptx = ptx
        self.host_jit = host_jit  # a GPU program's host code
        self.target = target
        self.from_cache = from_cache  # the machine code came from the on-disk cache
        self.compile_times = compile_times or {}  # seconds per stage of this compile
        self.cache_key = ""  # what `executable_cache` keeps it under
        # The same source compiled with other options (set by `mlc.compile`): `profile`.
        self.variant: Callable[..., Any] | None = None

    @property
    def llvm_ir(self) -> str:
        """The optimised LLVM IR (made from the kept bitcode on first use)."""
        return self.jit.optimized_ir if self.jit is not None else ""

    @property
    def entry(self) -> CompiledFunction:
        if "main" in self.functions:
            return self.functions["main"]
        if len(self.functions) == 1:
            return next(iter(self.functions.values()))
        names = ", ".join(f"@{name}" for name in self.functions) or "none"
        raise TypeError(f"no entry function: several public functions ({names}); use exe['name']")

    def __getitem__(self, name: str) -> CompiledFunction:
        if name not in self.functions:
            names = ", ".join(f"@{n}" for n in self.functions)
            raise KeyError(f"no public function @{name} (functions: {names})")
        return self.functions[name]

    def __call__(self, *args: Any) -> Any:
        return self.entry(*args)

    def profile(
        self,
        *args: Any,
        repeat: int = 20,
        warmup: int = 1,
        function: str | None = None,
        peaks: Peaks | None = None,
    ) -> Profile:
        """
        Where a call on `args` spends its time, layer by layer (`mlc.profiler`): the
        program is compiled again with timers around its kernels (this one has none;
        on the cuda target, CUDA events around each launch) and called `warmup` times,
        then `repeat` times timed. `function`: a public
        function other than the entry; `peaks`: the machine's, for shares of them.
        """
        if self.variant is None:
            raise TypeError("only an executable made by mlc.compile can be profiled")
        profiled: Executable = self.variant(profile=True)
        chosen = profiled[function] if function is not None else profiled.entry
        host = profiled.jit or profiled.host_jit  # the CPU's code, or the GPU's host code
        assert host is not None, "a program with a function has host code"
        return profile_call(
            chosen,
            args,
            kernels=kernel_table(host.engine),
            graph=self.variant(emit="mlc"),
            target=self.target,
            function=chosen.name,
            repeat=repeat,
            warmup=warmup,
            peaks=peaks,
        )

    @staticmethod
    def on_cpu(
        compiled: CompiledObject,
        signatures: Sequence[Signature],
        target: str,
        timer: Timer,
        *,
        from_cache: bool,
    ) -> "Executable":
        """The executable of host machine code for a program with public `signatures`."""
        loaded = cpu.load(compiled, buffer_types(signatures), timer)
        functions = {
            sig.name: CompiledFunction(
                sig, loaded.functions[sig.name], fits=loaded.fitting.get(sig.name)
            )
            for sig in signatures
        }
        return Executable(
            functions, loaded.jit, target, from_cache=from_cache, compile_times=dict(timer.seconds)
        )

    @staticmethod
    def on_gpu(
        natives: dict[str, Any], signatures: Sequence[Signature], target: str, timer: Timer
    ) -> "Executable":
        """The executable of a program loaded on the GPU (`mlc.backend.cuda.load`)."""
        functions = {
            sig.name: CompiledFunction(sig, natives[sig.name], device_arrays=True)
            for sig in signatures
        }
        program = next(iter(natives.values())).program if natives else None
        return Executable(
            functions,
            None,
            target,
            compile_times=dict(timer.seconds),
            ptx=program.ptx if program else "",
            host_jit=program.jit if program else None,
        )
