#!/usr/bin/env python3
"""Trees of one shape each, to find what in a tree's shape costs the indexer.

    benches/mkshape.py SHAPE --entries N --out DIR [--seed 1]

Shapes (each about N entries; empty files, so creating them is quick):
  node_modules  a JavaScript project's dependencies: packages nested 2-6
                deep under node_modules folders, 5-12 entries per folder
                (lib/, dist/, package.json, index.js, README.md, LICENSE)
  git           .git folders: objects/ fanned out into 256 two-hex folders of
                a few 38-hex files each, refs, logs, hooks; a work tree beside
  photos        a photo and music library: year/month/event folders of
                200-400 IMG_/DSC_ files, Artist/Album/NN Title.flac
  flat          one Downloads folder holding every entry (a few subfolders)
  deep          long chains: folders 20-40 levels deep, one or two files each
  longnames     names of 120-250 bytes, many of them unicode (Greek, CJK,
                accents), 3-4 levels

Prints: entries folders max_depth mean_name_bytes
"""

import argparse
import os
import random

SYL = ["lo", "da", "sh", "re", "act", "core", "util", "js", "type", "parse", "map",
       "is", "get", "set", "node", "web", "pack", "babel", "es", "lint", "ts", "x"]
UNI = ["Übersicht", "Straße", "résumé", "Ελλάδα", "東京", "日本語", "Москва", "façade",
       "Smörgåsbord", "naïve", "Zürich", "Łódź", "crème brûlée", "São Paulo"]


def word(r, n=2):
    return "".join(r.choice(SYL) for _ in range(r.randint(1, n)))


class Maker:
    def __init__(self, out, limit):
        self.out, self.limit, self.n, self.dirs, self.depth, self.name_bytes = out, limit, 0, 0, 0, 0

    def full(self):
        return self.n >= self.limit

    def _count(self, path, rel_depth):
        self.n += 1
        self.name_bytes += len(os.path.basename(path).encode())
        self.depth = max(self.depth, rel_depth)

    def dir(self, path):
        if self.full() or os.path.isdir(path):
            return not self.full() and os.path.isdir(path)
        os.mkdir(path)
        self.dirs += 1
        self._count(path, path[len(self.out):].count("/"))
        return True

    def file(self, path):
        if self.full() or os.path.exists(path):
            return
        open(path, "wb").close()
        self._count(path, path[len(self.out):].count("/"))


def node_modules(m, r):
    def package(base, depth):
        name = word(r) + ("-" + word(r) if r.random() < 0.5 else "")
        p = os.path.join(base, name)
        if not m.dir(p):
            return
        for f in ["package.json", "index.js", "README.md", "LICENSE"][: r.randint(2, 4)]:
            m.file(os.path.join(p, f))
        for sub in ["lib", "dist"][: r.randint(1, 2)]:
            if m.dir(os.path.join(p, sub)):
                for i in range(r.randint(3, 8)):
                    m.file(os.path.join(p, sub, f"{word(r)}{i}.{r.choice(['js', 'mjs', 'd.ts', 'map'])}"))
        if depth < 6 and r.random() < 0.35:
            nm = os.path.join(p, "node_modules")
            if m.dir(nm):
                for _ in range(r.randint(1, 4)):
                    package(nm, depth + 1)
    proj = 0
    while not m.full():
        root = os.path.join(m.out, f"project{proj}")
        proj += 1
        m.dir(root)
        m.file(os.path.join(root, "package.json"))
        nm = os.path.join(root, "node_modules")
        m.dir(nm)
        for _ in range(400):
            package(nm, 1)


def git(m, r):
    repo = 0
    while not m.full():
        root = os.path.join(m.out, f"repo{repo}")
        repo += 1
        m.dir(root)
        g = os.path.join(root, ".git")
        m.dir(g)
        for d in ["hooks", "info", "refs", "refs/heads", "refs/tags", "logs", "logs/refs"]:
            m.dir(os.path.join(g, d))
        for f in ["HEAD", "config", "description", "index", "packed-refs"]:
            m.file(os.path.join(g, f))
        objects = os.path.join(g, "objects")
        m.dir(objects)
        for i in range(256):
            d = os.path.join(objects, f"{i:02x}")
            if m.dir(d):
                for _ in range(r.randint(1, 8)):
                    m.file(os.path.join(d, "%038x" % r.getrandbits(152)))
        for i in range(r.randint(20, 200)):
            m.file(os.path.join(root, f"{word(r)}_{i}.{r.choice(['c', 'h', 'rs', 'py', 'md'])}"))


def photos(m, r):
    lib = os.path.join(m.out, "Pictures")
    music = os.path.join(m.out, "Music")
    m.dir(lib)
    m.dir(music)
    n = 0
    year = 2005
    while not m.full():
        if r.random() < 0.7:
            y = os.path.join(lib, str(year))
            m.dir(y)
            for month in range(1, 13):
                d = os.path.join(y, f"{year}-{month:02d}")
                m.dir(d)
                ev = os.path.join(d, r.choice(["Holiday", "Birthday", "Beach", "Family", "Trip"]) + f" {month}")
                m.dir(ev)
                for _ in range(r.randint(200, 400)):
                    n += 1
                    m.file(os.path.join(ev, f"{r.choice(['IMG_', 'DSC_', 'PXL_'])}{n:05d}.{r.choice(['JPG', 'jpg', 'HEIC', 'CR2'])}"))
            year += 1
        else:
            a = os.path.join(music, f"Artist {word(r)} {n}")
            m.dir(a)
            for al in range(r.randint(1, 6)):
                d = os.path.join(a, f"Album {al} ({r.randint(1970, 2024)})")
                m.dir(d)
                for t in range(r.randint(8, 16)):
                    n += 1
                    m.file(os.path.join(d, f"{t + 1:02d} {word(r, 3)} {word(r, 3)}.flac"))


def flat(m, r):
    d = os.path.join(m.out, "Downloads")
    m.dir(d)
    for s in ["old", "installers", "papers"]:
        m.dir(os.path.join(d, s))
    i = 0
    while not m.full():
        i += 1
        m.file(os.path.join(d, f"{word(r, 3)}-{i}.{r.choice(['pdf', 'zip', 'tar.gz', 'deb', 'jpg', 'png', 'iso', 'txt'])}"))


def deep(m, r):
    chain = 0
    while not m.full():
        p = os.path.join(m.out, f"chain{chain}")
        chain += 1
        for level in range(r.randint(20, 40)):
            if not m.dir(p):
                break
            for f in range(r.randint(1, 2)):
                m.file(os.path.join(p, f"{word(r)}{level}_{f}.txt"))
            p = os.path.join(p, f"{word(r)}{level}")


def longnames(m, r):
    def name(i):
        parts = []
        while len(" ".join(parts).encode()) < r.randint(120, 240):
            parts.append(r.choice(UNI) if r.random() < 0.4 else word(r, 4))
        s = " ".join(parts)
        while len(s.encode()) > 240:
            s = s[:-1]
        return f"{s} {i}"
    top = 0
    while not m.full():
        a = os.path.join(m.out, name(top)[:200])
        top += 1
        m.dir(a)
        for j in range(20):
            b = os.path.join(a, name(j)[:200])
            if not m.dir(b):
                break
            for k in range(r.randint(20, 60)):
                m.file(os.path.join(b, name(k)))


SHAPES = {"node_modules": node_modules, "git": git, "photos": photos, "flat": flat, "deep": deep,
          "longnames": longnames}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shape", choices=sorted(SHAPES))
    ap.add_argument("--entries", type=int, default=200000)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    m = Maker(os.path.abspath(a.out), a.entries)
    SHAPES[a.shape](m, random.Random(a.seed))
    print(m.n, m.dirs, m.depth, round(m.name_bytes / max(m.n, 1), 1))


if __name__ == "__main__":
    main()
