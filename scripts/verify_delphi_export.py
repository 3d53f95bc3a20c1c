#!/usr/bin/env python3
"""Loads an `actex export --format delphi` folder with EleutherAI delphi's own LatentDataset.

Not run by CI. Set up once (delphi and its dependencies, torch included):
    python3 -m venv VENV && VENV/bin/pip install eai-delphi
then:
    VENV/bin/python scripts/verify_delphi_export.py EXPORT --tokenizer MODEL_DIR
Exits 0 when every site's every latent range loads and each latent's locations lie
inside the tokens, printing the latents and locations read; 1 otherwise.
"""
import argparse
import sys

from transformers import AutoTokenizer

from delphi.config import ConstructorConfig, SamplerConfig
from delphi.latents import LatentDataset


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export", help="the folder `actex export --format delphi` wrote")
    parser.add_argument("--tokenizer", required=True, help="a folder AutoTokenizer loads")
    args = parser.parse_args()
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    dataset = LatentDataset(args.export, SamplerConfig(), ConstructorConfig(), tokenizer=tokenizer)
    tokens = dataset.tokens
    latents = locations = 0
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
    print(f"delphi read {len(dataset.buffers)} files of {len(dataset.modules)} sites: "
          f"{latents} latents, {locations} locations, tokens {tuple(tokens.shape)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
