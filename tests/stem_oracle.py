#!/usr/bin/env python3
"""The oracle of the content stemming test (tests/tests/e2e/stems.rs): which
documents a `content:` query should find, from the text the test wrote and
the language it wrote it in, stemmed by PyPI's snowballstemmer (the
reference Snowball implementation's Python output), not by fsindex.

    stem_oracle.py < SPEC.json

SPEC is {"docs": [{"name", "lang", "text"}], "queries": [...]}; the answer
is {"files": {query: [name, ...]}, "words": {query: {name: [word, ...]}}},
the words as written that make each document match (what a snippet may
mark). What a query means (GUIDE.md, content search):

- `word`: a document holding the word (case and accents folded), or a word
  whose Snowball stem in the document's language is the query word's stem
  in that language (stems compared with accents folded);
- `=word`, or `"several words"`: exactly these words, in this order.

Words are runs of letters and digits; a word of more than 64 bytes or with
no letter is matched only exactly.
"""

import json
import re
import sys
import unicodedata

import snowballstemmer

NAMES = {
    "en": "english",
    "de": "german",
    "fr": "french",
    "es": "spanish",
    "it": "italian",
    "pt": "portuguese",
    "nl": "dutch",
}


def fold(s):
    s = unicodedata.normalize("NFD", s)
    return "".join(c for c in s if not unicodedata.combining(c)).lower()


def words(text):
    return re.findall(r"[^\W_]+", text)


def exact(text, phrase):
    want = [fold(w) for w in words(phrase)]
    have = [fold(w) for w in words(text)]
    n = len(want)
    return n > 0 and any(have[i : i + n] == want for i in range(len(have) - n + 1))


def stemmable(w):
    return len(w.encode()) <= 64 and any(c.isalpha() for c in w)


def matching_words(doc, query):
    """The words of `doc` (as written) that make it match `query`; empty
    when it does not."""
    text = doc["text"]
    if query.startswith("=") or query.startswith('"'):
        phrase = query.strip('="')
        if not exact(text, phrase):
            return []
        want = {fold(w) for w in words(phrase)}
        return [w for w in words(text) if fold(w) in want]
    q = words(query)
    if len(q) != 1:
        return []
    same = [w for w in words(text) if fold(w) == fold(q[0])]
    if not stemmable(q[0]):
        return same
    stemmer = snowballstemmer.stemmer(NAMES[doc["lang"]])
    stem = lambda w: fold(stemmer.stemWord(w.lower()))
    want = stem(q[0])
    return same + [w for w in words(text) if stemmable(w) and stem(w) == want]


def main():
    spec = json.load(sys.stdin)
    files, found = {}, {}
    for q in spec["queries"]:
        hits = {d["name"]: matching_words(d, q) for d in spec["docs"]}
        found[q] = {name: sorted(set(ws)) for name, ws in hits.items() if ws}
        files[q] = sorted(found[q])
    json.dump({"files": files, "words": found}, sys.stdout)


if __name__ == "__main__":
    main()
