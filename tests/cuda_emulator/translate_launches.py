#!/usr/bin/env python3
"""Translates a CUDA kernel file (.cu) into C++ that the CUDA emulator runs.

    translate_launches.py KERNELS.cu OUT.cc

Two constructs of the CUDA language are not C++; everything else compiles as it is
against the emulator's headers:
- a launch `Kernel<<<grid, block, shared_bytes, stream>>>(args)` becomes
  `::actex::cuda_emulator::Launch(dim3(grid), dim3(block), shared_bytes, stream,
  synchronising, [&] { Kernel(args); })`, where `synchronising` says whether the kernel (or a
  __device__ function it calls, at any depth) shuffles or syncs: its threads then run
  as fibers. A kernel named through a variable is taken as synchronising (slower, never
  wrong);
- `extern __shared__ T name[];` becomes a pointer to the running block's dynamic shared
  memory.
A `#line` directive keeps the compiler's messages pointing at the .cu file.
"""

import re
import sys

SYNC = re.compile(r'__shfl|__syncthreads|__syncwarp')
EXTERN_SHARED = re.compile(
    r'extern\s+__shared__\s+(?:__align__\(\d+\)\s+)?([A-Za-z_0-9:]+)\s+(\w+)\s*\[\s*\]\s*;')
FUNCTION = re.compile(r'(?:__global__|__device__)[^;{(]*?\b(\w+)\s*\(')
LAUNCH = re.compile(r'([A-Za-z_][A-Za-z_0-9:]*(?:<[^<>;]*>)?)\s*<<<')


def matching(source, start, opening, closing):
    """The index of the bracket that closes the one at `start`."""
    depth = 0
    for i in range(start, len(source)):
        if source[i] == opening:
            depth += 1
        elif source[i] == closing:
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f'the {opening} at offset {start} is never closed')


def bodies(source):
    """Each __global__ or __device__ function's name and body (overloads joined)."""
    found = {}
    for match in FUNCTION.finditer(source):
        brace = source.find('{', match.end())
        semicolon = source.find(';', match.end())
        if brace < 0 or 0 <= semicolon < brace:
            continue  # a declaration
        end = matching(source, brace, '{', '}')
        found[match.group(1)] = found.get(match.group(1), '') + source[brace:end]
    return found


def synchronising_functions(functions):
    """The functions that shuffle or sync, themselves or through a call."""
    syncing = {name for name, body in functions.items() if SYNC.search(body)}
    grown = True
    while grown:
        grown = False
        for name, body in functions.items():
            if name not in syncing and any(
                    re.search(r'\b%s\s*[<(]' % callee, body) for callee in syncing):
                syncing.add(name)
                grown = True
    return syncing


def split_top_level(text):
    """`text` split at the commas outside brackets, each part stripped."""
    parts, depth, current = [], 0, ''
    for c in text:
        depth += c in '([{'
        depth -= c in ')]}'
        if c == ',' and depth == 0:
            parts.append(current.strip())
            current = ''
        else:
            current += c
    return parts + [current.strip()]


def translate(source):
    source = EXTERN_SHARED.sub(
        r'\1* \2 = static_cast<\1*>(::actex::cuda_emulator::DynamicSharedMemory());', source)
    functions = bodies(source)
    syncing = synchronising_functions(functions)
    out, i = [], 0
    while (launch := LAUNCH.search(source, i)) is not None:
        out.append(source[i:launch.start()])
        kernel = launch.group(1)
        config_end = source.index('>>>', launch.end())
        config = split_top_level(source[launch.end():config_end])
        if len(config) < 2:
            raise ValueError(f'{kernel}<<<...>>> names no grid and block')
        config += ['0', 'nullptr'][len(config) - 2:]  # CUDA's defaults: no shared memory, stream 0
        open_paren = config_end + 3
        if source[open_paren] != '(':
            raise ValueError(f'{kernel}<<<...>>> is not followed by its arguments')
        close_paren = matching(source, open_paren, '(', ')')
        name = re.sub(r'<.*', '', kernel)
        synchronising = name in syncing or name not in functions
        out.append('::actex::cuda_emulator::Launch(dim3(%s), dim3(%s), %s, %s, %s, '
                   '[&] { %s(%s); })' % (config[0], config[1], config[2], config[3],
                                         'true' if synchronising else 'false', kernel,
                                         source[open_paren + 1:close_paren]))
        i = close_paren + 1
    out.append(source[i:])
    return ''.join(out)


def main():
    if len(sys.argv) != 3:
        raise SystemExit('usage: translate_launches.py KERNELS.cu OUT.cc')
    with open(sys.argv[1]) as f:
        source = f.read()
    try:
        translated = translate(source)
    except ValueError as error:
        raise SystemExit(f'{sys.argv[1]}: {error}')
    with open(sys.argv[2], 'w') as f:
        f.write('// Generated from %s by tests/cuda_emulator/translate_launches.py.\n'
                '#line 1 "%s"\n' % (sys.argv[1], sys.argv[1]))
        f.write(translated)


if __name__ == '__main__':
    main()
