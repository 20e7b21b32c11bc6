#!/usr/bin/env python3
"""feature_counts.py - how often each feature occurs in LIBSVM files, for
comparing the two sides of a weak-scaling experiment (bench/net/shaped.sh
WEAK_MODELS=scaled: W x the rows over W x the features should give every
feature the same number of occurrences at the same relative id).

    bench/net/feature_counts.py FILE:FEATURES [FILE:FEATURES ...]

For each file: rows, non-zeros, occurrences per feature (mean; the share
of features never used; quantiles over all FEATURES features), and the
mean count in ten bins of the relative id (id / FEATURES; ids are 1-based
in the file) plus the first four ids, where the power law's head is.
Markdown on stdout.
"""
import array
import sys

QUANTS = (0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999)
BINS = 10


def counts(path, dim):
    c = array.array("I", bytes(4 * dim))
    rows = nnz = 0
    with open(path, "rb") as f:
        for line in f:
            toks = line.split()
            rows += 1
            for t in toks[1:]:
                i = t.find(b":")
                if i > 0:
                    c[int(t[:i]) - 1] += 1
                    nnz += 1
    return c, rows, nnz


def quantile(sorted_c, q):
    return sorted_c[min(len(sorted_c) - 1, int(q * len(sorted_c)))]


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: feature_counts.py FILE:FEATURES [FILE:FEATURES ...]")
    rows_out = []
    for arg in sys.argv[1:]:
        path, dim = arg.rsplit(":", 1)
        dim = int(dim)
        c, rows, nnz = counts(path, dim)
        s = sorted(c)
        bins = []
        for b in range(BINS):
            lo, hi = dim * b // BINS, dim * (b + 1) // BINS
            bins.append(sum(c[lo:hi]) / float(hi - lo))
        rows_out.append((path, rows, nnz, dim, nnz / float(dim),
                         sum(1 for x in c if x == 0) / float(dim),
                         [quantile(s, q) for q in QUANTS], s[-1], list(c[:4]),
                         bins))
    print("| file | rows | features | mean per feature | unused | "
          + " | ".join("q%g" % (100 * q) for q in QUANTS) + " | max | ids 1-4 |")
    print("|---|" + "---:|" * (6 + len(QUANTS)) + "---|")
    for p, rows, nnz, dim, mean, unused, qs, mx, head, _ in rows_out:
        print("| %s | %d | %d | %.2f | %.4f | %s | %d | %s |" % (
            p, rows, dim, mean, unused, " | ".join(str(q) for q in qs), mx,
            " ".join(str(h) for h in head)))
    print("\nMean occurrences per feature by relative id (id / features):\n")
    print("| file | " + " | ".join("%.1f-%.1f" % (b / float(BINS), (b + 1) / float(BINS))
                                  for b in range(BINS)) + " |")
    print("|---|" + "---:|" * BINS)
    for r in rows_out:
        print("| %s | %s |" % (r[0], " | ".join("%.1f" % x for x in r[9])))


if __name__ == "__main__":
    main()
