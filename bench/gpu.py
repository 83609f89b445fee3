"""
The GPU backend against the device's own ceilings and torch eager, in one process.

1. elementwise chain `relu(a*b+c)*0.5+d` on 16M f32: its useful bytes (4 reads and
   1 write of 64 MiB) per second, against the device-to-device copy bandwidth measured
   here (torch `copy_`, bytes read plus written), and against torch eager; softmax and
   layer norm over the rows of a 4096 x 4096 matrix likewise (one read, one write);
2. f32 matmul 4096 x 4096 against torch (cuBLAS, TF32 off), and with tf32 allowed on
   both sides (mlc's tensor-core kernel against cuBLAS's; error against float64);
   the tensor-core kernels at 4096 and 8192 in f16, bf16 and tf32 against cuBLAS in
   the same precision (`--only tensor-cores`; error against float64 of the same inputs);
   bf16 at 4096 and 8192 with the wgmma kernel's operands copied by cp.async and by
   TMA (`--only wgmma-feed`);
3. `examples/mlp.mlir` (batch 8192) and `examples/transformer_block.mlir` end to end
   against the same model in torch eager;
4. one convolution (64 -> 64 channels, 3x3, padding 1, 56x56, batch 32) against
   torch's cuDNN (TF32 off, `cudnn.benchmark` on: its fastest algorithm), in TFLOP/s;
   the ResNet-style CNN of `examples/onnx_models.py` at batch 1 and 32 end to end
   against the same network in torch eager, built from the model's initializers;
5. `ml.attention` in f16 and bf16 (batch 4, 16 heads, sequence 1024 and 4096, head dim
   64 and 128, causal or not; mlc's tensor-core kernel) against torch's
   `scaled_dot_product_attention` on its flash backend, in TFLOP/s (a causal one counts
   half the scores);
6. whole models under `precision="bf16"` (`bench/gpu_models.py`): ResNet-50 and a
   BERT-base-sized encoder at batch 32 against torch eager under autocast bf16 and
   `torch.compile` of it (`--only bf16-models`).

All inputs live on the device and are shared: mlc gets them as pycuda `GPUArray`s
over torch's memory, so nothing is copied and both sides run the same work on the
legacy default stream. Each case is timed with CUDA events around one call, after
warm-up, alternating the two systems, median of the repeats, and (except the matmul)
also as 20 calls issued back to back, which overlaps each call's host work with the
GPU's; every result is checked against torch first (relative L2 error).

Run on a machine with a GPU, with mlc's `gpu` extra installed (pycuda, and torch for the
inputs and the reference column): `python bench/gpu.py [--out bench/results/gpu.md]`.
Without one of them it stops with a one-line error that names the extra.
"""

import argparse
import os
import statistics
import sys
from pathlib import Path

from gpu_setup import ROOT, Device, publish

import mlc
from mlc import pipeline
from mlc.backend.cuda import CudaUnavailableError
from mlc.extras import MissingDependencyError

sys.path.insert(0, str(ROOT / "examples"))
import gpu_models
import onnx_models

CHAIN = """
func.func @chain(%a: tensor<16777216xf32>, %b: tensor<16777216xf32>,
                 %c: tensor<16777216xf32>, %d: tensor<16777216xf32>) -> tensor<16777216xf32> {
  %half = arith.constant dense<0.5> : tensor<f32>
  %ab = ml.mul %a, %b : (tensor<16777216xf32>, tensor<16777216xf32>) -> tensor<16777216xf32>
  %abc = ml.add %ab, %c : (tensor<16777216xf32>, tensor<16777216xf32>) -> tensor<16777216xf32>
  %r = ml.relu %abc : (tensor<16777216xf32>) -> tensor<16777216xf32>
  %h = ml.mul %r, %half : (tensor<16777216xf32>, tensor<f32>) -> tensor<16777216xf32>
  %y = ml.add %h, %d : (tensor<16777216xf32>, tensor<16777216xf32>) -> tensor<16777216xf32>
  func.return %y : tensor<16777216xf32>
}
"""

CONV = """
func.func @conv(%x: tensor<32x64x56x56xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<32x64x56x56xf32> {
  %y = ml.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>}
      : (tensor<32x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<32x64x56x56xf32>
  func.return %y : tensor<32x64x56x56xf32>
}
"""

ROWS = """
func.func @softmax(%x: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %y = ml.softmax %x {axis = -1 : i64} : (tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  func.return %y : tensor<4096x4096xf32>
}
func.func @layer_norm(%x: tensor<4096x4096xf32>, %g: tensor<4096xf32>, %b: tensor<4096xf32>)
    -> tensor<4096x4096xf32> {
  %y = ml.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32}
      : (tensor<4096x4096xf32>, tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096x4096xf32>
  func.return %y : tensor<4096x4096xf32>
}
"""

MATMUL = """
func.func @mm(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %c = ml.matmul %a, %b : (tensor<4096x4096xf32>, tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  func.return %c : tensor<4096x4096xf32>
}
"""


def event_time(torch, fn) -> float:
    """Milliseconds one call of `fn` takes on the GPU (CUDA events around it)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def back_to_back_time(torch, fn, calls: int = 20) -> float:
    """Milliseconds per call of `calls` calls issued back to back (host work overlapped)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / calls


def compare(
    torch, contenders: dict, repeats: int, warmup: int = 3, timer=event_time
) -> dict[str, float]:
    """Median milliseconds of each contender, timed alternately."""
    for fn in contenders.values():
        for _ in range(warmup):
            fn()
    torch.cuda.synchronize()
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, fn in contenders.items():
            times[name].append(timer(torch, fn))
    return {name: statistics.median(values) for name, values in times.items()}


def streamed(torch, contenders: dict, repeats: int) -> str:
    """The back-to-back milliseconds per call of mlc and torch, as a table cell."""
    ms = compare(torch, contenders, max(repeats // 4, 3), timer=back_to_back_time)
    return f"{ms['mlc']:.3f} / {ms['torch']:.3f}"


def rel_error(torch, got, want) -> float:
    got_t = torch.as_tensor(got.get()).to(want.device).double()
    want = want.double()
    return float(torch.linalg.norm(got_t - want) / torch.linalg.norm(want))


def torch_cnn(torch, model):
    """`examples/onnx_models.cnn` in torch eager, from the model's own initializers."""
    from onnx import numpy_helper

    p = {t.name: torch.as_tensor(numpy_helper.to_array(t)).cuda() for t in model.graph.initializer}
    functional = torch.nn.functional

    def conv_bn(x, name, stride=1):
        y = functional.conv2d(x, p[f"{name}.weight"], stride=stride, padding=1)
        bn = [p[f"{name}.bn.{k}"] for k in ("mean", "var", "scale", "bias")]
        return functional.batch_norm(y, *bn, training=False, eps=1e-5)

    def residual(x, name):
        y = torch.relu(conv_bn(x, f"{name}.conv1"))
        return torch.relu(conv_bn(y, f"{name}.conv2") + x)

    def net(x):
        x = functional.max_pool2d(torch.relu(conv_bn(x, "stem")), 2, 2)
        x = residual(x, "layer1")
        x = residual(torch.relu(conv_bn(x, "down", 2)), "layer2")
        return torch.flatten(x.mean((2, 3)), 1) @ p["fc.weight"].T + p["fc.bias"]

    return net


def chain_rows(gpu: Device, repeats: int) -> list[str]:
    """The elementwise chain against the copy bandwidth and torch."""
    torch, randn, view = gpu.torch, gpu.randn, gpu.view
    rows: list[str] = []
    # 1. copy bandwidth and the elementwise chain
    n = 16 * 1024 * 1024
    src, dst = randn(n), torch.empty(n, device="cuda")
    copy_ms = compare(torch, {"copy": lambda: dst.copy_(src)}, repeats)["copy"]
    copy_gbs = 2 * n * 4 / copy_ms / 1e6
    a, b, c, d = (randn(n) for _ in range(4))
    va, vb, vc, vd = (view(t) for t in (a, b, c, d))
    chain = mlc.compile(CHAIN, target="cuda")

    def chain_torch():
        return torch.relu(a * b + c) * 0.5 + d

    err = rel_error(torch, chain(va, vb, vc, vd), chain_torch())
    contenders = {"mlc": lambda: chain(va, vb, vc, vd), "torch": chain_torch}
    ms = compare(torch, contenders, repeats)
    chain_gbs = 5 * n * 4 / ms["mlc"] / 1e6
    rows.append(
        f"| chain relu(a*b+c)*0.5+d, 16M f32 | {ms['mlc']:.3f} | {ms['torch']:.3f} | "
        f"{ms['torch'] / ms['mlc']:.2f} | {streamed(torch, contenders, repeats)} | "
        f"{chain_gbs:.0f} GB/s useful = "
        f"{chain_gbs / copy_gbs:.0%} of copy ({copy_gbs:.0f} GB/s) | {err:.1e} |"
    )
    return rows


def row_rows(gpu: Device, repeats: int) -> list[str]:
    """Softmax and layer norm over the rows of a 4096 x 4096 f32 matrix against torch, and
    their useful bytes (one read, one write) per second against the copy bandwidth."""
    torch, randn, view = gpu.torch, gpu.randn, gpu.view
    rows: list[str] = []
    n = 4096
    src, dst = randn(n * n), torch.empty(n * n, device="cuda")
    copy_ms = compare(torch, {"copy": lambda: dst.copy_(src)}, repeats)["copy"]
    copy_gbs = 2 * n * n * 4 / copy_ms / 1e6
    x, g, b = randn(n, n) * 4, randn(n), randn(n)
    vx, vg, vb = view(x), view(g), view(b)
    exe = mlc.compile(ROWS, target="cuda")
    functional = torch.nn.functional
    cases = {
        "softmax": (lambda: exe["softmax"](vx), lambda: torch.softmax(x, dim=-1)),
        "layer norm": (
            lambda: exe["layer_norm"](vx, vg, vb),
            lambda: functional.layer_norm(x, (n,), g, b, 1e-5),
        ),
    }
    for name, (ours, theirs) in cases.items():
        err = rel_error(torch, ours(), theirs())
        ms = compare(torch, {"mlc": ours, "torch": theirs}, repeats)
        gbs = 2 * n * n * 4 / ms["mlc"] / 1e6
        rows.append(
            f"| {name} 4096x4096 f32, rows | {ms['mlc']:.3f} | {ms['torch']:.3f} | "
            f"{ms['torch'] / ms['mlc']:.2f} | | {gbs:.0f} GB/s useful = "
            f"{gbs / copy_gbs:.0%} of copy ({copy_gbs:.0f} GB/s) | {err:.1e} |"
        )
    return rows


def matmul_rows(gpu: Device, repeats: int) -> list[str]:
    """f32 matmul 4096 against cuBLAS, and with tf32 on both sides."""
    torch, randn, view = gpu.torch, gpu.randn, gpu.view
    rows: list[str] = []
    # 2. f32 matmul 4096
    size = 4096
    ma, mb = randn(size, size), randn(size, size)
    mm = mlc.compile(MATMUL, target="cuda")
    vma, vmb = view(ma), view(mb)
    err = rel_error(torch, mm(vma, vmb), ma @ mb)
    ms = compare(torch, {"mlc": lambda: mm(vma, vmb), "torch": lambda: ma @ mb}, 5, warmup=1)
    tflops = 2 * size**3 / ms["mlc"] / 1e9
    rows.append(
        f"| matmul 4096 f32 (TF32 off) | {ms['mlc']:.2f} | {ms['torch']:.2f} | "
        f"{ms['torch'] / ms['mlc']:.2f} | | {tflops:.1f} TFLOP/s vs "
        f"{2 * size**3 / ms['torch'] / 1e9:.1f} (cuBLAS) | {err:.1e} |"
    )

    # 2b. the same matmul on the tensor cores, tf32 allowed on both sides
    mm_tf32 = mlc.compile(MATMUL, target="cuda", allow_tf32=True)

    def torch_tf32():
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            return ma @ mb
        finally:
            torch.backends.cuda.matmul.allow_tf32 = False

    err = rel_error(torch, mm_tf32(vma, vmb), ma.double() @ mb.double())
    ms = compare(torch, {"mlc": lambda: mm_tf32(vma, vmb), "torch": torch_tf32}, 5, warmup=1)
    tflops = 2 * size**3 / ms["mlc"] / 1e9
    rows.append(
        f"| matmul 4096 tf32 (TF32 on both) | {ms['mlc']:.2f} | {ms['torch']:.2f} | "
        f"{ms['torch'] / ms['mlc']:.2f} | | {tflops:.1f} TFLOP/s vs "
        f"{2 * size**3 / ms['torch'] / 1e9:.1f} (cuBLAS) | {err:.1e} |"
    )
    return rows


SQUARE = """
func.func @mm(%a: tensor<NxNxT>, %b: tensor<NxNxT>) -> tensor<NxNxT> {
  %c = ml.matmul %a, %b : (tensor<NxNxT>, tensor<NxNxT>) -> tensor<NxNxT>
  func.return %c : tensor<NxNxT>
}
"""


def tensor_core_rows(gpu: Device, repeats: int) -> list[str]:
    """f16, bf16 and tf32 matmuls at 4096 and 8192 against cuBLAS in the same precision."""
    import numpy as np
    from pycuda.gpuarray import GPUArray

    torch = gpu.torch
    kinds = {  # name: (element, torch dtype, numpy dtype, tf32 allowed)
        "f16": ("f16", torch.float16, np.float16, False),
        "tf32": ("f32", torch.float32, np.float32, True),
    }
    try:  # bf16 arrays through numpy need ml_dtypes
        import ml_dtypes

        kinds["bf16"] = ("bf16", torch.bfloat16, ml_dtypes.bfloat16, False)
    except ImportError:
        pass
    rows: list[str] = []
    for size in (4096, 8192):
        a32, b32 = gpu.randn(size, size), gpu.randn(size, size)
        want = a32.double() @ b32.double()
        for name, (element, dtype, numpy_dtype, tf32) in kinds.items():
            a, b = a32.to(dtype), b32.to(dtype)
            program = SQUARE.replace("N", str(size)).replace("T>", f"{element}>")
            mm = mlc.compile(program, target="cuda", allow_tf32=tf32)
            va, vb = (GPUArray(tuple(t.shape), numpy_dtype, gpudata=t.data_ptr()) for t in (a, b))

            def cublas(a=a, b=b, tf32=tf32):
                torch.backends.cuda.matmul.allow_tf32 = tf32
                try:
                    return a @ b
                finally:
                    torch.backends.cuda.matmul.allow_tf32 = False

            reference = want if tf32 else a.double() @ b.double()
            got = np.asarray(mm(va, vb).get()).astype(np.float64)  # bf16: no torch dtype
            got = torch.as_tensor(got, device=reference.device)
            err = float(torch.linalg.norm(got - reference) / torch.linalg.norm(reference))
            ms = compare(
                torch, {"mlc": lambda mm=mm, va=va, vb=vb: mm(va, vb), "torch": cublas}, 5, warmup=1
            )
            flops = 2 * size**3 / 1e9
            rows.append(
                f"| matmul {size} {name} (tensor cores, same precision) | {ms['mlc']:.2f} | "
                f"{ms['torch']:.2f} | {ms['torch'] / ms['mlc']:.2f} | | "
                f"{flops / ms['mlc']:.1f} TFLOP/s vs {flops / ms['torch']:.1f} (cuBLAS) "
                f"| {err:.1e} |"
            )
    return rows


def wgmma_feed_rows(gpu: Device, repeats: int) -> list[str]:
    """bf16 matmuls at 4096 and 8192 by the wgmma kernel with cp.async copies
    (`MLC_WGMMA=cp.async`) and with TMA from a producer warpgroup (the default), against cuBLAS,
    the three alternating (a site's maps are encoded at its first call, in the warm-up)."""
    import ml_dtypes
    import numpy as np
    from pycuda.gpuarray import GPUArray

    torch = gpu.torch
    rows: list[str] = []
    for size in (4096, 8192):
        a, b = (gpu.randn(size, size).to(torch.bfloat16) for _ in range(2))
        program = SQUARE.replace("N", str(size)).replace("T>", "bf16>")
        feeds = {}
        for feed, choice in (("cp.async", "cp.async"), ("TMA", "tma")):
            os.environ[pipeline.WGMMA_VARIABLE] = choice
            try:
                feeds[feed] = mlc.compile(program, target="cuda")
            finally:
                del os.environ[pipeline.WGMMA_VARIABLE]
        va, vb = (GPUArray((size, size), ml_dtypes.bfloat16, gpudata=t.data_ptr()) for t in (a, b))
        reference = a.double() @ b.double()
        errors = {}
        for feed, mm in feeds.items():
            got = torch.as_tensor(np.asarray(mm(va, vb).get()).astype(np.float64))
            got = got.to(reference.device)
            errors[feed] = float(torch.linalg.norm(got - reference) / torch.linalg.norm(reference))
        contenders = {feed: (lambda mm=mm: mm(va, vb)) for feed, mm in feeds.items()}
        ms = compare(torch, {**contenders, "torch": lambda: a @ b}, 5, warmup=1)
        flops = 2 * size**3 / 1e9
        for feed in feeds:
            rows.append(
                f"| matmul {size} bf16 wgmma, {feed} copies | {ms[feed]:.2f} | "
                f"{ms['torch']:.2f} | {ms['torch'] / ms[feed]:.2f} | | "
                f"{flops / ms[feed]:.1f} TFLOP/s vs {flops / ms['torch']:.1f} (cuBLAS); "
                f"cp.async / {feed} {ms['cp.async'] / ms[feed]:.2f} | {errors[feed]:.1e} |"
            )
    return rows


def model_rows(gpu: Device, repeats: int) -> list[str]:
    """The MLP and the transformer block against torch eager."""
    torch, randn, view = gpu.torch, gpu.randn, gpu.view
    rows: list[str] = []
    # 3. the MLP and the transformer block
    batch = 8192
    x, w1, b1 = randn(batch, 784), randn(784, 128) * 0.05, randn(128)
    w2, b2 = randn(128, 10) * 0.1, randn(10)
    mlp = mlc.compile(str(ROOT / "examples/mlp.mlir"), target="cuda")
    mlp_args = [view(t) for t in (x, w1, b1, w2, b2)]

    def mlp_torch():
        return torch.softmax(torch.relu(x @ w1 + b1) @ w2 + b2, dim=-1)

    err = rel_error(torch, mlp(*mlp_args), mlp_torch())
    contenders = {"mlc": lambda: mlp(*mlp_args), "torch": mlp_torch}
    ms = compare(torch, contenders, repeats)
    rows.append(
        f"| MLP 784-128-10, batch {batch} | {ms['mlc']:.3f} | {ms['torch']:.3f} | "
        f"{ms['torch'] / ms['mlc']:.2f} | {streamed(torch, contenders, repeats)} | | "
        f"{err:.1e} |"
    )

    tx = randn(64, 128)
    g1, be1, g2, be2 = randn(128), randn(128), randn(128), randn(128)
    wq, wk, wv = (randn(128, 128) * 0.09 for _ in range(3))
    tw1, tw2 = randn(128, 512) * 0.09, randn(512, 128) * 0.04
    block = mlc.compile(str(ROOT / "examples/transformer_block.mlir"), target="cuda")
    block_args = [view(t) for t in (tx, g1, be1, wq, wk, wv, g2, be2, tw1, tw2)]
    functional = torch.nn.functional

    def block_torch():
        n1 = functional.layer_norm(tx, (128,), g1, be1, 1e-5)
        q, k, v = n1 @ wq, n1 @ wk, n1 @ wv
        p = torch.softmax((q @ k.T) * 0.0883883461, dim=-1)
        h = tx + p @ v
        n2 = functional.layer_norm(h, (128,), g2, be2, 1e-5)
        return h + functional.gelu(n2 @ tw1, approximate="tanh") @ tw2

    err = rel_error(torch, block(*block_args), block_torch())
    contenders = {"mlc": lambda: block(*block_args), "torch": block_torch}
    ms = compare(torch, contenders, repeats)
    rows.append(
        f"| transformer block 64x128 | {ms['mlc']:.3f} | {ms['torch']:.3f} | "
        f"{ms['torch'] / ms['mlc']:.2f} | {streamed(torch, contenders, repeats)} | | "
        f"{err:.1e} |"
    )
    return rows


def conv_rows(gpu: Device, repeats: int) -> list[str]:
    """One convolution against cuDNN; the CNN at batch 1 and 32 against torch."""
    torch, randn, view = gpu.torch, gpu.randn, gpu.view
    rows: list[str] = []
    # 4. a convolution, and the CNN at batch 1 and 32
    x, w = randn(32, 64, 56, 56), randn(64, 64, 3, 3) * 0.05
    conv = mlc.compile(CONV, target="cuda")
    vx, vw = view(x), view(w)
    functional = torch.nn.functional
    torch.backends.cudnn.benchmark = True

    def conv_torch():
        return functional.conv2d(x, w, padding=1)

    err = rel_error(torch, conv(vx, vw), conv_torch())
    ms = compare(torch, {"mlc": lambda: conv(vx, vw), "torch": conv_torch}, repeats)
    flops = 2 * 32 * 64 * 56 * 56 * 64 * 9
    rows.append(
        f"| conv 64->64 3x3 pad 1, 56x56, batch 32 | {ms['mlc']:.3f} | {ms['torch']:.3f} | "
        f"{ms['torch'] / ms['mlc']:.2f} | | {flops / ms['mlc'] / 1e9:.1f} TFLOP/s vs "
        f"{flops / ms['torch'] / 1e9:.1f} (cuDNN) | {err:.1e} |"
    )
    for batch in (1, 32):
        model = onnx_models.cnn(batch)
        net = torch_cnn(torch, model)
        cnn = mlc.compile(model, target="cuda")
        image = randn(batch, 3, 32, 32)
        vimage = view(image)
        err = rel_error(torch, cnn(vimage), net(image))
        contenders = {"mlc": lambda cnn=cnn, v=vimage: cnn(v), "torch": lambda n=net, i=image: n(i)}
        ms = compare(torch, contenders, repeats)
        rows.append(
            f"| CNN (examples/onnx_models.py), batch {batch} | {ms['mlc']:.3f} | "
            f"{ms['torch']:.3f} | {ms['torch'] / ms['mlc']:.2f} | "
            f"{streamed(torch, contenders, repeats)} | | {err:.1e} |"
        )
    torch.backends.cudnn.benchmark = False
    return rows


def attention_text(seq: int, dim: int, causal: bool, element: str = "f16") -> str:
    t = f"tensor<4x16x{seq}x{dim}x{element}>"
    attrs = f"{{scale = {dim**-0.5!r} : f64, causal = {str(causal).lower()}}}"
    return f"""
func.func @attention(%q: {t}, %k: {t}, %v: {t}) -> {t} {{
  %o = ml.attention %q, %k, %v {attrs} : ({t}, {t}, {t}) -> {t}
  func.return %o : {t}
}}
"""


def attention_rows(gpu: Device, repeats: int) -> list[str]:
    """f16 and bf16 attention (mlc's tensor-core kernel) against torch's flash backend."""
    import numpy as np

    torch = gpu.torch
    kinds = {"f16": (torch.float16, np.float16)}  # element: (torch dtype, numpy dtype)
    try:  # bf16 arrays through numpy need ml_dtypes
        import ml_dtypes

        kinds["bf16"] = (torch.bfloat16, ml_dtypes.bfloat16)
    except ImportError:
        pass
    rows: list[str] = []
    for element, (dtype, numpy_dtype) in kinds.items():
        for seq in (1024, 4096):
            for dim in (64, 128):
                for causal in (False, True):
                    case = (seq, dim, causal)
                    row = _attention_row(gpu, case, element, dtype, numpy_dtype, repeats)
                    rows.append(row)
    return rows


def _attention_row(gpu: Device, case, element, dtype, numpy_dtype, repeats: int) -> str:
    """One row: `case` = (sequence, head dim, causal) in `element`, mlc against torch."""
    import numpy as np
    from pycuda.gpuarray import GPUArray  # pyright: ignore[reportMissingImports]
    from torch.nn.attention import SDPBackend, sdpa_kernel  # pyright: ignore[reportMissingImports]

    torch = gpu.torch
    seq, dim, causal = case
    q, k, v = (gpu.randn(4, 16, seq, dim).to(dtype) for _ in range(3))
    views = [GPUArray(tuple(x.shape), numpy_dtype, gpudata=x.data_ptr()) for x in (q, k, v)]
    exe = mlc.compile(attention_text(seq, dim, causal, element), target="cuda")

    def ours():
        return exe(*views)

    def theirs():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)

    got = np.asarray(ours().get()).astype(np.float64)  # bf16: no torch dtype through numpy
    want = theirs().double()
    got_t = torch.as_tensor(got, device=want.device)
    err = float(torch.linalg.norm(got_t - want) / torch.linalg.norm(want))
    ms = compare(torch, {"mlc": ours, "torch": theirs}, max(repeats // 4, 3))
    work = 4 * 4 * 16 * seq * seq * dim * (0.5 if causal else 1)
    name = f"attention b4 h16 s{seq} d{dim}{' causal' if causal else ''} {element}"
    return (
        f"| {name} | {ms['mlc']:.3f} | {ms['torch']:.3f} | "
        f"{ms['torch'] / ms['mlc']:.2f} | | {work / ms['mlc'] / 1e9:.1f} TFLOP/s vs "
        f"{work / ms['torch'] / 1e9:.1f} (torch flash) | {err:.1e} |"
    )


def bf16_model_rows(gpu: Device, repeats: int) -> list[str]:
    """ResNet-50 and a BERT-base encoder in bf16 against torch (bench/gpu_models.py)."""
    return gpu_models.rows(gpu, repeats, compare, back_to_back_time, rel_error)


SECTIONS = {
    "chain": chain_rows,
    "rows": row_rows,
    "matmul": matmul_rows,
    "tensor-cores": tensor_core_rows,
    "wgmma-feed": wgmma_feed_rows,
    "models": model_rows,
    "conv": conv_rows,
    "attention": attention_rows,
    "bf16-models": bf16_model_rows,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--out", type=Path, help="write a markdown report here")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument(
        "--only", nargs="+", choices=list(SECTIONS), default=list(SECTIONS), help="these rows only"
    )
    args = parser.parse_args()

    try:
        gpu = Device()
        rows: list[str] = []
        for section in args.only:
            rows += SECTIONS[section](gpu, args.repeats)
    except (MissingDependencyError, CudaUnavailableError) as error:
        print(f"bench/gpu.py: error: {error}", file=sys.stderr)
        return 1
    notes: list[str] = []

    header = [
        "# GPU benchmarks",
        "",
        gpu.versions(),
        f"- method: CUDA events around one call, medians of {args.repeats} alternating runs "
        "(5 for matmul), inputs resident on the device; error is relative L2 against torch;",
        "  back to back: ms per call over 20 calls issued without waiting (host work",
        "  overlapped with the GPU's), median of a quarter as many alternating runs",
        "",
        "| case | mlc ms | torch ms | torch/mlc | back to back mlc / torch ms | throughput "
        "| rel err |",
        "|---|---|---|---|---|---|---|",
    ]
    publish("\n".join(header + rows + [""] + notes) + "\n", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
