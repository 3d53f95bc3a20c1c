#!/usr/bin/python3
"""What a trainer reads, checked with numpy on a job of two hosts run by actex simulate:
the statistics `actex inspect --stats --json` merges equal a numpy computation over the
same rows; iter_batches yields every row of a folder in order and in full batches; a
shuffle holds the same rows; ActivationDataset under DataLoader workers reads each row once; the lm_saes
export holds the shuffle's rows chunk by chunk; `--same-as` finds the job's rows equal to
one process's and names a changed row.

Usage: trainer_readers_test.py ACTEX SOURCE_DIR
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

ACTEX, SOURCE = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SOURCE, "scripts"))
import read_activations as ra  # noqa: E402

SITE = "blocks.1.hook_resid_post"


def run(*args):
    result = subprocess.run([ACTEX, *args], capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise AssertionError(f"actex {' '.join(args)}: {result.returncode}\n{result.stderr}")
    return result.stdout


class TrainerReaders(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = cls.tmp.name
        rng = np.random.default_rng(5)
        with open(f"{root}/corpus.jsonl", "w") as corpus:
            for _ in range(40):
                ids = rng.integers(1, 500, rng.integers(5, 60)).tolist()
                corpus.write(json.dumps({"input_ids": ids}) + "\n")
        cls.out = f"{root}/out"
        extraction = ["--model", f"{SOURCE}/tests/fixtures/qwen2-tiny",
                      "--data", f"{root}/corpus.jsonl", "--layers", "0,1",
                      "--sites", "resid_post,mlp_out", "--dtype", "float32",
                      "--max-seq-len", "32", "--overflow", "split", "--blas-threads", "1"]
        run("simulate", "--hosts", "2", "--mesh", "2d", "--heartbeat-timeout", "20",
            "--out", cls.out, "--shard-size", "16KB", *extraction)
        cls.single = f"{root}/single"
        run("extract", "--out", cls.single, "--shards", "1", *extraction)
        cls.shuffled = f"{root}/shuffled"
        run("shuffle", cls.out, "--to", cls.shuffled, "--rows-per-file", "300", "--memory", "1MB")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def all_rows(self, folder):
        shards = [ra.load_shard(path) for path in ra.list_files(folder)]
        return {name: np.concatenate([s[name] for s in shards]) for name in shards[0]}

    def test_statistics_equal_numpy_over_every_host_folder(self):
        # Two host folders (beside them, each host's lock file .host_NN.lock).
        hosts = [name for name in os.listdir(self.out) if name.startswith("host_")]
        self.assertEqual(len(hosts), 2)
        stats = json.loads(run("inspect", self.out, "--stats", "--json"))
        rows = self.all_rows(self.out)
        for site in ("blocks.0.hook_resid_post", "blocks.1.hook_mlp_out"):
            x = rows[site].astype(np.float64)
            norms = np.linalg.norm(x, axis=1)
            got = stats[site]
            self.assertEqual(got["count"], x.shape[0])
            np.testing.assert_allclose(got["mean"], x.mean(0), rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(got["variance"], x.var(0), rtol=1e-7, atol=1e-12)
            self.assertAlmostEqual(got["mean_norm"], norms.mean(), delta=1e-9 * norms.mean())
            self.assertAlmostEqual(got["mean_squared_norm"], (norms**2).mean(),
                                   delta=1e-9 * (norms**2).mean())
            self.assertEqual(got["max_abs"], np.abs(x).max())
            self.assertEqual(got["rows_over_threshold"],
                             int((np.abs(x).max(1) > got["threshold"]).sum()))
            self.assertAlmostEqual(got["normalization_factor"],
                                   np.sqrt(x.shape[1]) / norms.mean(), places=9)
        text = run("inspect", self.out, "--stats")
        self.assertIn("normalization factor sqrt(64) / mean norm", text)

    def test_batches_cover_the_folder_in_order(self):
        rows = self.all_rows(self.out)
        batches = list(ra.iter_batches(self.out, SITE, batch_size=100, with_ids=True))
        self.assertTrue(all(len(b[0]) == 100 for b in batches[:-1]))
        self.assertTrue(0 < len(batches[-1][0]) <= 100)
        np.testing.assert_array_equal(np.concatenate([b[0] for b in batches]), rows[SITE])
        np.testing.assert_array_equal(np.concatenate([b[2] for b in batches]), rows["doc_ids"])

    def test_shuffle_holds_the_same_rows_in_another_order(self):
        source = self.all_rows(self.out)
        shuffled = list(ra.iter_batches(self.shuffled, SITE, batch_size=128, with_ids=True))
        values = np.concatenate([b[0] for b in shuffled])
        keys = np.concatenate([b[2] for b in shuffled]) * 1000 + np.concatenate(
            [b[3] for b in shuffled])
        source_keys = source["doc_ids"] * 1000 + source["positions"]
        self.assertFalse(np.array_equal(keys, source_keys))
        order, source_order = np.argsort(keys), np.argsort(source_keys)
        np.testing.assert_array_equal(keys[order], source_keys[source_order])
        np.testing.assert_array_equal(values[order], source[SITE][source_order])

    def test_dataset_workers_read_every_row_once(self):
        import torch
        from torch.utils.data import DataLoader

        dataset = ra.ActivationDataset(self.shuffled, SITE, batch_size=64)
        self.assertGreater(len(dataset.files), 2)
        loader = DataLoader(dataset, batch_size=None, num_workers=2)
        batches = list(loader)
        self.assertTrue(all(b.dtype == torch.float32 and b.shape[1] == 64 for b in batches))
        seen = torch.cat(batches).numpy()
        expected = np.concatenate(list(ra.iter_batches(self.shuffled, SITE, 1000)))
        self.assertEqual(seen.shape, expected.shape)
        seen_sorted = seen[np.lexsort(seen.T[::-1])]
        np.testing.assert_array_equal(seen_sorted, expected[np.lexsort(expected.T[::-1])])
        halves = [ra.ActivationDataset(self.shuffled, SITE, 64, rank=r, world_size=2)
                  for r in range(2)]
        self.assertEqual(sorted(halves[0].files + halves[1].files), sorted(dataset.files))
        self.assertFalse(set(halves[0].files) & set(halves[1].files))

    def test_lm_saes_export_holds_the_shuffle_chunk_by_chunk(self):
        lm = f"{self.tmp.name}/lm_saes"
        run("export", "--format", "lm_saes", self.shuffled, "--to", lm)
        files = ra.list_files(self.shuffled)
        sites = sorted(os.listdir(lm))
        self.assertEqual(sites, ["blocks.0.hook_mlp_out", "blocks.0.hook_resid_post",
                                 "blocks.1.hook_mlp_out", "blocks.1.hook_resid_post"])
        for site in sites:
            chunks = sorted(os.listdir(f"{lm}/{site}"))
            self.assertEqual(chunks, [f"chunk-{i:08d}.safetensors" for i in range(len(files))])
            for chunk, source in zip(chunks, files):
                got, expected = ra.load_shard(f"{lm}/{site}/{chunk}"), ra.load_shard(source)
                self.assertEqual(sorted(got), ["activation", "tokens"])
                self.assertEqual(got["tokens"].dtype, np.int64)
                np.testing.assert_array_equal(got["activation"], expected[site])
                np.testing.assert_array_equal(got["tokens"], expected["token_ids"])
        # A stopped export continues: a missing chunk is written again, the rest kept.
        os.remove(f"{lm}/{SITE}/chunk-00000001.safetensors")
        text = run("export", "--format", "lm_saes", self.shuffled, "--to", lm)
        self.assertIn(f"({len(files) - 1} already there)", text)
        self.assertTrue(os.path.exists(f"{lm}/{SITE}/chunk-00000001.safetensors"))

    def test_same_as_finds_the_job_equal_to_one_process(self):
        problems, rows = ra.compare_outputs(self.out, self.single)
        self.assertEqual(problems, [])
        self.assertEqual(rows, len(self.all_rows(self.single)["doc_ids"]))
        result = subprocess.run([sys.executable, f"{SOURCE}/scripts/read_activations.py",
                                 self.out, "--same-as", self.single],
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(f"hold the same {rows} rows, bit for bit", result.stdout)

    def test_same_as_names_a_changed_row(self):
        changed = f"{self.tmp.name}/changed"
        shutil.copytree(self.single, changed)
        shard = ra.list_files(changed)[0]
        data = ra._read_bytes(shard)
        header, start = ra.read_header(data, shard)
        doc_ids = np.array(ra.load_shard(shard)["doc_ids"])
        begin = header[SITE]["data_offsets"][0]
        width = header[SITE]["shape"][1]
        row = 5  # one value of the sixth row gets its lowest bit flipped
        with open(shard, "r+b") as f:
            f.seek(start + begin + row * width * 4)
            byte = f.read(1)[0]
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([byte ^ 1]))
        problems, _ = ra.compare_outputs(self.out, changed)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn(f"{SITE}: 1 row(s) differ, the first at document {doc_ids[row]}",
                      problems[0])
        result = subprocess.run([sys.executable, f"{SOURCE}/scripts/read_activations.py",
                                 self.out, "--same-as", changed],
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 1)
        self.assertIn("1 row(s) differ", result.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
