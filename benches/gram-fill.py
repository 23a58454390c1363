#!/usr/bin/env python3
"""How full the search snapshot's trigram filter is, and how many of its
blocks a term passes, for several block sizes and bit counts.

Same hash as `gram_bit` in daemon/src/queries/search.rs; names folded with
str.lower() and taken in `os.walk` order (close to the scan's id order:
each folder's children together). A block passes a term when its set holds
every one of the term's trigrams; the scan then searches that block's names.

    python3 benches/gram-fill.py /tmp/fsbench/t      # the 1M mktree.py tree
"""
import os
import sys

TERMS = [b"quokka", b"zanzibar", b"qqxjnomatch", "café".encode(), b"report"]
SHAPES = [(64, 10), (64, 11), (32, 10), (128, 12), (64, 12)]  # (names per block, log2 bits)


def gram_bit(a, b, c, log2):
    x = a | b << 8 | c << 16
    return ((x * 0x9E3779B1) & 0xFFFFFFFF) >> (32 - log2)


def grams(name, log2):
    m = 0
    for i in range(len(name) - 2):
        if b"/" not in name[i:i + 3]:
            m |= 1 << gram_bit(name[i], name[i + 1], name[i + 2], log2)
    return m


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "/tmp/fsbench/t"
    names = [os.fsencode(x.lower()) for _, ds, fs in os.walk(root) for x in ds + fs]
    print(f"{len(names):,} names under {root}")
    print("| names per block | bits | bytes per entry | bits set | " + " | ".join(t.decode() for t in TERMS) + " |")
    print("|---" * (4 + len(TERMS)) + "|")
    for block, log2 in SHAPES:
        masks = []
        for k in range(0, len(names), block):
            m = 0
            for n in names[k:k + block]:
                m |= grams(n, log2)
            masks.append(m)
        fill = sum(bin(m).count("1") for m in masks) / len(masks) / (1 << log2)
        passed = []
        for t in TERMS:
            q = grams(t, log2)
            passed.append(sum(1 for m in masks if m & q == q) / len(masks))
        print(f"| {block} | {1 << log2} | {(1 << log2) / 8 / block:.1f} | {fill:.0%} | "
              + " | ".join(f"{p:.2%}" for p in passed) + " |")


if __name__ == "__main__":
    main()
