"""
Whole models in bf16 on the GPU (`bench/gpu.py --only bf16-models`): mlc with
`precision="bf16"` (autocast: matmuls and convolutions on the 16-bit tensor cores, f32
accumulation, softmax and normalisation statistics in f32) against the same network in
torch eager under `torch.autocast(dtype=torch.bfloat16)` and `torch.compile` of it.

- ResNet-50 (`bench/resnet50.py`: torchvision's layout, seeded weights, batch norms
  as a PyTorch export has them) at batch 32 on 224 x 224 images;
- a BERT-base-sized encoder built here: 12 post-norm layers of hidden 768, 12 heads,
  feed-forward 3072 with erf GELU, on hidden states of batch 32 x sequence 128 (no
  embeddings, no mask), attention in the unfused form exporters write.

Both are ONNX models with f32 weights that mlc imports; torch runs the same network
from the models' initializers. The error column is the relative L2 error of mlc's and
of torch eager's bf16 outputs against onnxruntime's f32 on the CPU (torch's f32 where
onnxruntime is not installed).
"""

from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx_models import GraphBuilder
from resnet50 import STAGES, resnet50

import mlc

BATCH = 32
SEQUENCE, HIDDEN, HEADS, FEED_FORWARD, LAYERS = 128, 768, 12, 3072, 12


class _Encoder(GraphBuilder):
    """A BERT-style encoder as ONNX nodes on (batch, sequence, hidden) hidden states."""

    def __init__(self, batch: int, sequence: int, hidden: int, heads: int):
        super().__init__(seed=768)
        self.shape = (batch, sequence, hidden)
        self.heads = heads

    def linear(self, x: str, name: str, fan_in: int, fan_out: int) -> str:
        w = self.weight(f"{name}.weight", (fan_in, fan_out), fan_in)
        bias = self.weight(f"{name}.bias", (fan_out,), fan_in)
        return self.node("Add", [self.node("MatMul", [x, w], f"{name}.matmul"), bias], name)

    def layer_norm(self, x: str, name: str) -> str:
        hidden = self.shape[-1]
        scale = self.const(f"{name}.weight", self.rng.uniform(0.5, 1.5, hidden).astype(np.float32))
        shift = self.const(f"{name}.bias", self.rng.uniform(-0.1, 0.1, hidden).astype(np.float32))
        return self.node("LayerNormalization", [x, scale, shift], name, axis=-1, epsilon=1e-12)

    def heads_of(self, x: str, name: str) -> str:
        batch, sequence, hidden = self.shape
        split = np.array([batch, sequence, self.heads, hidden // self.heads], np.int64)
        x = self.node("Reshape", [x, self.const(f"{name}.split", split)], f"{name}.reshape")
        return self.node("Transpose", [x], f"{name}.heads", perm=[0, 2, 1, 3])

    def attention(self, x: str, name: str) -> str:
        hidden = self.shape[-1]
        q, k, v = (
            self.heads_of(self.linear(x, f"{name}.{p}", hidden, hidden), f"{name}.{p}")
            for p in "qkv"
        )
        kt = self.node("Transpose", [k], f"{name}.kt", perm=[0, 1, 3, 2])
        scale = self.const(f"{name}.scale", np.array(1 / np.sqrt(hidden // self.heads), np.float32))
        scores = self.node("Mul", [self.node("MatMul", [q, kt], f"{name}.qk"), scale], f"{name}.s")
        probs = self.node("Softmax", [scores], f"{name}.softmax", axis=-1)
        context = self.node("MatMul", [probs, v], f"{name}.context")
        context = self.node("Transpose", [context], f"{name}.merge", perm=[0, 2, 1, 3])
        flat = self.const(f"{name}.flat", np.array(self.shape, np.int64))
        context = self.node("Reshape", [context, flat], f"{name}.merged")
        return self.linear(context, f"{name}.out", hidden, hidden)

    def gelu(self, x: str, name: str) -> str:
        """x * 0.5 * (1 + erf(x / sqrt(2))), as PyTorch exports GELU before opset 20."""
        root2 = self.const(f"{name}.sqrt2", np.array(np.sqrt(2.0), np.float32))
        one = self.const(f"{name}.one", np.array(1.0, np.float32))
        half = self.const(f"{name}.half", np.array(0.5, np.float32))
        erf = self.node("Erf", [self.node("Div", [x, root2], f"{name}.div")], f"{name}.erf")
        gate = self.node("Mul", [self.node("Add", [erf, one], f"{name}.add"), half], f"{name}.g")
        return self.node("Mul", [x, gate], name)

    def layer(self, x: str, name: str, feed_forward: int) -> str:
        hidden = self.shape[-1]
        attended = self.attention(x, f"{name}.attn")
        x = self.layer_norm(self.node("Add", [x, attended], f"{name}.res1"), f"{name}.ln1")
        h = self.gelu(self.linear(x, f"{name}.fc1", hidden, feed_forward), f"{name}.gelu")
        h = self.linear(h, f"{name}.fc2", feed_forward, hidden)
        return self.layer_norm(self.node("Add", [x, h], f"{name}.res2"), f"{name}.ln2")


def encoder(
    batch: int = BATCH,
    sequence: int = SEQUENCE,
    hidden: int = HIDDEN,
    heads: int = HEADS,
    feed_forward: int = FEED_FORWARD,
    layers: int = LAYERS,
) -> onnx.ModelProto:
    """The BERT-style encoder (module docstring) as an ONNX model with seeded weights."""
    g = _Encoder(batch, sequence, hidden, heads)
    x = "input"
    for index in range(layers):
        x = g.layer(x, f"layer{index}", feed_forward)
    shape = [batch, sequence, hidden]
    return g.model(
        "encoder",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, shape)],
    )


def _initializers(torch, model: onnx.ModelProto) -> dict[str, Any]:
    return {
        t.name: torch.as_tensor(numpy_helper.to_array(t).copy()).cuda()
        for t in model.graph.initializer
    }


def torch_resnet50(torch, model: onnx.ModelProto):
    """`resnet50`'s network in torch, from the model's initializers."""
    p, functional = _initializers(torch, model), torch.nn.functional

    def conv_bn(x, name, stride=1):
        w = p[f"{name}.weight"]
        y = functional.conv2d(x, w, stride=stride, padding=w.shape[-1] // 2)
        bn = [p[f"{name}.bn.{k}"] for k in ("mean", "var", "scale", "bias")]
        return functional.batch_norm(y, *bn, training=False, eps=1e-5)

    def bottleneck(x, name, stride):
        y = torch.relu(conv_bn(x, f"{name}.conv1"))
        y = torch.relu(conv_bn(y, f"{name}.conv2", stride))
        y = conv_bn(y, f"{name}.conv3")
        if f"{name}.downsample.weight" in p:
            x = conv_bn(x, f"{name}.downsample", stride)
        return torch.relu(y + x)

    def net(x):
        x = torch.relu(conv_bn(x, "stem", 2))
        x = functional.max_pool2d(x, 3, 2, padding=1)
        for stage, (_, blocks, stride) in enumerate(STAGES, start=1):
            for block in range(blocks):
                x = bottleneck(x, f"layer{stage}.{block}", stride if block == 0 else 1)
        return functional.linear(x.mean((2, 3)), p["fc.weight"], p["fc.bias"])

    return net


def torch_encoder(torch, model: onnx.ModelProto, heads: int = HEADS):
    """`encoder`'s network in torch, from the model's initializers."""
    p, functional = _initializers(torch, model), torch.nn.functional
    layers = len({name.split(".")[0] for name in p})
    # (out, in) weights, as `torch.nn.Linear` holds them: one bf16 GEMM with its bias
    transposed = {name: w.T.contiguous() for name, w in p.items() if w.dim() == 2}

    def linear(x, name):
        return functional.linear(x, transposed[f"{name}.weight"], p[f"{name}.bias"])

    def layer_norm(x, name):
        shape = (x.shape[-1],)
        return functional.layer_norm(x, shape, p[f"{name}.weight"], p[f"{name}.bias"], 1e-12)

    def attention(x, name):
        batch, sequence, hidden = x.shape
        q, k, v = (
            linear(x, f"{name}.{part}").reshape(batch, sequence, heads, -1).transpose(1, 2)
            for part in "qkv"
        )
        scores = (q @ k.transpose(-1, -2)) * p[f"{name}.scale"]
        context = torch.softmax(scores, dim=-1) @ v
        return linear(context.transpose(1, 2).reshape(batch, sequence, hidden), f"{name}.out")

    def net(x):
        for index in range(layers):
            name = f"layer{index}"
            x = layer_norm(x + attention(x, f"{name}.attn"), f"{name}.ln1")
            h = functional.gelu(linear(x, f"{name}.fc1"))
            x = layer_norm(x + linear(h, f"{name}.fc2"), f"{name}.ln2")
        return x

    return net


def _reference(torch, model: onnx.ModelProto, net, x) -> Any:
    """The model's f32 output on `x`: onnxruntime on the CPU, else torch in f32."""
    try:
        import onnxruntime
    except ImportError:
        with torch.no_grad():
            return net(x)
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (out,) = session.run(None, {model.graph.input[0].name: x.cpu().numpy()})
    return torch.as_tensor(out, device=x.device)


def rows(gpu, repeats: int, compare, back_to_back_time, rel_error) -> list[str]:
    """The two models' rows: mlc bf16 against torch eager (autocast bf16) and
    `torch.compile`; the timing helpers are bench/gpu.py's."""
    torch = gpu.torch
    cases = [
        ("ResNet-50, batch 32, 224x224", resnet50(BATCH), torch_resnet50, (BATCH, 3, 224, 224)),
        (
            f"BERT-base encoder ({LAYERS} layers), batch 32, sequence 128",
            encoder(),
            torch_encoder,
            (BATCH, SEQUENCE, HIDDEN),
        ),
    ]
    out: list[str] = []
    for name, model, mirror, shape in cases:
        net = mirror(torch, model)
        exe = mlc.compile(model, target="cuda", precision="bf16")
        x = gpu.randn(*shape)
        vx = gpu.view(x)

        def eager(net=net, x=x):
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                return net(x)

        compiled_net = torch.compile(net)

        def compiled(compiled_net=compiled_net, x=x):
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                return compiled_net(x)

        want = _reference(torch, model, net, x).float()
        ours = rel_error(torch, exe(vx), want)
        theirs = float(torch.linalg.norm(eager().float() - want) / torch.linalg.norm(want))
        contenders = {"mlc": lambda exe=exe, vx=vx: exe(vx), "eager": eager}
        try:
            compiled()  # compiles (minutes): a failure leaves the row without it
            contenders["compiled"] = compiled
        except Exception as error:  # reported in the table, not fatal
            print(f"bench/gpu_models.py: torch.compile failed on {name}: {error}")
        ms = compare(torch, contenders, repeats)
        b2b = compare(torch, contenders, max(repeats // 4, 3), timer=back_to_back_time)
        per_second = BATCH / ms["mlc"] * 1e3
        for against, label in (
            ("eager", "torch eager, autocast bf16"),
            ("compiled", "torch.compile"),
        ):
            if against not in ms:
                out.append(f"| {name}, bf16, vs {label} | {ms['mlc']:.2f} | failed | | | | |")
                continue
            out.append(
                f"| {name}, bf16, vs {label} | {ms['mlc']:.2f} | {ms[against]:.2f} | "
                f"{ms[against] / ms['mlc']:.2f} | {b2b['mlc']:.2f} / {b2b[against]:.2f} | "
                f"{per_second:.0f}/s vs {BATCH / ms[against] * 1e3:.0f}/s | "
                f"{ours:.1e} (torch bf16 {theirs:.1e}) |"
            )
    return out
