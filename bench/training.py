"""
One training step (forward, backward, SGD with momentum) compiled by mlc against torch
eager and JAX jit, where installed, and a numpy MLP step written by hand:

1. MLP 784-1024-1024-10, relu, softmax cross-entropy, batch 64;
2. the small CNN of examples/train_cnn.py (conv 1->8 3x3, relu, 2x2 max pooling, linear),
   batch 32 of 8x8 images.

mlc runs twice: the step returning new parameters and state, and the same step with
`donate=True`, which writes them into the arrays it was given.

On the GPU, systems are timed alternately (one step each per round, `bench/cpu.py`'s
`alternate`); on the CPU, in back-to-back bursts per round (`bench/cpu.py`'s `bursts`,
the calls after each burst's settling time): one step each per round put every system's
step just after another's, whose threads were still spinning on the same cores (on the
16-core GPU machine mlc's MLP step read 10.9 ms so, 2.2 ms alone). Medians;
ratios are the other system's time over mlc's (above 1: mlc is faster). Compile times are
the first step's. `--compile` instead compares the compile of a step with that of its
forward alone (the target: at most 2x): CPU time of the process and of its code generation
workers, disk cache off, the rows alternated over `--compile-rounds` rounds (the
in-memory cache cleared before each compile), medians.

`--target cuda` runs the same two steps on the GPU: mlc's step on `GPUArray`s (parameters,
optimiser state and batch stay on the device; `mlc.optim.training_step`'s device path)
against torch eager on cuda tensors, in one process, alternating, each step followed by a
device synchronisation; results go to bench/results/training_cuda.md.

Run: `.venv/bin/python bench/training.py [--rounds N] [--target cuda]`; results go to
bench/results/training.md. torch and JAX come from wherever `PYTHONPATH` finds them
(`PYTHONPATH=$PWD:/path/to/site`). Every system runs mlc's threads: one per usable core,
or `--threads N` (torch's `set_num_threads`, XLA's intra-op threads).
"""

import argparse
import functools
import importlib.util
import itertools
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import mlc
from mlc import ops
from mlc.compiler import executable_cache
from mlc.tiling_model import thread_count

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from cpu import alternate, bursts  # noqa: E402
from machine import describe  # noqa: E402

LR, MOMENTUM = 0.05, 0.9


def _example(name: str):
    spec = importlib.util.spec_from_file_location(name, HERE.parent / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def mlp_loss(w1, b1, w2, b2, w3, b3, x, labels):
    h = ops.relu(x @ w1 + b1)
    h = ops.relu(h @ w2 + b2)
    logits = h @ w3 + b3
    shifted = logits - ops.max(logits, axis=-1, keepdims=True)
    log_probs = shifted - ops.log(ops.sum(ops.exp(shifted), axis=-1, keepdims=True))
    return -ops.sum(labels * log_probs) / x.shape[0]


def mlp_case(rng):
    sizes = [784, 1024, 1024, 10]
    params = []
    for fan_in, fan_out in itertools.pairwise(sizes):
        params += [
            (rng.standard_normal((fan_in, fan_out)) * np.sqrt(2 / fan_in)).astype(np.float32),
            np.zeros(fan_out, np.float32),
        ]
    x = rng.standard_normal((64, 784)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]
    return params, (x, labels)


def cnn_case(rng):
    params = [
        (rng.standard_normal((8, 1, 3, 3)) * 0.5).astype(np.float32),
        np.zeros(8, np.float32),
        (rng.standard_normal((128, 10)) * 0.1).astype(np.float32),
        np.zeros(10, np.float32),
    ]
    x = rng.random((32, 1, 8, 8)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 32)]
    return params, (x, labels)


def mlc_step(
    loss: Callable, params, batch, donate: bool = False
) -> tuple[Callable[[], object], float]:
    optimizer = mlc.optim.SGD(lr=LR, momentum=MOMENTUM)
    step = mlc.optim.training_step(loss, optimizer, donate=donate)
    state = {"params": tuple(p.copy() for p in params), "opt": step.optimizer.init(params)}
    start = time.perf_counter()
    step(state["params"], state["opt"], *batch)
    compile_s = time.perf_counter() - start

    def run() -> object:
        value, state["params"], state["opt"] = step(state["params"], state["opt"], *batch)
        return value

    return run, compile_s


def mlc_gpu_step(
    loss: Callable, params, batch, donate: bool = False
) -> tuple[Callable[[], object], float]:
    """mlc's step on device arrays, synchronised after each step (as torch's below)."""
    from pycuda import gpuarray  # pyright: ignore

    from mlc.backend.cuda import device

    synchronize = device().pycuda.Context.synchronize
    optimizer = mlc.optim.SGD(lr=LR, momentum=MOMENTUM)
    step = mlc.optim.training_step(loss, optimizer, donate=donate)
    state = {
        "params": tuple(gpuarray.to_gpu(a) for a in params),
        "opt": tuple(gpuarray.to_gpu(a) for a in step.optimizer.init(params)),
    }
    on_device = tuple(gpuarray.to_gpu(a) for a in batch)
    start = time.perf_counter()
    step(state["params"], state["opt"], *on_device)
    synchronize()
    compile_s = time.perf_counter() - start

    def run() -> object:
        value, state["params"], state["opt"] = step(state["params"], state["opt"], *on_device)
        synchronize()
        return value

    return run, compile_s


def numpy_mlp_step(params, batch) -> Callable[[], object]:
    p = [a.copy() for a in params]
    bufs = [np.zeros_like(a) for a in p]
    x, labels = batch

    def run() -> object:
        w1, b1, w2, b2, w3, b3 = p
        z1 = x @ w1 + b1
        h1 = np.maximum(z1, 0)
        z2 = h1 @ w2 + b2
        h2 = np.maximum(z2, 0)
        logits = h2 @ w3 + b3
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs = e / e.sum(axis=1, keepdims=True)
        d3 = (probs - labels) / x.shape[0]
        d2 = (d3 @ w3.T) * (z2 > 0)
        d1 = (d2 @ w2.T) * (z1 > 0)
        grads = [x.T @ d1, d1.sum(0), h1.T @ d2, d2.sum(0), h2.T @ d3, d3.sum(0)]
        for i, g in enumerate(grads):
            bufs[i] = MOMENTUM * bufs[i] + g
            p[i] -= LR * bufs[i]
        return probs

    return run


def torch_step(kind: str, params, batch, on: str = "cpu") -> Callable[[], object] | None:
    try:
        import torch  # pyright: ignore
    except ImportError:
        return None
    if on == "cuda" and not torch.cuda.is_available():
        return None
    # mlc's threads (`--threads`; one per usable core by default): torch's default (the
    # host's cores, or more where cgroups limit them) oversubscribes a shared machine.
    torch.set_num_threads(thread_count())
    tensors = [torch.tensor(a, requires_grad=True, device=on) for a in params]
    x, labels = (torch.tensor(a, device=on) for a in batch)
    synchronize = torch.cuda.synchronize if on == "cuda" else (lambda: None)
    opt = torch.optim.SGD(tensors, lr=LR, momentum=MOMENTUM)
    f = torch.nn.functional

    def forward():
        if kind == "mlp":
            w1, b1, w2, b2, w3, b3 = tensors
            h = torch.relu(torch.relu(x @ w1 + b1) @ w2 + b2)
            logits = h @ w3 + b3
        else:
            w, b, v, c = tensors
            h = f.max_pool2d(torch.relu(f.conv2d(x, w, b, padding=1)), 2)
            logits = h.reshape(x.shape[0], -1) @ v + c
        return -(labels * f.log_softmax(logits, -1)).sum() / x.shape[0]

    def run() -> object:
        opt.zero_grad()
        loss = forward()
        loss.backward()
        opt.step()
        synchronize()
        return loss

    return run


def jax_step(loss: Callable, params, batch) -> Callable[[], object] | None:
    try:
        import jax  # pyright: ignore
        import jax.numpy as jnp  # pyright: ignore
    except ImportError:
        return None
    del loss  # the JAX loss is written with jax.numpy below

    def jloss(p, x, labels):
        if len(p) == 6:
            h = jax.nn.relu(jax.nn.relu(x @ p[0] + p[1]) @ p[2] + p[3])
            logits = h @ p[4] + p[5]
        else:
            h = jax.lax.conv_general_dilated(x, p[0], (1, 1), ((1, 1), (1, 1)))
            h = jax.nn.relu(h + p[1][None, :, None, None])
            h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
            logits = h.reshape(x.shape[0], -1) @ p[2] + p[3]
        return -(labels * jax.nn.log_softmax(logits)).sum() / x.shape[0]

    @jax.jit
    def update(p, bufs, x, labels):
        value, grads = jax.value_and_grad(jloss)(p, x, labels)
        bufs = [MOMENTUM * b + g for b, g in zip(bufs, grads, strict=True)]
        return value, [a - LR * b for a, b in zip(p, bufs, strict=True)], bufs

    state = {"p": [jnp.asarray(a) for a in params], "b": [jnp.zeros_like(a) for a in params]}

    def run() -> object:
        value, state["p"], state["b"] = update(state["p"], state["b"], *batch)
        return value.block_until_ready()

    return run


def workload(
    name: str, loss: Callable, case, kind: str, rounds: int, target: str = "cpu"
) -> list[str]:
    params, batch = case(np.random.default_rng(0))
    if target == "cuda":
        mine, compile_s = mlc_gpu_step(loss, params, batch)
        in_place, _ = mlc_gpu_step(loss, params, batch, donate=True)
        others = {"torch eager": torch_step(kind, params, batch, "cuda")}
    else:
        mine, compile_s = mlc_step(loss, params, batch)
        in_place, _ = mlc_step(loss, params, batch, donate=True)
        others = {
            "numpy (by hand)": numpy_mlp_step(params, batch) if kind == "mlp" else None,
            "torch eager": torch_step(kind, params, batch),
            "JAX jit": jax_step(loss, params, batch),
        }
    systems: dict[str, Callable[[], object]] = {"mlc": mine, "mlc, donated (in place)": in_place}
    missing = [n for n, run in others.items() if run is None and not n.startswith("numpy")]
    systems.update({n: run for n, run in others.items() if run is not None})
    for run in systems.values():  # warm-up (JAX compiles here)
        run()
    if target == "cuda":
        times = alternate(systems, budget=0.0, min_runs=rounds, max_runs=rounds)
    else:
        times, _ = bursts(systems, budget=0.0, min_runs=rounds, max_runs=rounds)
    base = statistics.median(times["mlc"])
    lines = [
        f"### {name}",
        "",
        "| system | median ms | ratio (its time / mlc's) |",
        "|---|---|---|",
    ]
    for system, t in times.items():
        median = statistics.median(t)
        lines.append(f"| {system} | {median * 1e3:.3f} | {median / base:.2f} |")
    lines += ["", f"mlc's first step (trace, compile): {compile_s:.1f} s."]
    if missing:
        lines.append(f"Not installed here: {', '.join(missing)}.")
    return [*lines, ""]


def cpu_seconds() -> float:
    """CPU time of this process and of its waited-for children (code generation workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def compile_seconds(make: Callable[[], Callable], args) -> float:
    """CPU time of the first call of `make()`'s function on `args` (trace and compile;
    the disk cache is off and the in-memory one cleared, so nothing is reused)."""
    executable_cache.clear()
    fn = make()
    start = cpu_seconds()
    fn(*args)
    return cpu_seconds() - start


def compile_rows(name: str, loss: Callable, case, rounds: int) -> list[str]:
    """The compile of `loss` alone, of its value and gradients (joint and split into
    forward and backward), and of the whole step with its SGD update: the rows
    alternated over `rounds` rounds, medians."""
    params, batch = case(np.random.default_rng(0))
    n = len(params)
    argnums = tuple(range(n))
    optimizer = mlc.optim.SGD(lr=LR, momentum=MOMENTUM)

    def whole_step():
        step = mlc.optim.training_step(loss, optimizer)
        return lambda *a: step(tuple(a[:n]), optimizer.init(params), *a[n:])

    rows = {
        "forward (`mlc.jit(loss)`)": lambda: mlc.jit(loss),
        "value and gradients (joint)": lambda: mlc.jit(mlc.value_and_grad(loss, argnums)),
        # a new function each time: `mlc.vjp` keeps its halves per function
        "value and gradients (split)": lambda: mlc.value_and_grad(
            functools.wraps(loss)(lambda *a: loss(*a)), argnums, split=True
        ),
        "training step (SGD, momentum)": whole_step,
    }
    args = (*params, *batch)
    samples: dict[str, list[float]] = {label: [] for label in rows}
    for _ in range(rounds):
        for label, make in rows.items():
            samples[label].append(compile_seconds(make, args))
    seconds = {label: statistics.median(times) for label, times in samples.items()}
    forward = seconds["forward (`mlc.jit(loss)`)"]
    lines = [f"### {name}", "", "| compiled | CPU s | / forward |", "|---|---|---|"]
    lines += [f"| {label} | {s:.2f} | {s / forward:.2f} |" for label, s in seconds.items()]
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "training.md")
    parser.add_argument(
        "--threads", type=int, default=0, help="threads of every system (0: the usable cores)"
    )
    parser.add_argument(
        "--compile", action="store_true", help="compile times of a step against its forward"
    )
    parser.add_argument(
        "--compile-rounds", type=int, default=3, help="rounds of `--compile`'s alternated rows"
    )
    parser.add_argument("--target", choices=["cpu", "cuda"], default="cpu")
    args = parser.parse_args()
    if args.compile:
        os.environ["MLC_CACHE"] = "0"
        mlc.jit(lambda x: x + 1)(np.ones(2, np.float32))  # imports and first-use setup
        cnn = _example("train_cnn")
        lines = ["## Compile time of a step against its forward", "", *describe(), ""]
        lines += [f"{args.compile_rounds} rounds, rows alternated, medians.", ""]
        rounds = args.compile_rounds
        lines += compile_rows("MLP 784-1024-1024-10, batch 64", mlp_loss, mlp_case, rounds)
        lines += compile_rows(
            "Small CNN (examples/train_cnn.py), batch 32", cnn.loss_fn, cnn_case, rounds
        )
        print("\n".join(lines))
        return
    if args.threads:  # read by mlc's pool at each parallel loop, by XLA when JAX loads
        os.environ["MLC_NUM_THREADS"] = str(args.threads)
        os.environ["XLA_FLAGS"] = (
            f"--xla_cpu_multi_thread_eigen={'true' if args.threads > 1 else 'false'} "
            f"intra_op_parallelism_threads={args.threads}"
        )
    cnn = _example("train_cnn")
    if args.target == "cuda":
        from mlc.backend.cuda import device

        lines = ["# Training step on the GPU: mlc against torch eager", "", *describe(), ""]
        lines += [f"GPU: {device().name} ({device().sm}).", ""]
        threads = "each step followed by a device synchronisation"
        out = args.out.with_name("training_cuda.md") if args.out.name == "training.md" else args.out
    else:
        lines = ["# Training step: mlc against torch eager and JAX jit", "", *describe(), ""]
        threads = f"{thread_count()} thread{'s' if thread_count() > 1 else ''} per system"
        out = args.out
    per_round = (
        "one step per system per round"
        if args.target == "cuda"
        else "a 0.3 s burst of steps per system per round (those after its first 0.1 s)"
    )
    lines += [f"{args.rounds} rounds, {per_round}, medians; {threads}.", ""]
    lines += workload(
        "MLP 784-1024-1024-10, batch 64", mlp_loss, mlp_case, "mlp", args.rounds, args.target
    )
    lines += workload(
        "Small CNN (examples/train_cnn.py), batch 32",
        cnn.loss_fn,
        cnn_case,
        "cnn",
        args.rounds,
        args.target,
    )
    out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
