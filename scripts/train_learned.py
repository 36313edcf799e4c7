"""Trains the learned bot: imitation of a teacher bot's decisions on self-play hands.

    nice -n 19 .venv/bin/python scripts/train_learned.py --hands 20000 --epochs 4

Four copies of the teacher (``quick`` by default) play ``--hands`` hands in-process, on
``--workers`` processes; every step of every decision is recorded as the environment encodes
it (``arena.env.encoding``: the observation vector, the action features of each legal index,
the teacher's index), steps with a single legal index left out. The scorer of
``example_bots/learned/policy.py`` is fitted to the teacher's indices by cross-entropy over
each step's legal indices, with Adam (written here: no framework to install). The data and a
checkpoint (weights, Adam's moments, the epoch) live in ``--work``; a run interrupted
continues from its checkpoint. The weights are exported to ``--out`` (the bot's
``weights.npz``) after each epoch, with the held-out agreement with the teacher printed.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core a process: the machine is shared
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import multiprocessing
import sys
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.env.encoding import (
    N_ACTION_FEATURES,
    OBS_SIZE,
    TICHU_ACTION,
    Decision,
    action_features,
    encode_observation,
    path_of,
)
from arena.rules import CALL_TICHU, Match, Observation, Options, Phase, observe
from example_bots.learned.policy import PARAMETERS
from sdk import Bot

ROOT = Path(__file__).resolve().parents[1]
F32 = npt.NDArray[np.float32]
CHUNK = 100  # hands a worker plays between two reports
#: Action features are stored as small integers: the length (x 14) and rank (x 15) of a shape.
FEATURE_SCALE = np.ones(N_ACTION_FEATURES, dtype=np.float32)
FEATURE_SCALE[122:124] = (14, 15)
Data = tuple[
    npt.NDArray[np.float16], npt.NDArray[np.uint8], npt.NDArray[np.int16], npt.NDArray[np.int16]
]


def _teacher(name: str) -> type[Bot]:
    if name == "quick":
        from example_bots.quick.bot import QuickBot

        return QuickBot
    if name == "heuristic":
        from example_bots.heuristic.bot import HeuristicBot

        return HeuristicBot
    if name == "greedy":
        from example_bots.greedy.bot import GreedyBot

        return GreedyBot
    raise SystemExit(f"unknown teacher {name!r}: quick, heuristic or greedy")


def play_chunk(job: tuple[str, int, int]) -> Data:
    """Self-play of the teacher on hands ``first .. first + count - 1``: (vectors, action
    features, legal indices per step, the teacher's position among them)."""
    teacher, first, count = job
    make = _teacher(teacher)
    xs: list[F32] = []
    fs: list[F32] = []
    ys: list[int] = []
    for k in range(first, first + count):
        m = Match(Options(hands=1), k)
        bots = [make() for _ in range(4)]
        for s, bot in enumerate(bots):
            bot.reseed(7 * k + s)
            bot.on_match_start(s)
        while not m.over:
            s = m.seat
            obs = observe(m, s)
            bot = bots[s]
            may = obs.may_call_tichu
            call = may and bool(bot.call_tichu(obs))
            legal = m.legal_actions() if m.phase is not Phase.EXCHANGE else ()
            d = Decision(m.phase, s, legal, m.hands[s], may)
            if call:  # the call is the first index; a declined call is in the next step
                _record(xs, fs, ys, obs, d, TICHU_ACTION)
                m.apply(CALL_TICHU)
                obs = observe(m, s)
                legal = m.legal_actions() if m.phase is not Phase.EXCHANGE else ()
                d = Decision(m.phase, s, legal, m.hands[s], False)
            action = bot.act(obs)
            for i in path_of(d, action):
                _record(xs, fs, ys, obs, d, i)
                d.step(i)
            m.apply(action)
    return (
        np.array(xs, dtype=np.float16).reshape(-1, OBS_SIZE),
        np.rint(
            np.concatenate(fs or [np.zeros((0, N_ACTION_FEATURES), np.float32)]) * FEATURE_SCALE
        ).astype(np.uint8),
        np.array([len(f) for f in fs], dtype=np.int16),
        np.array(ys, dtype=np.int16),
    )


def _record(
    xs: list[F32], fs: list[F32], ys: list[int], obs: Observation, d: Decision, target: int
) -> None:
    """Keeps one step, unless a single index was legal (nothing to learn there)."""
    indices = d.indices()
    if len(indices) < 2:
        return
    xs.append(encode_observation(obs, d))
    fs.append(action_features(d))
    ys.append(indices.index(target))


def collect(teacher: str, hands: int, seed: int, workers: int) -> Data:
    """Self-play of ``hands`` hands, in chunks over ``workers`` processes, progress printed."""
    jobs = [(teacher, seed + k, min(CHUNK, hands - k)) for k in range(0, hands, CHUNK)]
    parts: list[Data] = []
    t0 = time.perf_counter()
    steps = 0
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        for done, part in enumerate(pool.imap(play_chunk, jobs), 1):
            parts.append(part)
            steps += len(part[3])
            played = min(hands, done * CHUNK)
            if done % 10 == 0 or played == hands:
                rate = played / (time.perf_counter() - t0)
                print(
                    f"  self-play {played}/{hands} hands, {steps:,} steps, {rate:.0f} hands/s",
                    flush=True,
                )
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
        np.concatenate([p[3] for p in parts]),
    )


def init(obs: int, hidden: int, hidden2: int, rng: np.random.Generator) -> dict[str, F32]:
    """He-initialised weights and zero biases, named as ``PARAMETERS``."""

    def he(a: int, b: int) -> F32:
        return (rng.standard_normal((a, b)) * np.sqrt(2 / a)).astype(np.float32)

    return {
        "Wo": he(obs, hidden),
        "Wa": he(N_ACTION_FEATURES, hidden),
        "b1": np.zeros(hidden, np.float32),
        "W2": he(hidden, hidden2),
        "b2": np.zeros(hidden2, np.float32),
        "w3": he(hidden2, 1),
        "b3": np.zeros(1, np.float32),
    }


def forward_backward(
    w: dict[str, F32], x: F32, f: F32, k: npt.NDArray[np.intp], y: npt.NDArray[np.intp],
    grad: bool = True,
) -> tuple[float, int, dict[str, F32]]:  # fmt: skip
    """Cross-entropy over each step's legal indices: the batch's mean loss, the steps whose
    teacher's index scores highest, and the gradients (``x``: a row per step; ``f``: a row
    per legal index, the steps' rows one after another, ``k`` of them per step)."""
    starts = np.concatenate([[0], np.cumsum(k)[:-1]])
    step_of = np.repeat(np.arange(len(k)), k)
    h1 = np.maximum((x @ w["Wo"])[step_of] + f @ w["Wa"] + w["b1"], 0)
    h2 = np.maximum(h1 @ w["W2"] + w["b2"], 0)
    s = h2 @ w["w3"][:, 0] + w["b3"][0]
    top = np.maximum.reduceat(s, starts)
    e = np.exp(s - top[step_of])
    p = e / np.add.reduceat(e, starts)[step_of]
    target = starts + y
    loss = float(-np.log(p[target] + 1e-12).mean())
    correct = int((s[target] >= top).sum())
    if not grad:
        return loss, correct, {}
    ds = p
    ds[target] -= 1
    ds /= len(k)
    g = {"w3": (h2.T @ ds)[:, None], "b3": np.array([ds.sum()], np.float32)}
    dh2 = np.outer(ds, w["w3"][:, 0]) * (h2 > 0)
    g["W2"] = h1.T @ dh2
    g["b2"] = dh2.sum(axis=0)
    dh1 = (dh2 @ w["W2"].T) * (h1 > 0)
    g["Wa"] = f.T @ dh1
    g["b1"] = dh1.sum(axis=0)
    g["Wo"] = x.T @ np.add.reduceat(dh1, starts)
    return loss, correct, g


def main() -> None:
    """Collects (or reloads) the data, trains from the checkpoint on, exports the weights."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--teacher", default="quick", help="quick, heuristic or greedy")
    parser.add_argument("--hands", type=int, default=20000, help="self-play hands of data")
    parser.add_argument("--epochs", type=int, default=4, help="passes over the data in all")
    parser.add_argument("--hidden", type=int, nargs=2, default=[256, 256])
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "learned")
    parser.add_argument(
        "--out", type=Path, default=ROOT / "example_bots" / "learned" / "weights.npz"
    )
    args = parser.parse_args()
    if args.hands < 20 or args.epochs < 1 or args.workers < 1:
        raise SystemExit("--hands must be at least 20, --epochs and --workers at least 1")
    args.work.mkdir(parents=True, exist_ok=True)
    data_path = args.work / f"data-{args.teacher}-{args.hands}-{args.seed}.npz"
    if data_path.exists():
        with np.load(data_path) as d:
            x_all, f_all, k_all, y_all = d["x"], d["f"], d["k"], d["y"]
        print(f"data: {data_path} ({len(y_all):,} steps)")
    else:
        print(f"data: {args.hands} self-play hands of {args.teacher}")
        x_all, f_all, k_all, y_all = collect(
            args.teacher, args.hands, args.seed * 1_000_003, args.workers
        )
        partial = data_path.with_suffix(".part.npz")  # a run stopped here leaves no data file
        np.savez(partial, x=x_all, f=f_all, k=k_all, y=y_all)
        partial.replace(data_path)
        print(f"  saved {data_path} ({data_path.stat().st_size / 1e6:.0f} MB)")
    train(args, x_all, f_all, k_all.astype(np.intp), y_all.astype(np.intp))


def train(
    args: argparse.Namespace,
    x_all: npt.NDArray[np.float16],
    f_all: npt.NDArray[np.uint8],
    k_all: npt.NDArray[np.intp],
    y_all: npt.NDArray[np.intp],
) -> None:
    """Epochs of Adam from the checkpoint in ``args.work`` on; weights exported each epoch."""
    n = len(y_all)
    held = max(1, n // 20)  # the last twentieth (the last hands) is held out
    train_n = n - held
    first = np.concatenate([[0], np.cumsum(k_all)])

    def batch(idx: npt.NDArray[np.intp]) -> tuple[F32, F32, npt.NDArray[np.intp]]:
        rows = np.concatenate([np.arange(first[i], first[i + 1]) for i in idx])
        return x_all[idx].astype(np.float32), f_all[rows] / FEATURE_SCALE, k_all[idx]

    ckpt = args.work / "checkpoint.npz"
    if ckpt.exists():
        with np.load(ckpt) as c:
            w = {k: c[f"p_{k}"] for k in PARAMETERS}
            m1 = {k: c[f"m_{k}"] for k in PARAMETERS}
            m2 = {k: c[f"v_{k}"] for k in PARAMETERS}
            epoch, t = int(c["epoch"]), int(c["t"])
        print(f"resumed from {ckpt} after epoch {epoch}")
    else:
        w = init(OBS_SIZE, *args.hidden, np.random.default_rng(args.seed))
        m1 = {k: np.zeros_like(v) for k, v in w.items()}
        m2 = {k: np.zeros_like(v) for k, v in w.items()}
        epoch = t = 0
    b1, b2, eps = 0.9, 0.999, 1e-8
    while epoch < args.epochs:
        t0 = time.perf_counter()
        order = np.random.default_rng(args.seed + epoch).permutation(train_n)
        total = correct = 0.0
        slower = epoch >= 2 and epoch == args.epochs - 1  # a slower last pass of three or more
        lr = args.lr / 3 if slower else args.lr
        for start in range(0, train_n, args.batch):
            idx = np.sort(order[start : start + args.batch])
            loss, ok, grads = forward_backward(w, *batch(idx), y_all[idx])
            total += loss * len(idx)
            correct += ok
            t += 1
            step = lr * np.sqrt(1 - b2**t) / (1 - b1**t)
            for key, g in grads.items():  # Adam
                m1[key] = b1 * m1[key] + (1 - b1) * g
                m2[key] = b2 * m2[key] + (1 - b2) * g * g
                w[key] -= (step * m1[key] / (np.sqrt(m2[key]) + eps)).astype(np.float32)
        epoch += 1
        h_loss = h_ok = 0.0
        for start in range(train_n, n, 4096):
            idx = np.arange(start, min(n, start + 4096))
            loss, ok, _ = forward_backward(w, *batch(idx), y_all[idx], grad=False)
            h_loss += loss * len(idx)
            h_ok += ok
        print(
            f"epoch {epoch}/{args.epochs}: loss {total / train_n:.3f}, agreement"
            f" {correct / train_n:.1%}; held out loss {h_loss / held:.3f}, agreement"
            f" {h_ok / held:.1%} ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
        state = {f"p_{k}": v for k, v in w.items()} | {f"m_{k}": v for k, v in m1.items()}
        state |= {f"v_{k}": v for k, v in m2.items()}
        _save(ckpt, epoch=np.array(epoch), t=np.array(t), **state)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        _save(args.out, **w)
    print(f"weights: {args.out}")


def _save(path: Path, **arrays: npt.NDArray[np.generic]) -> None:
    """Writes an ``.npz`` whole or not at all (a stop mid-write keeps the last one)."""
    part = path.with_name(path.name + ".part.npz")
    np.savez(part, **arrays)  # type: ignore[arg-type]
    part.replace(path)


if __name__ == "__main__":
    main()
