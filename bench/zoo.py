"""
The model zoo: small random-weight models of the families people export, as ONNX.

`export` runs where torch, timm and transformers are installed (the GPU machine has
them). For each family it builds a small configuration (hidden sizes 8-64, one or two
blocks), exports it with both of torch's exporters (TorchScript at opset 17 and dynamo
at opset 18) with dynamic batch and sequence axes, runs onnxruntime on two input sets
of different shapes, and writes into tests/zoo/:

- `<name>.onnx`, the model, about 1 MB or less;
- `<name>.npz`, each input set and onnxruntime's outputs for it (`<set>/in/<input>`,
  `<set>/out/<index>`);
- `manifest.json`, one entry per model (family, source, exporter, opset, inputs, the
  dynamic axes), and the models that did not export, with the exporter's message.

`report` compiles every model of the manifest with mlc for the given targets, checks the
outputs, and writes docs/zoo.md: family, exporter, opset, status per target and compile
time. It needs no torch.

    python bench/zoo.py export [--only NAME,...] [--jobs N]
    python bench/zoo.py report [--targets cpu,cuda] [--jobs N]

Each model is built, exported or compiled in a child process of its own, so a crash or
a hang in one (a timeout) is that model's status, not the script's end.
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ZOO = ROOT / "tests" / "zoo"
MANIFEST = ZOO / "manifest.json"
MAX_BYTES = 1_500_000
VOCAB = 96
EXPORTERS = {"torchscript": 17, "dynamo": 18}


# --- the families (run only under `export`: they import torch) ------------------------


def _image_inputs(channels=3, size=32):
    rng = np.random.default_rng(0)
    return {
        "names": ["pixels"],
        "dynamic": {"pixels": {0: "batch"}},
        "sets": [
            {"pixels": rng.standard_normal((1, channels, size, size)).astype(np.float32)},
            {"pixels": rng.standard_normal((3, channels, size, size)).astype(np.float32)},
        ],
    }


def _text_inputs(names, seq=(7, 5), batch=(1, 2)):
    """Token ids in range, an attention mask padded at the end, token types in {0, 1}."""
    rng = np.random.default_rng(1)
    sets = []
    for b, s in zip(batch, seq):
        values = {}
        for name in names:
            if name == "attention_mask":
                mask = np.ones((b, s), np.int64)
                mask[1:, s - 2 :] = 0
                values[name] = mask
            elif name == "token_type_ids":
                values[name] = rng.integers(0, 2, (b, s), dtype=np.int64)
            else:
                values[name] = rng.integers(0, VOCAB, (b, s), dtype=np.int64)
        sets.append(values)
    return {
        "names": list(names),
        "dynamic": {name: {0: "batch", 1: "sequence"} for name in names},
        "sets": sets,
    }


def _sequence_inputs(features=16):
    """One sequence length: torch.export keeps a recurrent layer's sequence static."""
    rng = np.random.default_rng(2)
    return {
        "names": ["x"],
        "dynamic": {"x": {0: "batch", 1: "sequence"}},
        "sets": [
            {"x": rng.standard_normal((1, 5, features)).astype(np.float32)},
            {"x": rng.standard_normal((3, 5, features)).astype(np.float32)},
        ],
    }


def _audio_inputs():
    rng = np.random.default_rng(3)
    return {
        "names": ["input_values"],
        "dynamic": {"input_values": {0: "batch", 1: "samples"}},
        "sets": [
            {"input_values": rng.standard_normal((1, 400)).astype(np.float32)},
            {"input_values": rng.standard_normal((2, 320)).astype(np.float32)},
        ],
    }


def _hf(model, names, key):
    """A transformers model as a module of positional tensors returning one tensor."""
    import torch

    class Positional(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model
            self.names = names

        def forward(self, *args):
            return self.model(**dict(zip(names, args)))[key]

    return Positional()


def _timm(builder):
    def build():
        return builder(), _image_inputs()

    return build


def resnet():
    import timm

    return timm.create_model(
        "resnet18", num_classes=10, channels=(8, 16, 32, 64), stem_width=8, layers=(1, 1, 1, 1)
    )


def efficientnet():
    from timm.models import efficientnet

    return efficientnet._gen_efficientnet(
        "efficientnet_b0", channel_multiplier=0.25, depth_multiplier=0.25, num_classes=10
    )


def mobilenetv3():
    from timm.models import mobilenetv3 as m

    return m._gen_mobilenet_v3("mobilenetv3_small_100", 0.25, num_classes=10)


def regnet():
    from timm.models import regnet as r

    cfg = r.RegNetCfg(depth=6, w0=8, wa=24.0, wm=2.0, group_size=8)  # four stages
    return r.RegNet(cfg, num_classes=10)


def convnext():
    from timm.models.convnext import ConvNeXt

    return ConvNeXt(depths=(1, 1, 1, 1), dims=(8, 16, 32, 64), num_classes=10)


def densenet():
    from timm.models.densenet import DenseNet

    return DenseNet(growth_rate=8, block_config=(2, 2, 2, 2), num_classes=10)


def mobilenetv2():
    import torchvision

    return torchvision.models.mobilenet_v2(width_mult=0.25, num_classes=10)


def vit_timm():
    from timm.models.vision_transformer import VisionTransformer

    return VisionTransformer(
        img_size=32, patch_size=8, embed_dim=32, depth=2, num_heads=2, num_classes=10
    )


def vit_hf():
    import transformers as t

    config = t.ViTConfig(
        image_size=32,
        patch_size=8,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
    )
    return _hf(t.ViTModel(config), ["pixel_values"], "last_hidden_state"), _image_inputs()


def bert():
    import transformers as t

    config = t.BertConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        type_vocab_size=2,
    )
    names = ["input_ids", "attention_mask", "token_type_ids"]
    return _hf(t.BertModel(config), names, "last_hidden_state"), _text_inputs(names)


def distilbert():
    import transformers as t

    config = t.DistilBertConfig(
        vocab_size=VOCAB, dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=64
    )
    names = ["input_ids", "attention_mask"]
    return _hf(t.DistilBertModel(config), names, "last_hidden_state"), _text_inputs(names)


def gpt2():
    import transformers as t

    config = t.GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=2)
    config.use_cache = False
    names = ["input_ids", "attention_mask"]
    return _hf(t.GPT2LMHeadModel(config), names, "logits"), _text_inputs(names)


def _decoder(config_class, model_class):
    import transformers as t

    config = getattr(t, config_class)(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        use_cache=False,
    )
    model = getattr(t, model_class)(config)
    names = ["input_ids", "attention_mask"]
    return _hf(model, names, "logits"), _text_inputs(names)


def llama():
    return _decoder("LlamaConfig", "LlamaForCausalLM")


def qwen2():
    return _decoder("Qwen2Config", "Qwen2ForCausalLM")


def mistral():
    return _decoder("MistralConfig", "MistralForCausalLM")


def t5():
    import transformers as t

    config = t.T5Config(
        vocab_size=VOCAB,
        d_model=32,
        d_kv=16,
        d_ff=64,
        num_layers=1,
        num_decoder_layers=1,
        num_heads=2,
        use_cache=False,
    )
    names = ["input_ids", "decoder_input_ids"]
    return _hf(t.T5ForConditionalGeneration(config), names, "logits"), _text_inputs(names)


def bart():
    import transformers as t

    config = t.BartConfig(
        vocab_size=VOCAB,
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=64,
        use_cache=False,
    )
    names = ["input_ids", "decoder_input_ids"]
    return _hf(t.BartModel(config), names, "last_hidden_state"), _text_inputs(names)


def wav2vec2():
    import transformers as t

    config = t.Wav2Vec2Config(
        vocab_size=32,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        conv_dim=(16, 16),
        conv_stride=(5, 2),
        conv_kernel=(10, 3),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=2,
    )
    return _hf(t.Wav2Vec2Model(config), ["input_values"], "last_hidden_state"), _audio_inputs()


def _recurrent(cell):
    import torch

    class Recurrent(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = getattr(torch.nn, cell)(16, 32, num_layers=2, batch_first=True)
            self.head = torch.nn.Linear(32, 10)

        def forward(self, x):
            return self.head(self.rnn(x)[0])

    return Recurrent(), _sequence_inputs()


def lstm():
    return _recurrent("LSTM")


def gru():
    return _recurrent("GRU")


def rnn():
    return _recurrent("RNN")


def moe():
    """A Mixtral-style top-2 mixture-of-experts layer, every expert on every token."""
    import torch

    class MoE(torch.nn.Module):
        def __init__(self, dim=16, hidden=32, experts=4):
            super().__init__()
            self.router = torch.nn.Linear(dim, experts, bias=False)
            self.up = torch.nn.ModuleList(torch.nn.Linear(dim, hidden) for _ in range(experts))
            self.down = torch.nn.ModuleList(torch.nn.Linear(hidden, dim) for _ in range(experts))

        def forward(self, x):
            probs = torch.softmax(self.router(x), dim=-1)
            top, index = torch.topk(probs, 2, dim=-1)
            top = top / top.sum(dim=-1, keepdim=True)
            weights = torch.zeros_like(probs).scatter(-1, index, top)
            out = torch.zeros_like(x)
            for e, (up, down) in enumerate(zip(self.up, self.down)):
                out = out + weights[..., e : e + 1] * down(torch.nn.functional.silu(up(x)))
            return out

    return MoE(), _sequence_inputs()


def moe_sparse():
    """
    A Mixtral-style top-2 mixture-of-experts layer with sparse dispatch: each expert
    runs only on the tokens routed to it (`torch.where` of the routing mask, a gather of
    those rows, `index_add_` back), so its token count is known only at run time.
    `examples/sparse_moe.py` writes the graphs both exporters make of it.
    """
    import torch

    class SparseMoE(torch.nn.Module):
        def __init__(self, dim=16, hidden=32, experts=4, k=2):
            super().__init__()
            self.k = k
            self.router = torch.nn.Linear(dim, experts, bias=False)
            linear = torch.nn.Linear
            self.up = torch.nn.ModuleList(linear(dim, hidden, bias=False) for _ in range(experts))
            self.down = torch.nn.ModuleList(linear(hidden, dim, bias=False) for _ in range(experts))

        def forward(self, x):
            tokens = x.reshape(-1, x.shape[-1])
            logits, chosen = torch.topk(self.router(tokens), self.k, dim=-1)
            weights = torch.softmax(logits, dim=-1)
            out = torch.zeros_like(tokens)
            for e, (up, down) in enumerate(zip(self.up, self.down)):
                token, slot = torch.where(chosen == e)
                h = down(torch.nn.functional.silu(up(tokens.index_select(0, token))))
                out.index_add_(0, token, h * weights[token, slot].unsqueeze(-1))
            return out.reshape(x.shape)

    return SparseMoE(), _sequence_inputs()


FAMILIES = {
    "resnet": ("cnn", "timm", _timm(resnet)),
    "efficientnet": ("cnn", "timm", _timm(efficientnet)),
    "mobilenetv3": ("cnn", "timm", _timm(mobilenetv3)),
    "regnet": ("cnn", "timm", _timm(regnet)),
    "convnext": ("cnn", "timm", _timm(convnext)),
    "densenet": ("cnn", "timm", _timm(densenet)),
    "mobilenetv2": ("cnn", "torchvision", _timm(mobilenetv2)),
    "vit-timm": ("vision transformer", "timm", _timm(vit_timm)),
    "vit-hf": ("vision transformer", "transformers", vit_hf),
    "bert": ("encoder", "transformers", bert),
    "distilbert": ("encoder", "transformers", distilbert),
    "gpt2": ("decoder", "transformers", gpt2),
    "llama": ("decoder (GQA, rotary)", "transformers", llama),
    "qwen2": ("decoder (GQA, rotary)", "transformers", qwen2),
    "mistral": ("decoder (GQA, rotary)", "transformers", mistral),
    "t5": ("encoder-decoder", "transformers", t5),
    "bart": ("encoder-decoder", "transformers", bart),
    "wav2vec2": ("speech encoder", "transformers", wav2vec2),
    "lstm": ("recurrent", "torch.nn", lstm),
    "gru": ("recurrent", "torch.nn", gru),
    "rnn": ("recurrent", "torch.nn", rnn),
    "moe": ("mixture of experts", "torch.nn", moe),
    "moe-sparse": ("mixture of experts", "torch.nn", moe_sparse),
}


def export_one(family: str, exporter: str) -> dict:
    """Build, export and run one model; write its files; return its manifest entry."""
    import onnx
    import onnxruntime
    import torch

    torch.manual_seed(0)
    kind, source, build = FAMILIES[family]
    module, inputs = build()
    module.eval()
    name = f"{family}-{exporter}"
    path = ZOO / f"{name}.onnx"
    # The second set: torch.export specialises dims of size 1, so no batch 1 here. Dims
    # torch.export finds static (an LSTM's sequence) stay static (`Dim.AUTO`).
    args = tuple(torch.from_numpy(inputs["sets"][1][n]) for n in inputs["names"])
    opset = EXPORTERS[exporter]
    kwargs = {
        "input_names": inputs["names"],
        "output_names": ["output"],
        "opset_version": opset,
        "dynamo": exporter == "dynamo",
    }
    if exporter == "dynamo":
        dims = tuple(
            {axis: torch.export.Dim.AUTO for axis in inputs["dynamic"][n]} for n in inputs["names"]
        )
        kwargs["dynamic_shapes"] = {"args": dims} if hasattr(module, "names") else dims
        kwargs["external_data"] = False
    else:
        kwargs["dynamic_axes"] = inputs["dynamic"]
    with torch.no_grad():
        torch.onnx.export(module, args, str(path), **kwargs)
    model = onnx.load(str(path))
    size = path.stat().st_size
    if size > MAX_BYTES:
        path.unlink()
        raise RuntimeError(f"{size} bytes, over {MAX_BYTES}")
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feed_names = [i.name for i in session.get_inputs()]
    arrays = {}
    for index, values in enumerate(inputs["sets"]):
        feed = {n: values[n] for n in feed_names}
        for n, value in feed.items():
            arrays[f"{index}/in/{n}"] = value
        for k, out in enumerate(session.run(None, feed)):
            arrays[f"{index}/out/{k}"] = out
    np.savez_compressed(ZOO / f"{name}.npz", **arrays)
    opsets = {o.domain or "ai.onnx": o.version for o in model.opset_import}
    return {
        "name": name,
        "family": family,
        "kind": kind,
        "source": source,
        "exporter": exporter,
        "opset": opsets.get("ai.onnx", opset),
        "inputs": feed_names,
        "sets": len(inputs["sets"]),
        "bytes": size,
        "ops": sorted({n.op_type for n in model.graph.node}),
    }


# --- running children -------------------------------------------------------------------


def _child(args: list[str], timeout: float, log: Path | None = None) -> dict:
    """Run this script as a child with `args`; its last stdout line is a JSON result.

    The child's stderr goes to `log` when one is given."""
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, __file__, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join(
                    p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p
                ),
            },
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if log is not None:
        log.write_text(done.stderr)
    lines = done.stdout.strip().splitlines()
    if done.returncode == 0 and lines:
        return json.loads(lines[-1])
    tail = [line for line in done.stderr.strip().splitlines() if line.strip()]
    errors = [line for line in tail if "Error" in line.split(":")[0] or "error:" in line]
    message = (errors or tail or [f"exit {done.returncode}"])[-1]
    return {"error": message[:300], "seconds": time.perf_counter() - start}


def export(only: list[str] | None, jobs: int, logs: Path | None) -> int:
    ZOO.mkdir(parents=True, exist_ok=True)
    if logs:
        logs.mkdir(parents=True, exist_ok=True)
    manifest = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {}
    models = {m["name"]: m for m in manifest.get("models", [])}
    failed = {f["name"]: f for f in manifest.get("failed", [])}
    work = [
        (family, exporter)
        for family in FAMILIES
        for exporter in EXPORTERS
        if not only or family in only
    ]
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        results = pool.map(
            lambda fe: (
                fe,
                _child(["export-one", *fe], 400, logs and logs / f"{'-'.join(fe)}.log"),
            ),
            work,
        )
        for (family, exporter), result in results:
            name = f"{family}-{exporter}"
            models.pop(name, None)
            failed.pop(name, None)
            if "error" in result:
                failed[name] = {"name": name, "error": result["error"]}
                print(f"{name}: did not export: {result['error']}", flush=True)
            else:
                models[name] = result
                print(f"{name}: {result['bytes']} bytes, opset {result['opset']}", flush=True)
    MANIFEST.write_text(
        json.dumps(
            {
                "models": sorted(models.values(), key=lambda m: m["name"]),
                "failed": sorted(failed.values(), key=lambda m: m["name"]),
            },
            indent=1,
        )
        + "\n"
    )
    return 0


# --- checking with mlc --------------------------------------------------------------------


def load_sets(name: str) -> list[tuple[dict, list]]:
    """The input sets of a zoo model and onnxruntime's outputs for each."""
    data = np.load(ZOO / f"{name}.npz")
    sets: dict[int, tuple[dict, dict]] = {}
    for key in data.files:
        index, role, what = key.split("/", 2)
        inputs, outputs = sets.setdefault(int(index), ({}, {}))
        (inputs if role == "in" else outputs)[what] = data[key]
    return [
        (inputs, [outputs[k] for k in sorted(outputs, key=int)])
        for _, (inputs, outputs) in sorted(sets.items())
    ]


def check_outputs(exe, name: str) -> float:
    """
    Run `exe` (a compiled zoo model) on each input set of `name`, check every output
    against onnxruntime's (shape, then values at rtol 2e-3 / atol 2e-4), and return the
    worst relative error.
    """
    entry = next(m for m in json.loads(MANIFEST.read_text())["models"] if m["name"] == name)
    worst = 0.0
    for inputs, expected in load_sets(name):
        got = exe(*[inputs[n] for n in entry["inputs"]])
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(expected), f"{len(got)} outputs, onnxruntime gives {len(expected)}"
        for g, e in zip(got, expected, strict=True):
            assert g.shape == e.shape, f"shape {g.shape}, onnxruntime gives {e.shape}"
            np.testing.assert_allclose(g, e, rtol=2e-3, atol=2e-4)
            scale = np.maximum(np.abs(e), 1e-3)
            worst = max(worst, float(np.max(np.abs(g - e) / scale)) if e.size else 0.0)
    return worst


def check_one(name: str, target: str) -> dict:
    """Compile a zoo model for `target` and compare it with onnxruntime on every set."""
    import mlc

    start = time.perf_counter()
    exe = mlc.compile(str(ZOO / f"{name}.onnx"), target=target)
    seconds = time.perf_counter() - start
    return {"compile_s": seconds, "worst_rel": check_outputs(exe, name)}


def report(targets: list[str], jobs: int) -> int:
    manifest = json.loads(MANIFEST.read_text())
    work = [(m["name"], t) for m in manifest["models"] for t in targets]
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        results = dict(zip(work, pool.map(lambda nt: _child(["check-one", *nt], 600), work)))
    import machine

    lines = [
        "# The model zoo",
        "",
        "<!-- Generated by `python bench/zoo.py report`; do not edit. -->",
        "",
        "Small random-weight models of the families people export (tests/zoo/, written by",
        "`python bench/zoo.py export` with torch, timm and transformers), compiled by mlc and",
        "compared with onnxruntime on two input sets of different batch and sequence sizes.",
        "*Compile* is a cold compile in a process of its own, in seconds, on:",
        "",
        *machine.describe(),
        "",
        "| model | family | exporter | opset | "
        + " | ".join(f"{t} | {t} compile" for t in targets)
        + " |",
        "|---|---|---|---|" + "---|---|" * len(targets),
    ]
    for m in manifest["models"]:
        cells = []
        for t in targets:
            r = results[(m["name"], t)]
            if "error" in r:
                cells += [f"fails: {r['error'].replace('|', '/')[:120]}", ""]
            else:
                cells += ["passes", f"{r['compile_s']:.1f}"]
        lines.append(
            f"| {m['name']} | {m['kind']} | {m['exporter']} | {m['opset']} | "
            + " | ".join(cells)
            + " |"
        )
    if manifest.get("failed"):
        lines += ["", "Not exported (torch's exporter failed):", ""]
        lines += [f"- {f['name']}: {f['error']}" for f in manifest["failed"]]
    (ROOT / "docs" / "zoo.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(json.dumps({f"{n}@{t}": r for (n, t), r in results.items()}), file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    e = commands.add_parser("export")
    e.add_argument("--only", type=lambda s: s.split(","))
    e.add_argument("--jobs", type=int, default=8)
    e.add_argument("--logs", type=Path, help="a folder for each export's stderr")
    r = commands.add_parser("report")
    r.add_argument("--targets", type=lambda s: s.split(","), default=["cpu"])
    r.add_argument("--jobs", type=int, default=2)
    one = commands.add_parser("export-one")
    one.add_argument("family")
    one.add_argument("exporter")
    check = commands.add_parser("check-one")
    check.add_argument("name")
    check.add_argument("target")
    args = parser.parse_args(argv)
    if args.command == "export":
        return export(args.only, args.jobs, args.logs)
    if args.command == "report":
        return report(args.targets, args.jobs)
    if args.command == "export-one":
        print(json.dumps(export_one(args.family, args.exporter)))
        return 0
    print(json.dumps(check_one(args.name, args.target)))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    sys.exit(main(sys.argv[1:]))
