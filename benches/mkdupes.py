#!/usr/bin/env python3
"""Add reproducible duplicate groups of real (random) content to a tree.

    benches/mkdupes.py --out /tmp/fsbench/d/dupes --groups 3000 [--seed 1]

Makes GROUPS groups of 2-5 byte-identical copies spread over a few hundred
folders, with sizes log-uniform from 1 KiB to 1 MiB and a few groups of
2-8 MiB; and near-misses that a size-only or head-only comparison would get
wrong: same-size files with other content, and files that share the head
and tail blocks with a group but differ in the middle. Hard links to some
copies are added (one inode: not a duplicate of itself).

With --small-files N it adds the shape where duplicate finders spend their
time on syscalls rather than bytes: N small files of random content (sizes
log-normal around 1.5 KiB, 1 B to 64 KiB, like source files, git objects
and node_modules), so that almost every one shares its size with others
yet few are equal; --small-groups of them get one or two copies. A home
folder looks like this; every same-size file has to be read.

Same seed, same tree. Prints a summary: groups, files, bytes, and the
expected reclaimable bytes (size x (copies - 1), summed).
"""

import argparse
import math
import os
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--groups", type=int, default=3000)
    ap.add_argument("--big-groups", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--small-files", type=int, default=0)
    ap.add_argument("--small-groups", type=int, default=4000)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    folders = [os.path.join(a.out, f"set{i // 20:02d}", f"folder{i:03d}") for i in range(300)]
    for f in folders:
        os.makedirs(f, exist_ok=True)
    files = 0
    total = 0
    reclaim = 0
    links = 0

    def put(path, data):
        nonlocal files, total
        with open(path, "wb") as fh:
            fh.write(data)
        files += 1
        total += len(data)

    def size_small():
        return int(math.exp(rng.uniform(math.log(1024), math.log(1 << 20))))

    plan = [size_small() for _ in range(a.groups)]
    plan += [rng.randint(2 << 20, 8 << 20) for _ in range(a.big_groups)]
    for g, size in enumerate(plan):
        data = rng.randbytes(size)
        copies = rng.randint(2, 5)
        reclaim += size * (copies - 1)
        for c in range(copies):
            path = os.path.join(rng.choice(folders), f"g{g:05d}-copy{c}.bin")
            put(path, data)
            if c == 0 and g % 50 == 0:
                os.link(path, path + ".hardlink")
                links += 1
        # Near-misses: same size, other content; same head and tail, other middle.
        if g % 7 == 0:
            put(os.path.join(rng.choice(folders), f"g{g:05d}-stranger.bin"), rng.randbytes(size))
        if g % 11 == 0 and size > 3 * 65536:
            mid = bytearray(data)
            mid[size // 2] ^= 0xFF
            put(os.path.join(rng.choice(folders), f"g{g:05d}-middle.bin"), bytes(mid))
    small_groups = 0
    if a.small_files:
        # 30 files a folder, 40 folders a set: like a source tree.
        sfolders = [
            os.path.join(a.out, "small", f"set{i // 40:03d}", f"dir{i:05d}")
            for i in range((a.small_files + 29) // 30)
        ]
        for f in sfolders:
            os.makedirs(f, exist_ok=True)
        copied = set(rng.sample(range(a.small_files), min(a.small_groups, a.small_files)))
        for i in range(a.small_files):
            size = max(1, min(65536, int(rng.lognormvariate(math.log(1500), 1.0))))
            data = rng.randbytes(size)
            put(os.path.join(sfolders[i // 30], f"f{i:07d}.dat"), data)
            if i in copied:
                small_groups += 1
                extra = rng.randint(1, 2)
                reclaim += size * extra
                for c in range(extra):
                    put(os.path.join(rng.choice(sfolders), f"f{i:07d}-copy{c}.dat"), data)
    print(
        f"groups {len(plan) + small_groups}, files {files}, hard links {links}, "
        f"bytes {total}, reclaimable {reclaim}"
    )


if __name__ == "__main__":
    main()
