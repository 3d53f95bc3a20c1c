#!/usr/bin/python3
"""Reads actex activation shards (shard_NNNNNN.safetensors[.gz]) with numpy only.

As a library:
    from read_activations import load_shard
    tensors = load_shard("out/host_00/shard_000001.safetensors")  # name -> np.ndarray

bfloat16 tensors are widened exactly to float32 (bits << 16); float16 stays float16.

Rows of one site across a whole output, in batches (an extraction's folder, whose host
folders are read in name order and their listed shards in order, or a shuffle's):
    from read_activations import iter_batches, list_files
    for batch in iter_batches("shuffled", "blocks.20.hook_resid_post", batch_size=4096):
        ...                                      # float32 [batch_size, width]; last may be short

With torch installed, ActivationDataset(folder, site, batch_size) is an IterableDataset of
such batches as tensors; DataLoader workers (and ranks, given rank and world_size) read
disjoint files, so no row is seen twice:
    loader = DataLoader(ActivationDataset("shuffled", site, 4096), batch_size=None, num_workers=4)

As a command:
    read_activations.py SHARD                 summary: tensors, docs, tokens, site stats
    read_activations.py SHARD --dump NAME     one tensor as JSON on stdout
    read_activations.py SHARD --check         size and crc32 against metadata.json
    read_activations.py DIR --check           every shard listed in DIR/metadata.json
    read_activations.py OUT --same-as OTHER   OUT's rows equal OTHER's, document by document
                                              (two runs' outputs, however their hosts split it)
"""

import argparse
import gzip
import json
import math
import os
import struct
import sys
import zlib

import numpy as np

_NUMPY_DTYPES = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "BF16": "<u2",  # widened below
    "I64": "<i8",
    "I32": "<i4",
    "I16": "<i2",
    "I8": "i1",
    "U64": "<u8",
    "U32": "<u4",
    "U16": "<u2",
    "U8": "u1",
    "BOOL": "?",
}

_ID_TENSORS = ("token_ids", "doc_ids", "positions")


class ShardError(Exception):
    pass


def _read_bytes(path):
    with open(path, "rb") as f:
        head = f.read(2)
        f.seek(0)
        if head == b"\x1f\x8b":
            return gzip.decompress(f.read())
    # Plain files are mapped, so a large shard is paged in as it is used.
    return np.memmap(path, dtype=np.uint8, mode="r")


def read_header(data, path):
    """Returns (header dict, offset of the data section) of safetensors bytes."""
    if len(data) < 8:
        raise ShardError(f"{path}: {len(data)} bytes, too short for a safetensors file")
    (length,) = struct.unpack("<Q", bytes(data[:8]))
    if length > len(data) - 8:
        raise ShardError(f"{path}: header length {length} exceeds the file")
    try:
        header = json.loads(bytes(data[8 : 8 + length]).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ShardError(f"{path}: header is not valid JSON: {error}") from error
    return header, 8 + length


def _stored_tensor(data, header, start, name, path):
    """A tensor as stored (BF16 as uint16 bits), a view into `data`."""
    info = header[name]
    dtype = info["dtype"]
    if dtype not in _NUMPY_DTYPES:
        raise ShardError(f"{path}: tensor {name!r} has unsupported dtype {dtype}")
    begin, end = info["data_offsets"]
    shape = tuple(info["shape"])
    if start + end > len(data) or begin > end:
        raise ShardError(f"{path}: tensor {name!r} data_offsets {begin, end} out of range")
    if end == begin:
        array = np.zeros(0, dtype=_NUMPY_DTYPES[dtype])
    else:
        raw = np.frombuffer(data, dtype=np.uint8, count=end - begin, offset=start + begin)
        array = raw.view(_NUMPY_DTYPES[dtype])
    if array.size != math.prod(shape):
        raise ShardError(f"{path}: tensor {name!r} shape {shape} does not match its bytes")
    return array.reshape(shape)


def _widen(array, dtype):
    return (array.astype(np.uint32) << 16).view(np.float32) if dtype == "BF16" else array


def load_shard(path):
    """Loads every tensor of a shard (or any safetensors file) into numpy arrays."""
    data = _read_bytes(path)
    header, start = read_header(data, path)
    return {
        name: _widen(_stored_tensor(data, header, start, name, path), info["dtype"])
        for name, info in header.items()
        if name != "__metadata__"
    }


def list_files(folder):
    """The activation files of an output folder, in order: a shuffle's files as its
    metadata.json lists them, or every listed shard of an extraction's host folders
    (host folders in name order; a host folder itself also works)."""
    def listed(directory):
        with open(os.path.join(directory, "metadata.json")) as f:
            metadata = json.load(f)
        entries = metadata.get("files" if metadata.get("format") == "actex-shuffled" else "shards")
        if entries is None:
            raise ShardError(f"{directory}/metadata.json lists no files")
        return [os.path.join(directory, entry["file"]) for entry in entries]

    if os.path.exists(os.path.join(folder, "metadata.json")):
        return listed(folder)
    hosts = sorted(
        entry.path
        for entry in os.scandir(folder)
        if entry.is_dir() and os.path.exists(os.path.join(entry.path, "metadata.json"))
    )
    if not hosts:
        raise ShardError(f"{folder} holds no metadata.json and no host folder with one")
    return [path for host in hosts for path in listed(host)]


def iter_batches(folder, site, batch_size=4096, files=None, with_ids=False):
    """Yields float32 arrays [batch_size, width] of `site`'s rows (the last batch may be
    short; int32 for an integer site such as expert ids, stored as I32), over the
    folder's files in order (or the given `files`). One file is mapped at a time and
    rows are widened a batch at a time. with_ids=True yields (rows, token_ids, doc_ids,
    positions) instead."""
    names = (site,) + (_ID_TENSORS if with_ids else ())
    pending = []  # per name, pieces not yet yielded
    pending_rows = 0
    for path in files if files is not None else list_files(folder):
        data = _read_bytes(path)
        header, start = read_header(data, path)
        if site not in header:
            raise ShardError(f"{path}: no tensor {site!r}")
        stored = [_stored_tensor(data, header, start, name, path) for name in names]
        rows = stored[0].shape[0]
        begin = 0
        while begin < rows:
            take = min(batch_size - pending_rows, rows - begin)
            piece = [array[begin : begin + take] for array in stored]
            if header[site]["dtype"] != "I32":  # expert ids stay integers
                piece[0] = _widen(piece[0], header[site]["dtype"]).astype(np.float32, copy=False)
            pending.append(piece)
            pending_rows += take
            begin += take
            if pending_rows == batch_size:
                yield _join(pending, with_ids)
                pending, pending_rows = [], 0
    if pending_rows:
        yield _join(pending, with_ids)


def _join(pieces, with_ids):
    columns = [np.concatenate([piece[i] for piece in pieces]) for i in range(len(pieces[0]))]
    return tuple(columns) if with_ids else columns[0]


try:
    import torch
    from torch.utils.data import IterableDataset, get_worker_info
except ImportError:  # numpy only
    torch = None

if torch is not None:

    class ActivationDataset(IterableDataset):
        """Batches [batch_size, width] of one site's rows as float32 tensors (use
        DataLoader(..., batch_size=None)). Files are dealt round-robin to ranks
        (rank, world_size) and then to DataLoader workers, so every row is read by
        exactly one of them; a batch never mixes files of two workers."""

        def __init__(self, folder, site, batch_size=4096, rank=0, world_size=1):
            super().__init__()
            self.files = list_files(folder)[rank::world_size]
            self.site = site
            self.batch_size = batch_size

        def __iter__(self):
            worker = get_worker_info()
            files = self.files if worker is None else self.files[worker.id :: worker.num_workers]
            for batch in iter_batches(None, self.site, self.batch_size, files=files):
                yield torch.from_numpy(np.ascontiguousarray(batch))


def shard_metadata(path):
    """The __metadata__ map of a shard."""
    header, _ = read_header(_read_bytes(path), path)
    return header.get("__metadata__", {})


def _json_value(value):
    # JSON has no NaN or infinity: they are written as strings.
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def dump_tensor(path, name):
    """One tensor as a JSON-ready dict: its stored dtype, shape and flat values."""
    data = _read_bytes(path)
    header, _ = read_header(data, path)
    tensors = load_shard(path)
    if name not in tensors:
        raise ShardError(f"{path}: no tensor {name!r}; it has {', '.join(sorted(tensors))}")
    array = tensors[name]
    wide = array.astype(np.float64 if array.dtype.kind == "f" else np.int64)
    return {
        "name": name,
        "stored_dtype": header[name]["dtype"],
        "dtype": str(array.dtype),
        "shape": list(array.shape),
        "values": [_json_value(v) for v in wide.ravel().tolist()],
    }


def summarize(path):
    header, _ = read_header(_read_bytes(path), path)
    tensors = load_shard(path)
    lines = [f"{path}"]
    for name, array in tensors.items():
        stored = header[name]["dtype"]
        lines.append(f"  {name:40s} {stored:5s} -> {str(array.dtype):8s} {list(array.shape)}")
    if "doc_ids" in tensors:
        doc_ids = tensors["doc_ids"]
        lines.append(f"  docs {len(np.unique(doc_ids))}  tokens {doc_ids.shape[0]}")
        if doc_ids.size:
            lines.append(f"  doc ids {int(doc_ids.min())}..{int(doc_ids.max())}")
    for name, array in tensors.items():
        if name in _ID_TENSORS or array.dtype.kind != "f" or array.size == 0:
            continue
        values = array.astype(np.float64)
        lines.append(
            f"  {name}: mean {values.mean():.6g} std {values.std():.6g} "
            f"max|x| {np.abs(values).max():.6g}"
        )
    return "\n".join(lines)


def _file_crc32(path):
    crc = 0
    size = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
            size += len(chunk)
    return crc, size


def check(path):
    """Checks shard(s) against metadata.json; returns a list of problems (empty: all good)."""
    directory = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    with open(os.path.join(directory, "metadata.json")) as f:
        metadata = json.load(f)
    listed = {shard["file"]: shard for shard in metadata["shards"]}
    if os.path.isdir(path):
        names = list(listed)
    else:
        names = [os.path.basename(path)]
    problems = []
    for name in names:
        if name not in listed:
            problems.append(f"{name}: not listed in {directory}/metadata.json")
            continue
        shard_path = os.path.join(directory, name)
        if not os.path.exists(shard_path):
            problems.append(f"{shard_path}: listed but missing")
            continue
        crc, size = _file_crc32(shard_path)
        if size != listed[name]["bytes"]:
            expected = listed[name]["bytes"]
            problems.append(f"{shard_path}: {size} bytes, metadata.json says {expected}")
        if f"{crc:08x}" != listed[name]["crc32"]:
            expected = listed[name]["crc32"]
            problems.append(f"{shard_path}: crc32 {crc:08x}, metadata.json says {expected}")
    return problems, len(names)


def _document_order(files):
    """Per file its (doc_ids, positions), and the order that sorts their concatenation by
    document then position."""
    ids = []
    for path in files:
        data = _read_bytes(path)
        header, start = read_header(data, path)
        ids.append(tuple(_stored_tensor(data, header, start, n, path) for n in _ID_TENSORS[1:]))
    doc_ids = np.concatenate([d for d, _ in ids]) if ids else np.zeros(0, np.int64)
    positions = np.concatenate([p for _, p in ids]) if ids else np.zeros(0, np.int64)
    order = np.lexsort((positions, doc_ids))
    return doc_ids[order], positions[order], order


def _stored_rows(files, name, order):
    """`name`'s rows over `files` as stored (bits, not widened), in `order`."""
    pieces = []
    for path in files:
        data = _read_bytes(path)
        header, start = read_header(data, path)
        if name not in header:
            raise ShardError(f"{path}: no tensor {name!r}")
        pieces.append(np.array(_stored_tensor(data, header, start, name, path)))
    return np.concatenate(pieces)[order]


def compare_outputs(folder, other):
    """Problems found comparing two outputs row by row: the same (document, position)
    rows, each tensor's rows equal bit for bit, whichever host or shard holds them.
    Returns (problems, rows compared)."""
    files, other_files = list_files(folder), list_files(other)
    doc_ids, positions, order = _document_order(files)
    other_doc_ids, other_positions, other_order = _document_order(other_files)
    if not (np.array_equal(doc_ids, other_doc_ids) and np.array_equal(positions, other_positions)):
        mine = set(np.unique(doc_ids).tolist())
        theirs = set(np.unique(other_doc_ids).tolist())
        return [
            f"{folder} and {other} hold different rows: {len(doc_ids)} and "
            f"{len(other_doc_ids)} tokens; documents only in {folder}: "
            f"{sorted(mine - theirs)[:10]}, only in {other}: {sorted(theirs - mine)[:10]}"
        ], 0
    repeated = (np.diff(doc_ids) == 0) & (np.diff(positions) == 0)
    if repeated.any():
        first = int(np.argmax(repeated))
        return [f"{folder}: document {int(doc_ids[first])} position "
                f"{int(positions[first])} is written twice"], 0
    names, other_names = (
        sorted(read_header(_read_bytes(paths[0]), paths[0])[0]) if paths else []
        for paths in (files, other_files)
    )
    if names != other_names:
        return [f"{folder} holds tensors {names}, {other} holds {other_names}"], 0
    problems = []
    for name in names:
        if name == "__metadata__":
            continue
        rows = _stored_rows(files, name, order)
        other_rows = _stored_rows(other_files, name, other_order)
        if rows.dtype != other_rows.dtype or rows.shape != other_rows.shape:
            problems.append(f"{name}: {rows.dtype} {list(rows.shape)} against "
                            f"{other_rows.dtype} {list(other_rows.shape)}")
            continue
        differs = (rows.reshape(len(rows), -1).view(np.uint8) !=
                   other_rows.reshape(len(other_rows), -1).view(np.uint8)).any(axis=1)
        if differs.any():
            first = int(np.argmax(differs))
            problems.append(f"{name}: {int(differs.sum())} row(s) differ, the first at document "
                            f"{int(doc_ids[first])} position {int(positions[first])}")
    return problems, len(doc_ids)


def _report(problems, success):
    """Prints the problems (exit status 1), or the success line when there are none."""
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    print(success)
    return 0


def main(argv):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "path", help="a shard file, or an output directory with --check or --same-as"
    )
    parser.add_argument("--dump", metavar="NAME", help="print tensor NAME as JSON")
    parser.add_argument(
        "--check", action="store_true", help="verify bytes and crc32 against metadata.json"
    )
    parser.add_argument(
        "--same-as",
        metavar="OTHER",
        help="compare output directory PATH with OTHER row by row (by document and position)",
    )
    args = parser.parse_args(argv)
    try:
        if args.same_as:
            problems, rows = compare_outputs(args.path, args.same_as)
            same = f"OK: {args.path} and {args.same_as} hold the same {rows} rows, bit for bit"
            return _report(problems, same)
        if args.check:
            problems, count = check(args.path)
            return _report(problems, f"OK: {count} shard(s) match metadata.json")
        if args.dump:
            print(json.dumps(dump_tensor(args.path, args.dump)))
            return 0
        print(summarize(args.path))
        return 0
    except (OSError, ShardError, KeyError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
