#!/usr/bin/python3
"""deploy/k8s/job.yaml holds together: the node's command line (the lines that
scripts/container/manifest_args.sh prints, which scripts/container/test.sh runs) names
the pods the Job and its headless Service create, the host count the Job runs, the
address the pod gets, the job key where the Secret is mounted, and a drain shorter than
the grace period; the Job is Indexed with a per-index backoff limit.

Usage: k8s_manifest_test.py SOURCE_DIR
"""

import os
import re
import subprocess
import sys
import tempfile
import unittest

SOURCE = sys.argv[1]
MANIFEST = os.path.join(SOURCE, "deploy/k8s/job.yaml")
ARGS_SCRIPT = os.path.join(SOURCE, "scripts/container/manifest_args.sh")
DEFAULT_DRAIN_SECONDS = 20  # --drain-timeout's default (docs/resume.md)


def node_args(manifest):
    result = subprocess.run(["bash", ARGS_SCRIPT, manifest], capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError(result.stderr)
    return result.stdout.splitlines()


def field(text, name):
    """Every value of `name: value` lines in the manifest."""
    return re.findall(rf"^\s*-?\s*{name}:\s*([^\s#]+)", text, re.MULTILINE)


def problems(manifest):
    """What does not hold together in `manifest`, as sentences."""
    with open(manifest) as f:
        text = f.read()
    args = node_args(manifest)
    flags = dict(arg[2:].split("=", 1) for arg in args if arg.startswith("--") and "=" in arg)
    found = []
    if args[:1] != ["node"]:
        found.append(f"the command line starts {args[:1]}, not `node`")
    job_name = field(text, "name")[1]  # the Service's, then the Job's
    service = field(text, "name")[0]
    port_entry = re.search(r"\{name: coordinator, port: (\d+)\}", text)
    port = port_entry.group(1) if port_entry else "(no coordinator port in the Service)"
    for flag, index in (("coordinator", 0), ("standby-coordinator", 1)):
        expected = f"{job_name}-{index}.{service}:{port}"
        if flags.get(flag) != expected:
            found.append(f"--{flag} is {flags.get(flag)}, pod {index}'s name is {expected}")
    if field(text, "subdomain") != [service]:
        found.append(f"subdomain {field(text, 'subdomain')} is not the Service {service}")
    hosts = flags.get("num-hosts")
    for count in ("completions", "parallelism"):
        if field(text, count) != [hosts]:
            found.append(f"{count} {field(text, count)} differs from --num-hosts={hosts}")
    if field(text, "completionMode") != ["Indexed"]:
        found.append("the Job is not Indexed: no JOB_COMPLETION_INDEX for the host id")
    if not field(text, "backoffLimitPerIndex"):
        found.append("no backoffLimitPerIndex: a lost pod's index is not started again")
    if flags.get("bind") != "$(POD_IP)" or "fieldPath: status.podIP" not in text:
        found.append(f"--bind is {flags.get('bind')}, not $(POD_IP) from status.podIP")
    key_dir = os.path.dirname(flags.get("job-key-file", ""))
    secret_mount = re.search(r"name: job-key, mountPath: (\S+), readOnly: true", text)
    if not secret_mount or secret_mount.group(1) != key_dir:
        found.append("--job-key-file is not in the Secret's read-only mount")
    grace = int(field(text, "terminationGracePeriodSeconds")[0])
    drain = int(flags.get("drain-timeout", DEFAULT_DRAIN_SECONDS))
    if grace <= drain:
        found.append(f"terminationGracePeriodSeconds {grace} does not outlast the drain {drain}")
    return found


class K8sManifest(unittest.TestCase):
    def test_the_manifest_holds_together(self):
        self.assertEqual(problems(MANIFEST), [])

    def test_the_check_catches_each_mismatch(self):
        with open(MANIFEST) as f:
            text = f.read()
        changes = {
            "--num-hosts=4": ("--num-hosts=3", "completions"),
            "--coordinator=actex-0.actex:8476": ("--coordinator=actex-1.actex:8476", "pod 0"),
            "terminationGracePeriodSeconds: 60": ("terminationGracePeriodSeconds: 20", "drain"),
            "--bind=$(POD_IP)": ("--bind=0.0.0.0", "status.podIP"),
            "--job-key-file=/etc/actex/job-key": ("--job-key-file=/data/job-key", "Secret"),
            "backoffLimitPerIndex: 3": ("backoffLimit: 3", "backoffLimitPerIndex"),
        }
        for original, (changed, named) in changes.items():
            with self.subTest(changed=changed), tempfile.TemporaryDirectory() as tmp:
                self.assertIn(original, text)
                broken = os.path.join(tmp, "job.yaml")
                with open(broken, "w") as f:
                    f.write(text.replace(original, changed))
                self.assertTrue(any(named in p for p in problems(broken)), problems(broken))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
