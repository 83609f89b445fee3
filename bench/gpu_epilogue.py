"""
What a fused epilogue costs the wgmma kernel: a BERT-base feed-forward pair in bf16
(4096x768 by 768x3072, then by 3072x768) on cuda, its first product with no
epilogue but a relu, a bias, the bias and erf GELU, or the bias and tanh GELU;
kernel times from `exe.profile`.

Run on a GPU machine: `python3 bench/gpu_epilogue.py`.
"""

import numpy as np

import mlc

M, K, N = 4096, 768, 3072
T, OUT = f"tensor<{M}x{N}xf32>", f"tensor<{M}x{K}xf32>"
BIAS = f"%y0 = ml.add %m, %b : ({T}, tensor<{N}xf32>) -> {T}"
EPILOGUES = {
    "relu": f"%y = ml.relu %m : ({T}) -> {T}",
    "bias": f"%y = ml.add %m, %b : ({T}, tensor<{N}xf32>) -> {T}",
    "bias, erf GELU": f"{BIAS}\n  %y = ml.gelu %y0 : ({T}) -> {T}",
    "bias, tanh GELU": f'{BIAS}\n  %y = ml.gelu %y0 {{approximate = "tanh"}} : ({T}) -> {T}',
}


def program(epilogue: str) -> str:
    return f"""
func.func @main(%x: tensor<{M}x{K}xf32>, %w: tensor<{K}x{N}xf32>, %b: tensor<{N}xf32>,
                %w2: tensor<{N}x{K}xf32>) -> {OUT} {{
  %m = ml.matmul %x, %w : (tensor<{M}x{K}xf32>, tensor<{K}x{N}xf32>) -> {T}
  {epilogue}
  %o = ml.matmul %y, %w2 : ({T}, tensor<{N}x{K}xf32>) -> {OUT}
  func.return %o : {OUT}
}}"""


def main() -> None:
    rng = np.random.default_rng(0)
    args = (
        rng.standard_normal((M, K), dtype=np.float32),
        (rng.standard_normal((K, N)) / np.sqrt(K)).astype(np.float32),
        rng.standard_normal(N).astype(np.float32),
        (rng.standard_normal((N, K)) / np.sqrt(N)).astype(np.float32),
    )
    print("| first product's epilogue | its kernel us | TFLOP/s |\n|---|---|---|")
    for name, epilogue in EPILOGUES.items():
        exe = mlc.compile(program(epilogue), target="cuda", precision="bf16")
        layers = exe.profile(*args, repeat=20).as_json()["layers"]
        # the fused first product: its layer lists the most source lines (matmul, epilogue)
        first = max(layers, key=lambda layer: (len(layer["sources"]), layer["seconds"]))
        seconds = first["seconds"]
        print(f"| {name} | {seconds * 1e6:.1f} | {2 * M * K * N / seconds / 1e12:.0f} |")


if __name__ == "__main__":
    main()
