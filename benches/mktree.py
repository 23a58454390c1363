#!/usr/bin/env python3
"""Make a reproducible synthetic tree that looks like a home directory.

    benches/mktree.py --entries 1000000 --out /tmp/fsbench/t [--seed 1]

Entries are folders, files and a few symlinks below OUT (OUT itself is not
counted). Same seed and entry count give the same tree, byte for byte. No
network. Nested folders up to --max-depth levels, realistic names (words,
dates, years, versions, camera names, git objects, some uppercase, some
unicode such as "Café" and "Ärger", some spaces), and mostly empty or tiny
files so that 1M entries take well under a minute to create.

Prints the entry count created (and a breakdown on stderr).
"""

import argparse
import os
import random
import sys
import time

WORDS = """
report tax taxes invoice receipt budget notes draft final backup photo photos holiday
summer winter spring autumn family project projects meeting minutes letter contract
insurance bank statement salary payslip travel trip beach mountain birthday wedding
party recipe recipes cooking garden house rent lease car repair manual guide readme
todo ideas plan plans design sketch logo presentation slides thesis paper papers
chapter book books music song album playlist video movie clip interview podcast
course lecture homework exam school university work office client server config
settings data dataset export import archive old new copy scan scans document
documents image images screenshot wallpaper avatar profile resume application
license certificate passport visa ticket booking hotel flight train map maps
weekly monthly annual quarterly review summary analysis results test tests demo
sample example template invoice2 order orders shop shopping list inventory
health doctor dentist vaccination sport running cycling football training
kids school baby dog cat pets friends party newyear christmas easter
alpha beta gamma delta release build debug cache temp tmp log logs
""".split()

# Words that make the tree international: accents, umlauts, other scripts.
UNICODE_WORDS = [
    "Café", "café", "Ärger", "ärger", "Müller", "Übersicht", "Straße", "naïve",
    "résumé", "Résumé", "Zürich", "São Paulo", "Øresund", "Łódź", "Ελλάδα",
    "日本", "東京", "Москва", "façade", "crème brûlée", "Smörgåsbord", "Köln",
]

# A handful of names so rare that a query for them selects a few entries.
RARE_WORDS = ["zanzibar", "quokka", "xylophone"]

FIRST_NAMES = ["anna", "ben", "clara", "david", "eva", "felix", "greta", "hugo", "ida", "jonas", "lena", "max"]
ARTISTS = ["The Beatles", "Daft Punk", "Björk", "Radiohead", "Miles Davis", "Nina Simone", "Kraftwerk",
           "Sigur Rós", "Portishead", "Air", "Massive Attack", "Beyoncé", "Motörhead", "Yann Tiersen"]
YEARS = [str(y) for y in range(2005, 2027)]
DOC_EXT = ["pdf"] * 10 + ["txt"] * 5 + ["md"] * 4 + ["docx"] * 4 + ["xlsx"] * 3 + ["odt", "csv", "pptx", "rtf", "PDF", "TXT"]
CODE_EXT = ["rs"] * 8 + ["py"] * 5 + ["md"] * 2 + ["toml", "json", "js", "ts", "c", "h", "go", "sh", "txt", "yml", "lock"]
DL_EXT = ["pdf", "zip", "tar.gz", "tar.gz", "deb", "exe", "dmg", "iso", "jpg", "png", "mp4", "txt", "tar.xz", "AppImage"]
CACHE_EXT = ["", "", "tmp", "bin", "json", "sqlite", "png", "cache", "idx"]

BUF = (b"fsindex bench file. The quick brown fox jumps over the lazy dog. 0123456789\n" * 8)


class Namer:
    def __init__(self, rng):
        self.r = rng

    def word(self):
        r = self.r.random()
        if r < 0.00015:
            return self.r.choice(RARE_WORDS)
        if r < 0.03:
            return self.r.choice(UNICODE_WORDS)
        return self.r.choice(WORDS)

    def styled(self, words, sep=None):
        r = self.r.random()
        if sep is None:
            sep = self.r.choice(["_", "-", " ", "", "_", "-", ".", " "])
        if r < 0.25:
            words = [w.capitalize() for w in words]
        elif r < 0.30:
            words = [w.upper() for w in words]
        return sep.join(words)

    def date(self):
        y = self.r.choice(YEARS)
        m = self.r.randint(1, 12)
        d = self.r.randint(1, 28)
        return f"{y}-{m:02d}-{d:02d}"

    def hexs(self, n):
        return "%0*x" % (n, self.r.getrandbits(4 * n))

    # ---- file names per kind -------------------------------------------------

    def doc_file(self):
        r = self.r.random()
        ext = self.r.choice(DOC_EXT)
        if r < 0.30:
            base = self.styled([self.word(), self.word()])
        elif r < 0.50:
            base = self.styled([self.word(), self.r.choice(YEARS)])
        elif r < 0.62:
            base = self.styled([self.word(), self.date()], sep=self.r.choice(["_", "-", " "]))
        elif r < 0.72:
            base = self.styled([self.word(), self.word(), self.word()])
        elif r < 0.80:
            base = f"{self.styled([self.word()])} ({self.r.randint(1, 9)})"
        elif r < 0.88:
            base = f"{self.r.choice(FIRST_NAMES)}_{self.word()}_v{self.r.randint(1, 12)}"
        else:
            base = self.styled([self.word()])
        return f"{base}.{ext}"

    def photo_file(self):
        r = self.r.random()
        if r < 0.45:
            return f"IMG_{self.r.randint(0, 9999):04d}.{self.r.choice(['jpg', 'JPG', 'HEIC', 'jpeg'])}"
        if r < 0.65:
            return f"DSC{self.r.randint(0, 99999):05d}.{self.r.choice(['jpg', 'JPG', 'ARW', 'NEF'])}"
        if r < 0.80:
            return f"{self.date()} {self.r.randint(0, 23):02d}.{self.r.randint(0, 59):02d}.{self.r.randint(0, 59):02d}.jpg"
        if r < 0.88:
            return f"Screenshot {self.date()} at {self.r.randint(0, 23)}.{self.r.randint(0, 59):02d}.{self.r.randint(0, 59):02d}.png"
        if r < 0.94:
            return f"VID_{self.date().replace('-', '')}_{self.r.randint(0, 235959):06d}.mp4"
        return f"{self.styled([self.word(), self.word()])}.{self.r.choice(['jpg', 'png', 'gif', 'webp'])}"

    def code_file(self):
        r = self.r.random()
        if r < 0.15:
            return self.r.choice(["main.rs", "lib.rs", "mod.rs", "README.md", "Cargo.toml", "Makefile",
                                  ".gitignore", "LICENSE", "setup.py", "__init__.py", "package.json",
                                  "index.js", "build.rs", "CHANGELOG.md", "Cargo.lock"])
        ext = self.r.choice(CODE_EXT)
        if r < 0.75:
            return f"{self.word()}_{self.word()}.{ext}".replace(" ", "_")
        return f"{self.word()}.{ext}".replace(" ", "_")

    def music_file(self):
        n = self.r.randint(1, 18)
        ext = self.r.choice(["mp3", "mp3", "flac", "m4a", "ogg"])
        return f"{n:02d} - {self.styled([self.word(), self.word()], sep=' ')}.{ext}"

    def cache_file(self):
        ext = self.r.choice(CACHE_EXT)
        base = self.hexs(self.r.choice([8, 16, 32, 40]))
        return f"{base}.{ext}" if ext else base

    def download_file(self):
        r = self.r.random()
        ext = self.r.choice(DL_EXT)
        if r < 0.4:
            return f"{self.word()}-{self.r.randint(0, 9)}.{self.r.randint(0, 30)}.{self.r.randint(0, 9)}.{ext}"
        if r < 0.7:
            return f"{self.styled([self.word(), self.word()])}.{ext}"
        return f"{self.styled([self.word(), self.r.choice(YEARS)])}.{ext}"

    def config_file(self):
        return self.r.choice([
            f"{self.word()}.conf", f"{self.word()}rc", "settings.json", "config.toml", "config.yml",
            f"{self.word()}.ini", "state.json", f"{self.word()}.xml", "prefs.js", f"{self.hexs(8)}.lock",
        ]).replace(" ", "_")

    FILE = {
        "docs": doc_file, "photos": photo_file, "code": code_file, "music": music_file,
        "cache": cache_file, "downloads": download_file, "config": config_file,
    }

    # ---- folder names per kind -----------------------------------------------

    def dir_name(self, kind):
        r = self.r.random()
        if kind == "photos":
            if r < 0.35:
                return self.r.choice(YEARS)
            if r < 0.7:
                return f"{self.date()[:7]} {self.styled([self.word()], sep=' ')}"
            return self.styled([self.word(), self.word()], sep=" ")
        if kind == "code":
            if r < 0.35:
                return self.r.choice(["src", "tests", "docs", "examples", "benches", "scripts", "assets",
                                      "lib", "bin", "util", "utils", "api", "core", "cli", "vendor"])
            return self.styled([self.word(), self.word()], sep=self.r.choice(["-", "_"])).replace(" ", "-")
        if kind == "music":
            return self.r.choice(ARTISTS) if r < 0.5 else f"{self.styled([self.word(), self.word()], sep=' ')} ({self.r.choice(YEARS)})"
        if kind == "cache":
            return self.hexs(2) if r < 0.6 else self.styled([self.word()], sep="")
        if kind == "config":
            return self.word().replace(" ", "_") if r < 0.8 else f"{self.word()}-{self.hexs(6)}".replace(" ", "_")
        # docs, downloads
        if r < 0.25:
            return self.r.choice(YEARS)
        if r < 0.55:
            return self.styled([self.word()], sep=" ")
        return self.styled([self.word(), self.word()], sep=self.r.choice([" ", "_", "-"]))


# Top level of the home directory: (name, kind, weight of the entry budget).
TOP = [
    ("Documents", "docs", 14), ("Downloads", "downloads", 6), ("Pictures", "photos", 16),
    ("Music", "music", 6), ("Videos", "photos", 2), ("Desktop", "docs", 2),
    ("Projects", "code", 16), ("src", "code", 8), (".cache", "cache", 12), (".config", "config", 4),
    (".local/share", "config", 5), (".mozilla", "cache", 3), ("Dropbox", "docs", 4),
    ("Google Drive", "docs", 2),
]


class Tree:
    def __init__(self, out, seed, max_depth):
        self.out = out
        self.r = random.Random(seed)
        self.n = Namer(self.r)
        self.max_depth = max_depth
        self.files = self.dirs = self.links = 0
        self.deepest = 0
        self.bytes = 0

    def mkdir(self, path):
        os.mkdir(path)
        self.dirs += 1

    def mkfile(self, path):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        r = self.r.random()
        if r < 0.35:
            n = self.r.randint(1, 64) if r < 0.3 else self.r.randint(64, len(BUF))
            os.write(fd, BUF[:n])
            self.bytes += n
        os.close(fd)
        self.files += 1

    def unique(self, used, name):
        if name in used or name in (".", "..") or not name:
            base, dot, ext = name.partition(".")
            i = 2
            while True:
                cand = f"{base} {i}{dot}{ext}" if base else f"x{i}{dot}{ext}"
                if cand not in used:
                    name = cand
                    break
                i += 1
        used.add(name)
        return name

    def git_dir(self, path, budget, depth):
        """A .git folder: objects/xx/<38 hex> plus a few fixed files; returns entries made."""
        self.mkdir(path)
        made = 1
        for f in ["HEAD", "config", "description", "index", "packed-refs"]:
            if made >= budget:
                return made
            self.mkfile(os.path.join(path, f))
            made += 1
        if made + 2 > budget:
            return made
        obj = os.path.join(path, "objects")
        self.mkdir(obj)
        made += 1
        fanout = ["%02x" % i for i in range(256)]
        self.r.shuffle(fanout)
        sp = None
        while made < budget:
            if fanout:
                sp = os.path.join(obj, fanout.pop())
                self.mkdir(sp)
                made += 1
                k = min(budget - made, self.r.randint(1, 12))
            else:  # all 256 fan-out folders exist: fill the last one
                k = budget - made
            inner = set()
            for _ in range(k):
                self.mkfile(os.path.join(sp, self.unique(inner, self.n.hexs(38))))
                made += 1
        self.deepest = max(self.deepest, depth + 2)
        return made

    def fill(self, path, kind, depth, budget):
        """Fill the existing folder `path` with exactly `budget` entries below it."""
        self.deepest = max(self.deepest, depth)
        r = self.r
        used = set()
        if budget <= 0:
            return
        # Files directly in this folder: heavy-tailed, a few folders hold thousands.
        if depth >= self.max_depth:
            n_files = budget
        else:
            n_files = min(budget, int(r.lognormvariate(2.0, 1.1)))
            if kind == "photos" and r.random() < 0.15:
                n_files = min(budget, int(r.lognormvariate(5.0, 1.0)))
        rest = budget - n_files
        if rest > 0 and depth < self.max_depth:
            if rest < 40:
                n_dirs = min(rest, r.randint(0, 3))
            else:
                n_dirs = min(rest, r.randint(2, 10))
            if n_dirs == 0:
                n_files += rest
                rest = 0
        else:
            n_dirs = 0
            n_files += rest
            rest = 0

        file_name = Namer.FILE[kind]
        for _ in range(n_files):
            name = self.unique(used, file_name(self.n))
            p = os.path.join(path, name)
            if r.random() < 0.002 and self.files > 0:
                os.symlink("../" + name, p)
                self.links += 1
            else:
                self.mkfile(p)

        if n_dirs == 0:
            return
        # Split what is left among the subfolders (each costs one entry itself).
        spare = rest - n_dirs
        weights = [r.paretovariate(1.3) for _ in range(n_dirs)]
        total = sum(weights)
        shares = [int(spare * w / total) for w in weights]
        shares[0] += spare - sum(shares)
        for share in shares:
            sub_kind = kind
            # A code project gets a .git folder and a build folder now and then.
            if kind == "code" and depth >= 2 and share > 30 and r.random() < 0.25:
                name = self.unique(used, ".git")
                made = self.git_dir(os.path.join(path, name), share + 1, depth + 1)
                if made < share + 1:  # put what the .git did not use into files here
                    for _ in range(share + 1 - made):
                        self.mkfile(os.path.join(path, self.unique(used, self.n.code_file())))
                continue
            if kind == "code" and share > 50 and r.random() < 0.08:
                name = self.unique(used, r.choice(["target", "node_modules", "build", "__pycache__"]))
                sub_kind = "cache"
            elif kind in ("docs", "downloads") and r.random() < 0.05:
                sub_kind = r.choice(["photos", "code", "docs"])
                name = self.unique(used, self.n.dir_name(sub_kind))
            else:
                name = self.unique(used, self.n.dir_name(kind))
            sp = os.path.join(path, name)
            self.mkdir(sp)
            self.fill(sp, sub_kind, depth + 1, share)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entries", type=int, default=1_000_000, help="entries below OUT (default 1000000)")
    ap.add_argument("--out", default="/tmp/fsbench/t", help="folder to create (must not exist or be empty)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-depth", type=int, default=10)
    a = ap.parse_args()

    if os.path.exists(a.out) and os.listdir(a.out):
        sys.exit(f"mktree: {a.out} exists and is not empty")
    os.makedirs(a.out, exist_ok=True)
    t0 = time.monotonic()
    tree = Tree(a.out, a.seed, a.max_depth)
    total_w = sum(w for _, _, w in TOP)
    left = a.entries
    for i, (name, kind, w) in enumerate(TOP):
        budget = left if i == len(TOP) - 1 else min(left, round(a.entries * w / total_w))
        if budget <= 0:
            continue
        parts = name.split("/")
        p = a.out
        for part in parts:
            p = os.path.join(p, part)
            if not os.path.isdir(p):
                tree.mkdir(p)
                budget -= 1
                left -= 1
        tree.fill(p, kind, len(parts), budget)
        left -= max(budget, 0)
    made = tree.files + tree.dirs + tree.links
    dt = time.monotonic() - t0
    print(f"mktree: {made} entries in {a.out}: {tree.dirs} folders, {tree.files} files, {tree.links} symlinks, "
          f"depth {tree.deepest}, {tree.bytes} bytes of content, {dt:.1f} s ({made / max(dt, 1e-9):,.0f}/s)",
          file=sys.stderr)
    print(made)


if __name__ == "__main__":
    main()
