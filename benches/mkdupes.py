#!/usr/bin/env python3
"""Add reproducible duplicate groups of real (random) content to a tree.

    benches/mkdupes.py --out /tmp/fsbench/d/dupes --groups 3000 [--seed 1]

Makes GROUPS groups of 2-5 byte-identical copies spread over a few hundred
folders, with sizes log-uniform from 1 KiB to 1 MiB and a few groups of
2-8 MiB; and near-misses that a size-only or head-only comparison would get
wrong: same-size files with other content, and files that share the head
and tail blocks with a group but differ in the middle. Hard links to some
copies are added (one inode: not a duplicate of itself).

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
    print(
        f"groups {len(plan)}, files {files}, hard links {links}, "
        f"bytes {total}, reclaimable {reclaim}"
    )


if __name__ == "__main__":
    main()
