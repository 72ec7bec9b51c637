#!/usr/bin/env python3
"""Writes N small text files under DIR in a fixed layout: directories d0000, d0001, ... of
1,000 files each (f000.txt ...), each file 100-200 bytes of log-like text that varies by file.
Deterministic: the same N gives the same tree. usage: make-many-files.py DIR N [--empty]"""
import os
import sys

root, n = sys.argv[1], int(sys.argv[2])
empty = "--empty" in sys.argv[3:]
per_dir = 1000
for i in range(n):
    d, f = divmod(i, per_dir)
    sub = os.path.join(root, "d%04d" % d)
    if f == 0:
        os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, "f%03d.txt" % f), "w") as out:
        if not empty:
            out.write("%08d host-%03d GET /api/v1/items/%d status=%d bytes=%d\n"
                      % (i, i % 97, i * 7919 % 100000, 200 + (i % 5) * 100, i * 31 % 65536)
                      * (1 + i % 3))
