#!/usr/bin/env python3
"""llama.cpp's forward on the CPU in tokens/s, the baseline of actex's --precision bf16 (issue 24).

Writes a GGUF of a random Qwen2.5-0.5B-shaped model (hidden 896, 14 query / 2 key-value heads,
MLP 4864, q/k/v biases, tied embeddings; vocabulary 4096 and --layers layers, as bench_kernels'
BM_Forward) in BF16 or F32, and times llama.cpp (the llama-cpp-python wheel, built from source
with GGML_NATIVE=ON, so its AVX512_BF16 dot products are in) on eight 256-token documents, each
its own sequence of one 2048-token batch (BM_Forward's batch), and again as one 256-token batch
per document (llama.cpp's usual prompt processing), the key/value cache cleared between
batches. llama.cpp computes the logits of each sequence's last token only, so the lm_head costs
it next to nothing (BM_Forward computes none). Random weights: speed only.

Needs a Python with llama-cpp-python and gguf, e.g. a venv made by
  CMAKE_ARGS="-DGGML_NATIVE=ON" pip install llama-cpp-python gguf
(it builds llama.cpp from source: ~25 minutes on two busy cores).

Usage: python bench/llama_cpp_forward.py [--dtype bf16|f32] [--threads 2] [--layers 4]
           [--repeats 5] [--gguf PATH]
Prints a line per layout: tokens/s, the median and the best of --repeats timed runs after one
untimed (on a shared machine the best is the least disturbed).
"""

import argparse
import pathlib
import statistics
import tempfile
import time

import numpy as np

import gguf
import llama_cpp

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, INTERMEDIATE, VOCAB = 896, 14, 2, 64, 4864, 4096
DOCUMENTS, DOCUMENT_TOKENS = 8, 256


@llama_cpp.llama_log_callback
def LOG_NOTHING(level, text, user_data):  # llama.cpp's load and graph logs
    pass


def write_gguf(path, dtype, layers):
    """A random Qwen2.5-0.5B-shaped model; norms are ones, weights N(0, 0.02)."""
    writer = gguf.GGUFWriter(str(path), "qwen2")
    writer.add_context_length(32768)
    writer.add_embedding_length(HIDDEN)
    writer.add_block_count(layers)
    writer.add_feed_forward_length(INTERMEDIATE)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_rope_freq_base(1e6)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_BF16 if dtype == "bf16"
                         else gguf.LlamaFileType.ALL_F32)
    # A SentencePiece-style vocabulary of byte tokens and fillers: the ids are all we feed.
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    tokens += [f"t{i}" for i in range(VOCAB - len(tokens))]
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores([0.0] * VOCAB)
    writer.add_token_types([2, 3, 3] + [6] * 256 + [1] * (VOCAB - 259))
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    rng = np.random.default_rng(2026)

    def add(name, shape, ones=False, matrix=True):
        values = np.ones(shape, np.float32) if ones else rng.normal(0, 0.02, shape).astype(np.float32)
        if dtype == "bf16" and matrix:
            bits = values.view(np.uint32)
            rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
            writer.add_tensor(name, rounded, raw_shape=shape, raw_dtype=gguf.GGMLQuantizationType.BF16)
        else:
            writer.add_tensor(name, values)

    add("token_embd.weight", (VOCAB, HIDDEN))
    for l in range(layers):
        block = f"blk.{l}."
        add(block + "attn_norm.weight", (HIDDEN,), ones=True, matrix=False)
        add(block + "attn_q.weight", (HEADS * HEAD_DIM, HIDDEN))
        add(block + "attn_q.bias", (HEADS * HEAD_DIM,), matrix=False)
        add(block + "attn_k.weight", (KV_HEADS * HEAD_DIM, HIDDEN))
        add(block + "attn_k.bias", (KV_HEADS * HEAD_DIM,), matrix=False)
        add(block + "attn_v.weight", (KV_HEADS * HEAD_DIM, HIDDEN))
        add(block + "attn_v.bias", (KV_HEADS * HEAD_DIM,), matrix=False)
        add(block + "attn_output.weight", (HIDDEN, HEADS * HEAD_DIM))
        add(block + "ffn_norm.weight", (HIDDEN,), ones=True, matrix=False)
        add(block + "ffn_gate.weight", (INTERMEDIATE, HIDDEN))
        add(block + "ffn_up.weight", (INTERMEDIATE, HIDDEN))
        add(block + "ffn_down.weight", (HIDDEN, INTERMEDIATE))
    add("output_norm.weight", (HIDDEN,), ones=True, matrix=False)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def time_forward(path, threads, repeats, together):
    """Median tokens/s of BM_Forward's eight documents: `together`, one 2048-token batch of
    eight sequences (a cache stream each); else one 256-token batch per document, the cache
    cleared in between (llama.cpp's usual prompt processing)."""
    batch_tokens = DOCUMENTS * DOCUMENT_TOKENS
    per_decode = batch_tokens if together else DOCUMENT_TOKENS
    llama_cpp.llama_backend_init()
    llama_cpp.llama_log_set(LOG_NOTHING, None)
    model = llama_cpp.llama_model_load_from_file(str(path).encode(),
                                                 llama_cpp.llama_model_default_params())
    params = llama_cpp.llama_context_default_params()
    params.n_ctx = params.n_batch = params.n_ubatch = per_decode
    params.n_seq_max = DOCUMENTS if together else 1
    params.kv_unified = False  # a cache stream per document: attention within it only
    params.n_threads = params.n_threads_batch = threads
    context = llama_cpp.llama_init_from_model(model, params)
    batch = llama_cpp.llama_batch_init(per_decode, 0, params.n_seq_max)
    ids = np.random.default_rng(1).integers(259, VOCAB, size=batch_tokens)
    memory = llama_cpp.llama_get_memory(context)

    def decode(first_doc, docs):
        for i in range(docs * DOCUMENT_TOKENS):
            batch.token[i] = int(ids[first_doc * DOCUMENT_TOKENS + i])
            batch.pos[i] = i % DOCUMENT_TOKENS
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = i // DOCUMENT_TOKENS
            batch.logits[i] = i % DOCUMENT_TOKENS == DOCUMENT_TOKENS - 1
        batch.n_tokens = docs * DOCUMENT_TOKENS
        llama_cpp.llama_memory_clear(memory, True)
        if llama_cpp.llama_decode(context, batch) != 0:
            raise RuntimeError("llama_decode failed")

    rates = []
    for repeat in range(repeats + 1):
        start = time.perf_counter()
        if together:
            decode(0, DOCUMENTS)
        else:
            for doc in range(DOCUMENTS):
                decode(doc, 1)
        seconds = time.perf_counter() - start
        if repeat > 0:  # the first one pages the weights in
            rates.append(batch_tokens / seconds)
    llama_cpp.llama_batch_free(batch)
    llama_cpp.llama_free(context)
    llama_cpp.llama_model_free(model)
    return statistics.median(rates), rates


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dtype", choices=["bf16", "f32"], default="bf16")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--gguf", help="where to write the model (default: a temporary file)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        path = pathlib.Path(args.gguf or pathlib.Path(temporary) / "model.gguf")
        write_gguf(path, args.dtype, args.layers)
        for together in (True, False):
            median, rates = time_forward(path, args.threads, args.repeats, together)
            layout = "one batch of 8 sequences" if together else "a batch per document"
            print(f"llama.cpp {llama_cpp.__version__} {args.dtype.upper()}, {args.layers} layers "
                  f"of Qwen2.5-0.5B shape, {args.threads} threads, {DOCUMENTS}x{DOCUMENT_TOKENS}"
                  f"-token documents, {layout}: {median:.1f} tokens/s (median of {len(rates)}; best "
                  f"{max(rates):.1f}: "
                  + ", ".join(f"{r:.1f}" for r in rates) + ")", flush=True)


if __name__ == "__main__":
    main()
