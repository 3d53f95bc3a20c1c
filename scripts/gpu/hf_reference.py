#!/usr/bin/env python3
"""HF transformers' own activations for actex's fixture models, in a chosen dtype and device.

For each fixture model folder (tests/fixtures/qwen2-tiny, every folder of
tests/fixtures/model-families and, where present, of tests/fixtures/moe-families) this loads the
model with transformers, runs the single-sequence cases of its expected.safetensors (len1, len7,
len33, len128; their `.input_ids`) one at a time, and writes OUT/<folder>.safetensors: every
tensor expected.safetensors holds for those cases under the same name, as float32 (expert ids
as int32): `<case>.hidden_states.<i>`, `<case>.last_layer_pre_norm`, `<case>.logits`, and the
per-layer captures `<case>.attn_out.<l>`, `resid_mid`, `mlp_post`, `mlp_out`, `z` (the input of
the attention output projection, from z.safetensors for the dense folders) and, for a mixture of
experts, `router_logits`, `expert_ids`, `expert_weights`, `shared_expert_out`,
`shared_expert_gate_logit`. The per-layer tensors are captured with forward hooks on the real
modules that the fixtures' READMEs name (tests/fixtures/model-families/README.md, README-z.md,
tests/fixtures/moe-families/README.md).

It is the bf16 reference of `actex --precision bf16` on the GPU (issue 24): run there with
`--dtype bfloat16 --device cuda`. In float32 on the CPU its output equals the fixtures (which HF
made in float32 with eager attention) to <= 5e-6 x max|ref|, which checks the names and hooks.
Per kind of tensor it prints the distance to the fixture (HF float32): max|d| / max|ref|, and
for expert ids the share of ids that differ.

Usage: hf_reference.py --fixtures tests/fixtures --out DIR [--dtype bfloat16|float32]
                       [--device cuda|cpu] [--folders qwen2-tiny,llama,...]
"""

import argparse
import pathlib
import sys

import torch
import transformers
from safetensors import safe_open
from safetensors.torch import save_file

CASES = ("len1", "len7", "len33", "len128")

# Where each per-layer capture is taken, relative to decoder layer l, per family, in the words
# of the fixtures' READMEs; "output[i]" is element i of a module's tuple output.
LLAMA_LIKE_POINTS = {
    "attn_out": "output of self_attn.o_proj",
    "resid_mid": "input of post_attention_layernorm",
    "mlp_post": "input of mlp.down_proj",
    "mlp_out": "output of mlp.down_proj",
    "z": "input of self_attn.o_proj",
}
GEMMA_POINTS = {  # sandwich norms: what attention and MLP add is after their post-norms
    "attn_out": "output of post_attention_layernorm",
    "resid_mid": "input of pre_feedforward_layernorm",
    "mlp_post": "input of mlp.down_proj",
    "mlp_out": "output of post_feedforward_layernorm",
    "z": "input of self_attn.o_proj",
}
GPT2_POINTS = {  # Conv1D projections
    "attn_out": "output of attn.c_proj",
    "resid_mid": "input of ln_2",
    "mlp_post": "input of mlp.c_proj",
    "mlp_out": "output of mlp",
    "z": "input of attn.c_proj",
}
MOE_POINTS = {  # the router (`mlp.gate`) returns (logits, top-k weights, top-k expert ids)
    "attn_out": "output of self_attn.o_proj",
    "resid_mid": "input of post_attention_layernorm",
    "mlp_post": "input of mlp.down_proj",  # a dense layer between sparse ones (qwen2_moe)
    "mlp_out": "output of mlp",  # the whole block, qwen2_moe's gated shared expert included
    "router_logits": "output[0] of mlp.gate",
    "expert_weights": "output[1] of mlp.gate",
    "expert_ids": "output[2] of mlp.gate",
    "shared_expert_out": "output of mlp.shared_expert",
    "shared_expert_gate_logit": "output of mlp.shared_expert_gate",
    "z": "input of self_attn.o_proj",
}
MOE_TYPES = ("mixtral", "qwen2_moe", "qwen3_moe", "olmoe")


def capture_points(model_type):
    """The per-layer capture table of a config's model_type."""
    if model_type == "gpt2":
        return GPT2_POINTS
    if model_type in ("gemma2", "gemma3_text"):
        return GEMMA_POINTS
    if model_type in MOE_TYPES:
        return MOE_POINTS
    return LLAMA_LIKE_POINTS


def decoder_layers_path(model_type):
    """The dotted path of the model's list of decoder layers."""
    return "transformer.h" if model_type == "gpt2" else "model.layers"


def attention_implementation(config):
    """SDPA, the attention HF runs a bf16 model with on a GPU by default; eager where SDPA
    would drop part of the model's math: transformers' sdpa_attention_forward ignores the
    attention logit softcap, so gemma2 under SDPA misses its fixture by 1.1 x max|ref| in
    float32 (eager: 3.3e-6), and gemma2 runs eager."""
    if getattr(config, "attn_logit_softcapping", None) is not None:
        return "eager"
    return "sdpa"


def read_tensors(path, prefixes):
    """{name: tensor} of the file's tensors whose name starts with one of the prefixes."""
    with safe_open(str(path), "pt") as f:
        return {k: f.get_tensor(k) for k in f.keys() if k.startswith(prefixes)}


def parse_name(case, name):
    """`<case>.attn_out.3` -> ("attn_out", 3); `<case>.logits` -> ("logits", None)."""
    rest = name[len(case) + 1:]
    head, _, tail = rest.rpartition(".")
    if head and tail.isdigit():
        return head, int(tail)
    return rest, None


class Captures:
    """Forward hooks on the real modules that record one forward's per-layer tensors."""

    def __init__(self, model, model_type, num_layers, wanted):
        """wanted: the (point, layer) pairs to capture, e.g. ("attn_out", 3)."""
        self.values = {}  # (point, layer) -> tensor [1, T, width] (routers: [T, width])
        self.handles = []
        layers = model.get_submodule(decoder_layers_path(model_type))
        points = capture_points(model_type)
        for point, layer in wanted:
            if point not in points:
                raise SystemExit(f"no capture point for '{point}' in a {model_type} model "
                                 f"(known: {', '.join(points)})")
            side, _, module_path = points[point].split(" ", 2)  # "input of mlp.down_proj"
            self._hook(layers[layer].get_submodule(module_path), side, (point, layer))
        # The last decoder layer's output before the final norm (not among hidden_states).
        self._hook(layers[num_layers - 1], "output", ("last_layer_pre_norm", None))

    def _hook(self, module, side, key):
        """side: "input", "output" (a tuple's first element) or "output[i]"."""
        def record_input(_module, args, kwargs):
            self.values[key] = (args[0] if args else next(iter(kwargs.values()))).detach()

        index = int(side[len("output["):-1]) if side.startswith("output[") else 0

        def record_output(_module, _args, output):
            value = output[index] if isinstance(output, (tuple, list)) else output
            self.values[key] = value.detach()

        if side == "input":
            self.handles.append(module.register_forward_pre_hook(record_input, with_kwargs=True))
        else:
            self.handles.append(module.register_forward_hook(record_output))

    def remove(self):
        for handle in self.handles:
            handle.remove()


def relative_error(value, ref):
    """max|value - ref| / max|ref|, in float64; for integers (expert ids) the share that
    differ."""
    if not ref.is_floating_point():
        return (value != ref).double().mean().item()
    ref = ref.double()
    scale = ref.abs().max().item() or 1.0
    return (value.double() - ref).abs().max().item() / scale


def run_folder(folder, out_dir, dtype, device):
    """Runs one fixture folder's cases and writes OUT/<folder>.safetensors; returns the
    worst relative error against the fixture per kind of tensor."""
    reference = read_tensors(folder / "expected.safetensors", CASES)
    z_file = folder / "z.safetensors"
    if z_file.exists():
        reference.update(read_tensors(z_file, CASES))
    config = transformers.AutoConfig.from_pretrained(folder)
    attn = attention_implementation(config)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        folder, dtype=dtype, attn_implementation=attn).to(device).eval()
    num_layers = config.num_hidden_layers  # GPT2Config maps it to n_layer

    results = {}
    for case in CASES:
        names = [n for n in reference if n.startswith(case + ".") and n != f"{case}.input_ids"]
        parsed = {n: parse_name(case, n) for n in names}
        wanted = sorted({(kind, layer) for kind, layer in parsed.values()
                         if layer is not None and kind != "hidden_states"})
        input_ids = reference[f"{case}.input_ids"].to(torch.long).to(device)  # [1, T]
        captures = Captures(model, config.model_type, num_layers, wanted)
        try:
            with torch.inference_mode():
                output = model(input_ids=input_ids, output_hidden_states=True)
        finally:
            captures.remove()
        for name, (kind, layer) in parsed.items():
            if kind == "hidden_states":
                value = output.hidden_states[layer]
            elif kind == "logits":
                value = output.logits
            else:
                value = captures.values[(kind, layer)]
            ref = reference[name]
            if value.numel() != ref.numel():
                raise SystemExit(f"{folder.name}: {name} has shape {tuple(value.shape)}, "
                                 f"the fixture {tuple(ref.shape)}")
            # Routers work on the flattened tokens [T, .]; the fixtures view them as [1, T, .].
            value = value.reshape(ref.shape).cpu()
            value = value.float() if ref.is_floating_point() else value.to(torch.int32)
            results[name] = value.contiguous()

    out_path = out_dir / f"{folder.name}.safetensors"
    save_file(results, str(out_path), metadata={
        "source": f"scripts/gpu/hf_reference.py on {folder}",
        "dtype": str(dtype).removeprefix("torch."),
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "attn_implementation": attn,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "cases": ",".join(CASES),
    })
    worst = {}  # kind -> (relative error, name)
    for name, value in results.items():
        kind = parse_name(name.split(".")[0], name)[0]
        error = relative_error(value, reference[name])
        if error >= worst.get(kind, (-1.0, ""))[0]:
            worst[kind] = (error, name)
    print(f"{folder.name}: wrote {len(results)} tensors to {out_path} "
          f"({config.model_type}, {str(dtype).removeprefix('torch.')}, {device}, {attn})")
    for kind, (error, name) in sorted(worst.items()):
        measure = "share of ids that differ" if kind == "expert_ids" else "max|d|/max|ref|"
        print(f"  {kind:24s} {measure} vs fixture (HF fp32) {error:.2e}  (worst: {name})")
    return worst


def fixture_folders(fixtures, only):
    """qwen2-tiny, then every folder of model-families and of moe-families (skipped when
    absent: scripts/gpu/stash_fixtures.sh may have moved it) that holds a config.json."""
    folders = [fixtures / "qwen2-tiny"]
    for family_dir in ("model-families", "moe-families"):
        if (fixtures / family_dir).is_dir():
            folders += sorted(p for p in (fixtures / family_dir).iterdir()
                              if (p / "config.json").exists())
    if only:
        folders = [f for f in folders if f.name in only]
        missing = set(only) - {f.name for f in folders}
        if missing:
            raise SystemExit(f"no fixture folder named {', '.join(sorted(missing))} in {fixtures}")
    for folder in folders:
        if not (folder / "expected.safetensors").exists():
            raise SystemExit(f"{folder}/expected.safetensors is missing")
    return folders


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fixtures", type=pathlib.Path, required=True,
                        help="the tests/fixtures folder")
    parser.add_argument("--out", type=pathlib.Path, required=True,
                        help="folder for <fixture folder>.safetensors")
    parser.add_argument("--dtype", choices=("bfloat16", "float32"), default="bfloat16")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--folders", default="",
                        help="comma-separated folder names (default: all)")
    args = parser.parse_args()

    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: torch sees no CUDA device (use --device cpu)")
    if args.dtype == "float32" and args.device == "cuda":
        # fp32 means fp32: no TF32 in the products, as actex's --precision fp32.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    dtype = getattr(torch, args.dtype)
    transformers.utils.logging.disable_progress_bar()
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, "
          f"device {torch.cuda.get_device_name() if args.device == 'cuda' else 'cpu'}")
    only = [f for f in args.folders.split(",") if f]
    overall, ids_differing = 0.0, 0.0
    failed = []
    for folder in fixture_folders(args.fixtures, only):
        # One folder this transformers cannot load or run costs only its own reference.
        try:
            errors = run_folder(folder, args.out, dtype, args.device)
        except Exception as error:  # noqa: BLE001 - reported, and the exit status says so
            print(f"{folder.name}: Error {type(error).__name__}: {error}")
            failed.append(folder.name)
            continue
        for kind, (error, _) in errors.items():
            if kind == "expert_ids":
                ids_differing = max(ids_differing, error)
            else:
                overall = max(overall, error)
    print(f"all folders: max|d|/max|ref| vs fixtures {overall:.2e}; "
          f"expert ids that differ, worst case and layer: {ids_differing:.2%}")
    if failed:
        print(f"Error: no reference for {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
