#!/usr/bin/env python3
"""translate_launches.py: each launch becomes a Launch call marked syncing exactly when
its kernel (or a __device__ function it calls) syncs, dynamic shared memory becomes the
block's, and a launch it cannot read stops the build naming the file.

    translate_launches_test.py TRANSLATE_LAUNCHES_PY
"""

import contextlib
import importlib.util
import io
import pathlib
import sys
import tempfile

KERNELS = '''
__device__ float Sum(float v) { return v + __shfl_xor_sync(0xffffffffu, v, 1); }
__device__ float Twice(float v) { return Sum(v) * 2; }
__global__ void Plain(float* x) { x[threadIdx.x] = 1; }
__global__ void Syncing(float* x) {
  extern __shared__ float tile[];
  x[threadIdx.x] = Twice(tile[0]);
}
void Run(float* x, cudaStream_t stream) {
  Plain<<<Blocks(4, 2), 32>>>(x);
  Syncing<<<1, 64, 128, stream>>>(x);
  auto kernel = Plain;
  kernel<<<1, 32, 0, stream>>>(x);
}
'''


def translate(translator, folder, source):
    """Runs the translator's main, in this process, on `source` as a file: its exit
    message (None when it succeeded) and the translation."""
    cu, cc = folder / 'k.cu', folder / 'k.cc'
    cu.write_text(source)
    cc.unlink(missing_ok=True)
    sys.argv = ['translate_launches.py', str(cu), str(cc)]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            translator.main()
    except SystemExit as stop:
        return str(stop), ''
    return None, cc.read_text()


def main():
    spec = importlib.util.spec_from_file_location('translate_launches', sys.argv[1])
    translator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(translator)
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        folder = pathlib.Path(folder)
        error, out = translate(translator, folder, KERNELS)
        expected = [
            '#line 1 "%s"' % (folder / 'k.cu'),
            'Launch(dim3(Blocks(4, 2)), dim3(32), 0, nullptr, false, [&] { Plain(x); })',
            'Launch(dim3(1), dim3(64), 128, stream, true, [&] { Syncing(x); })',
            # A kernel named through a variable may sync: taken as syncing.
            'Launch(dim3(1), dim3(32), 0, stream, true, [&] { kernel(x); })',
            'float* tile = static_cast<float*>(::actex::cuda_emulator::DynamicSharedMemory());',
        ]
        if error is not None:
            failures.append('a valid file was refused: ' + error)
        for line in expected:
            if line not in out:
                failures.append('missing from the translation: ' + line)
        if '<<<' in out:
            failures.append('a launch was left untranslated')
        error, _ = translate(translator, folder, 'void F() { K<<<1>>>(x); }\n')
        if error is None or not error.endswith('k.cu: K<<<...>>> names no grid and block'):
            failures.append('a launch without its block was not refused by name: %s' % error)
    for failure in failures:
        print('FAIL: ' + failure)
    if failures:
        sys.exit(1)
    print('translate_launches.py: launches, syncing kernels, shared memory and errors as expected')


if __name__ == '__main__':
    main()
