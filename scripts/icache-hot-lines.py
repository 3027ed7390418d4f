#!/usr/bin/env python3
"""The hot instruction footprint of a run, from a callgrind profile.

Counts the 64-byte code lines of tcplab's own binary that hold an
instruction executed at least THRESHOLD times, and how they fall into the
sets of a 32 KB, 8-way first-level instruction cache (cachegrind's I1: 64
sets of 8 lines): a set with more than 8 hot lines thrashes, whatever the
total. Used for docs/PERFORMANCE.md (issue 15):

    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=cg.out \\
        target/release/tcplab bench --json
    scripts/icache-hot-lines.py cg.out [THRESHOLD] [TOP]
"""
import collections
import re
import sys

LINE, SETS, WAYS = 64, 64, 8


def hot_lines(path, threshold):
    """{line address: function} for the lines of hot instructions."""
    counts = collections.Counter()
    func_of = {}
    names = {"ob": {}, "fn": {}}
    ob = fn = None
    addr = 0
    after_call = False

    def name(kind, value):
        m = re.match(r"\((\d+)\)\s*(.*)", value)
        if not m:
            return value
        if m.group(2):
            names[kind][m.group(1)] = m.group(2)
        return names[kind].get(m.group(1), "?")

    with open(path) as f:
        for line in f:
            if line.startswith("ob="):
                ob = name("ob", line[3:].strip())
            elif line.startswith("cob="):
                name("ob", line[4:].strip())
            elif line.startswith("fn="):
                fn = name("fn", line[3:].strip())
            elif line.startswith("cfn="):
                name("fn", line[4:].strip())
            elif line.startswith("calls="):
                after_call = True  # the next cost line is the call's inclusive cost
            elif line[:1] in "0123456789+-*":
                fields = line.split()
                a = fields[0]
                if a.startswith("0x"):
                    addr = int(a, 16)
                elif a[0] in "+-":
                    addr += int(a)
                if after_call:
                    after_call = False
                    continue
                if len(fields) >= 3 and ob and "tcplab" in ob:
                    counts[addr] += int(fields[2])
                    func_of[addr] = fn
    return {a // LINE: func_of[a] for a, n in counts.items() if n >= threshold}


def main():
    path = sys.argv[1]
    threshold = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    lines = hot_lines(path, threshold)
    per_set = collections.Counter(line % SETS for line in lines)
    excess = sum(max(0, c - WAYS) for c in per_set.values())
    print(f"hot lines (>= {threshold} executions): {len(lines)} ({len(lines) * LINE / 1024:.1f} KB)")
    print(f"I1 sets over {WAYS} hot lines: {sum(c > WAYS for c in per_set.values())} of {SETS}, "
          f"{excess} lines over, at most {max(per_set.values(), default=0)} in one set")
    by_fn = collections.Counter(lines.values())
    for f, n in by_fn.most_common(top):
        print(f"{n:5d}  {f}")


if __name__ == "__main__":
    main()
