#!/usr/bin/env python3
"""Loads an `actex export --format delphi` folder with EleutherAI delphi's own LatentDataset.

Not run by CI. Set up once (delphi and its dependencies, torch included):
    python3 -m venv VENV && VENV/bin/pip install eai-delphi
then:
    VENV/bin/python scripts/verify_delphi_export.py EXPORT --tokenizer MODEL_DIR
Exits 0 when every site's every latent range loads and each latent's locations lie
inside the tokens, and delphi's own example constructor and sampler (what its explainer
and scorer are given) build a record of every latent that fired at least --min-examples
times, each with train examples that fire and none above the latent's strongest
location; prints the latents, locations and records; 1 otherwise.
"""
import argparse
import asyncio
import sys

from transformers import AutoTokenizer

from delphi.config import ConstructorConfig, SamplerConfig
from delphi.latents import LatentDataset


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export", help="the folder `actex export --format delphi` wrote")
    parser.add_argument("--tokenizer", required=True, help="a folder AutoTokenizer loads")
    parser.add_argument("--min-examples", type=int, default=5,
                        help="delphi's ConstructorConfig.min_examples (its default: 200)")
    parser.add_argument("--example-ctx-len", type=int, default=16,
                        help="delphi's ConstructorConfig.example_ctx_len; divides --ctx-len")
    args = parser.parse_args()
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    constructor = ConstructorConfig(min_examples=args.min_examples,
                                    example_ctx_len=args.example_ctx_len,
                                    non_activating_source="random")
    dataset = LatentDataset(args.export, SamplerConfig(), constructor, tokenizer=tokenizer)
    tokens = dataset.tokens
    latents = locations = 0
    strongest, fired = {}, {}  # (site, latent) -> strongest activation, locations
    for buffer in dataset.buffers:
        ids, split_locations, split_activations = buffer.load_data_per_latent()
        for latent, where, values in zip(ids, split_locations, split_activations):
            if len(where) != len(values) or (values <= 0).any():
                print(f"{buffer.path}: latent {int(latent)}: bad activations", file=sys.stderr)
                return 1
            if (where[:, 0] >= tokens.shape[0]).any() or (where[:, 1] >= tokens.shape[1]).any():
                print(f"{buffer.path}: latent {int(latent)}: a location outside the tokens",
                      file=sys.stderr)
                return 1
            latents += 1
            locations += len(where)
            strongest[(buffer.module_path, int(latent))] = float(values.max())
            fired[(buffer.module_path, int(latent))] = len(where)
    print(f"delphi read {len(dataset.buffers)} files of {len(dataset.modules)} sites: "
          f"{latents} latents, {locations} locations, tokens {tuple(tokens.shape)}")
    return check_records(dataset, strongest, fired, args.min_examples)


def check_records(dataset, strongest, fired, min_examples) -> int:
    """Builds every latent's record as delphi's pipeline does before explaining."""
    async def collect():
        return [record async for record in dataset]
    records = asyncio.run(collect())
    expected = sum(1 for count in fired.values() if count >= min_examples)
    for record in records:
        key = (record.latent.module_name, int(record.latent.latent_index))
        if not record.train:
            print(f"latent {key}: no train examples", file=sys.stderr)
            return 1
        best = [float(example.activations.max()) for example in record.train]
        if min(best) <= 0 or max(best) > strongest[key] * (1 + 1e-6):
            print(f"latent {key}: train examples peak at {best}, its locations at most "
                  f"{strongest[key]}", file=sys.stderr)
            return 1
    print(f"delphi built {len(records)} latent records (of {expected} latents firing at least "
          f"{min_examples} times), each with train examples that fire, none above the "
          f"latent's strongest location")
    return 0 if len(records) == expected else 1


if __name__ == "__main__":
    sys.exit(main())
