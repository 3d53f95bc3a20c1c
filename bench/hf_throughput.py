#!/usr/bin/env python3
"""HF transformers' forward throughput on a GPU, the baseline of actex's `--device cuda` bf16.

Runs a Qwen2.5-0.5B- or 7B-shaped Qwen2 model with random bfloat16 weights the way an HF user
extracts activations: SDPA attention, `output_hidden_states=True`, under torch.inference_mode,
on batches of equal-length documents (no padding), one batch size after another. For each it
warms up, then times forward passes with CUDA synchronisation for about --seconds, and prints
tokens/s; at the end the best batch size. A batch size that runs out of GPU memory ends the
sweep (larger ones would too).

The model is the decoder without its LM head (`AutoModel`, i.e. Qwen2Model): an extraction
needs the hidden states, not the [batch, tokens, vocab] logits, whose head would cost HF a
152k-wide product per token. Memory: weights (0.5B: 1.0 GB, 7B: 14 GB without the head) plus
the hidden states HF keeps, (layers + 1) x batch x tokens x hidden x 2 bytes (7B, batch 64 of
256 tokens: 29 x 64 x 256 x 3584 x 2 = 3.4 GB), plus one layer's MLP intermediates.

Usage: bench/hf_throughput.py [--model qwen2.5-0.5b|qwen2.5-7b|tiny] [--config-dir DIR]
           [--tokens-per-doc 256] [--batches 8,16,32,64,128] [--seconds 3] [--device cuda|cpu]
`--device cpu --model tiny` is a smoke test of the script itself.
"""

import argparse
import json
import pathlib
import sys
import time

import torch
import transformers

# The shapes of the real models, as `actex make-model --preset NAME` writes them
# (model/model_presets.cc): vocab, hidden, intermediate, layers, heads, KV heads, tied.
PRESETS = {
    "tiny": (4096, 64, 176, 2, 4, 2, True),
    "qwen2.5-0.5b": (151936, 896, 4864, 24, 14, 2, True),
    "qwen2.5-7b": (152064, 3584, 18944, 28, 28, 4, False),
}


def preset_config(name):
    """A Qwen2Config with the preset's shape and Qwen2.5's rope theta and norm epsilon."""
    vocab, hidden, intermediate, layers, heads, kv_heads, tied = PRESETS[name]
    return transformers.Qwen2Config(
        vocab_size=vocab, hidden_size=hidden, intermediate_size=intermediate,
        num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv_heads,
        tie_word_embeddings=tied, rope_theta=1e6, rms_norm_eps=1e-6,
        max_position_embeddings=32768, hidden_act="silu", use_sliding_window=False)


def load_config(args):
    """The model's config: a folder's config.json (e.g. from `actex make-model`) or a preset."""
    if args.config_dir:
        path = args.config_dir / "config.json"
        if not path.exists():
            raise SystemExit(f"--config-dir: {path} does not exist")
        return transformers.AutoConfig.from_pretrained(args.config_dir), str(args.config_dir)
    return preset_config(args.model), args.model


def build_model(config, device):
    """The decoder (no LM head) with random bf16 weights, initialised on the device itself
    (initialising 7B weights on the CPU first would take minutes)."""
    with torch.device(device):
        model = transformers.AutoModel.from_config(config, dtype=torch.bfloat16,
                                                   attn_implementation="sdpa")
    return model.to(device).eval()  # a no-op where the weights were made there


def synchronize(device):
    if device == "cuda":
        torch.cuda.synchronize()


def time_batch(model, config, batch, tokens_per_doc, seconds, warmup, device):
    """Tokens/s of forward passes on [batch, tokens_per_doc] random ids, and the peak GPU
    memory in bytes (0 on the CPU)."""
    generator = torch.Generator(device="cpu").manual_seed(batch)
    input_ids = torch.randint(0, config.vocab_size, (batch, tokens_per_doc),
                              generator=generator).to(device)  # [batch, tokens]
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    with torch.inference_mode():
        for _ in range(warmup):
            output = model(input_ids=input_ids, output_hidden_states=True)
            del output
        synchronize(device)
        passes = 0
        start = time.perf_counter()
        while passes < 3 or time.perf_counter() - start < seconds:
            output = model(input_ids=input_ids, output_hidden_states=True)
            assert len(output.hidden_states) == config.num_hidden_layers + 1
            del output
            synchronize(device)
            passes += 1
        elapsed = time.perf_counter() - start
    peak = torch.cuda.max_memory_allocated() if device == "cuda" else 0
    return passes * batch * tokens_per_doc / elapsed, elapsed / passes, peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=sorted(PRESETS), default="qwen2.5-0.5b")
    parser.add_argument("--config-dir", type=pathlib.Path,
                        help="read config.json from this folder instead of --model's shape")
    parser.add_argument("--tokens-per-doc", type=int, default=256)
    parser.add_argument("--batches", default="8,16,32,64,128,256",
                        help="comma-separated batch sizes (documents per forward)")
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="timed seconds per batch size (at least 3 passes)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed passes per batch size")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    args = parser.parse_args()
    batches = [int(b) for b in args.batches.split(",") if b]
    if not batches or min(batches) < 1 or args.tokens_per_doc < 1:
        raise SystemExit("--batches and --tokens-per-doc must be positive")
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: torch sees no CUDA device (--device cpu for a smoke test)")

    config, label = load_config(args)
    gpu = torch.cuda.get_device_name() if args.device == "cuda" else "none (cpu)"
    print(f"GPU: {gpu}; torch {torch.__version__} (CUDA {torch.version.cuda}), "
          f"transformers {transformers.__version__}")
    model = build_model(config, args.device)
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    print(f"model: {label} ({config.model_type}, hidden {config.hidden_size}, "
          f"{config.num_hidden_layers} layers, {weights / 1e9:.2f} GB of {model.dtype} weights, "
          f"no LM head), attention {model.config._attn_implementation}, "
          f"output_hidden_states=True, {args.tokens_per_doc} tokens per document")

    results = {}
    for batch in batches:
        try:
            rate, per_pass, peak = time_batch(model, config, batch, args.tokens_per_doc,
                                              args.seconds, args.warmup, args.device)
        except torch.cuda.OutOfMemoryError:
            print(f"batch {batch:5d}: out of GPU memory; larger batches are not tried")
            break
        finally:
            if args.device == "cuda":
                torch.cuda.empty_cache()
        results[batch] = rate
        print(f"batch {batch:5d}: {rate:12,.0f} tokens/s  ({per_pass * 1e3:8.2f} ms per forward, "
              f"peak GPU memory {peak / 2**30:5.1f} GiB)", flush=True)
    if not results:
        raise SystemExit("no batch size ran")
    best = max(results, key=results.get)
    print(f"best: batch {best}, {results[best]:,.0f} tokens/s")
    print("json: " + json.dumps({"gpu": gpu, "model": label, "torch": torch.__version__,
                                 "transformers": transformers.__version__,
                                 "tokens_per_doc": args.tokens_per_doc,
                                 "tokens_per_s": results, "best_batch": best}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
