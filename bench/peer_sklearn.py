"""peer_sklearn.py - scikit-learn's SGDClassifier as a peer of boar.

usage: python3 peer_sklearn.py TRAIN TEST --iters 1,2,5,10 [--repeats R]
                               [--alphas 1e-3,1e-4,1e-5,1e-6,1e-7] [--seed S]

Runs under whatever interpreter has scikit-learn (Debian's python3-sklearn
lives in /usr/bin/python3); bench/experiments/peers.py finds one. Logistic
regression (loss='log_loss', L2 penalty, sklearn's default 'optimal' step
schedule). Its best setting: alpha (the L2 weight) and plain or averaged
SGD (average=True) are chosen on the training file only: fit on 80% of it
(5 passes), score log loss on the other 20%, keep the best. Then, for every pass count in --iters and every
repeat, fits on the whole training file with tol=None (exactly that many
passes) and scores the test file.

Output: one JSON object per point on stdout: iters, repeat, alpha, average,
load_s (reading both files with load_svmlight_files, timed once),
fit_s, test_accuracy, test_loss. A point's wall time is load_s + fit_s,
the same span as boar's and LIBLINEAR's end-to-end runs (read + train).
"""
import argparse
import json
import sys
import time
import warnings


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train")
    ap.add_argument("test")
    ap.add_argument("--iters", default="1,2,5,10")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--alphas", default="1e-3,1e-4,1e-5,1e-6,1e-7")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    import numpy as np
    from sklearn.datasets import load_svmlight_files
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import SGDClassifier
    from sklearn.metrics import accuracy_score, log_loss

    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    t0 = time.perf_counter()
    Xtr, ytr, Xte, yte = load_svmlight_files([a.train, a.test], dtype=np.float32)
    load_s = time.perf_counter() - t0
    ytr = np.where(ytr > 0, 1, -1)
    yte = np.where(yte > 0, 1, -1)

    def fit(X, y, setting, iters, seed):
        alpha, avg = setting
        clf = SGDClassifier(loss="log_loss", penalty="l2", alpha=alpha, max_iter=iters,
                            tol=None, random_state=seed, average=avg)
        clf.fit(X, y)
        return clf

    def score(clf, X, y):
        p = clf.predict_proba(X)
        return accuracy_score(y, clf.classes_[p.argmax(axis=1)]), log_loss(y, p, labels=clf.classes_)

    settings = [(float(x), avg) for x in a.alphas.split(",") for avg in (False, True)]
    best = settings[0]
    if len(settings) > 1:
        rng = np.random.RandomState(a.seed)
        perm = rng.permutation(Xtr.shape[0])
        cut = int(0.8 * len(perm))
        fit_i, hold_i = perm[:cut], perm[cut:]
        best_loss = None
        for setting in settings:
            clf = fit(Xtr[fit_i], ytr[fit_i], setting, 5, a.seed)
            _, loss = score(clf, Xtr[hold_i], ytr[hold_i])
            print(json.dumps({"tune_alpha": setting[0], "average": setting[1],
                              "holdout_loss": loss}), file=sys.stderr)
            if best_loss is None or loss < best_loss:
                best, best_loss = setting, loss
    for iters in [int(x) for x in a.iters.split(",")]:
        for rep in range(a.repeats):
            t0 = time.perf_counter()
            clf = fit(Xtr, ytr, best, iters, a.seed + rep)
            fit_s = time.perf_counter() - t0
            acc, loss = score(clf, Xte, yte)
            print(json.dumps({"iters": iters, "repeat": rep, "alpha": best[0], "average": best[1], "load_s": load_s,
                              "fit_s": fit_s, "test_accuracy": acc, "test_loss": loss}),
                  flush=True)


if __name__ == "__main__":
    main()
