#!/usr/bin/env python3
"""Writes documents with the libraries their users' tools are built on, for
the e2e tests of reading what files say (tests/tests/e2e/read_text.rs).

    make_documents.py < SPEC.json

SPEC is a list of {"path": ..., "paragraphs": [...]}; the format follows the
extension: .docx (python-docx), .odt (odfpy), .pdf (reportlab, one line per
paragraph, Helvetica). Installed by tests/setup.sh.
"""

import json
import os
import sys


def docx(path, paragraphs):
    import docx as python_docx

    d = python_docx.Document()
    for p in paragraphs:
        d.add_paragraph(p)
    d.save(path)


def odt(path, paragraphs):
    from odf.opendocument import OpenDocumentText
    from odf.text import P

    t = OpenDocumentText()
    for p in paragraphs:
        t.text.addElement(P(text=p))
    t.save(path)


def pdf(path, paragraphs):
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(path)
    y = 760
    for p in paragraphs:
        c.drawString(72, y, p)
        y -= 20
    c.save()


def main():
    for doc in json.load(sys.stdin):
        path = doc["path"]
        os.makedirs(os.path.dirname(path), exist_ok=True)
        ext = os.path.splitext(path)[1].lower()
        {".docx": docx, ".odt": odt, ".pdf": pdf}[ext](path, doc["paragraphs"])


if __name__ == "__main__":
    main()
