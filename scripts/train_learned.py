"""Trains the learned bot: imitation of a teacher bot's decisions on self-play hands.

    nice -n 19 .venv/bin/python scripts/train_learned.py --hands 1500 --epochs 12

Four copies of the teacher (``quick`` by default) play ``--hands`` hands in-process; every
step of every decision is recorded as the environment encodes it (``arena.env.encoding``:
the observation vector, the mask, the teacher's index), steps with a single legal index left
out. A numpy multilayer perceptron is fitted to the teacher's indices by masked
cross-entropy with Adam (written here: no framework to install). The data and a checkpoint
(weights, Adam's moments, the epoch) live in ``--work``; a run interrupted continues from
its checkpoint. The weights are exported to ``--out`` (the bot's ``weights.npz``) after each
epoch, with the held-out agreement with the teacher printed.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core: the machine is shared
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import itertools

from arena.env.encoding import (
    N_ACTIONS,
    OBS_SIZE,
    TICHU_ACTION,
    Decision,
    encode_observation,
    path_of,
)
from arena.rules import CALL_TICHU, Match, Observation, Options, Phase, observe
from sdk import Bot

ROOT = Path(__file__).resolve().parents[1]
F32 = npt.NDArray[np.float32]


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


def collect(
    teacher: str, hands: int, seed: int
) -> tuple[F32, npt.NDArray[np.uint8], npt.NDArray[np.int16]]:
    """Self-play of the teacher: (vectors, packed masks, target indices) of every step."""
    make = _teacher(teacher)
    xs: list[F32] = []
    masks: list[npt.NDArray[np.uint8]] = []
    ys: list[int] = []
    t0 = time.perf_counter()
    for k in range(hands):
        m = Match(Options(hands=1), seed + k)
        bots = [make() for _ in range(4)]
        for s, bot in enumerate(bots):
            bot.reseed(seed * 7 + 4 * k + s)
            bot.on_match_start(s)
        while not m.over:
            s = m.seat
            obs = observe(m, s)
            bot = bots[s]
            may = obs.may_call_tichu
            call = may and bool(bot.call_tichu(obs))
            legal = m.legal_actions() if m.phase is not Phase.EXCHANGE else ()
            d = Decision(m.phase, s, legal, m.hands[s], may)
            if call:  # the call is the first index; a declined call is in the next mask
                _record(xs, masks, ys, obs, d, TICHU_ACTION)
                m.apply(CALL_TICHU)
                obs = observe(m, s)
                legal = m.legal_actions() if m.phase is not Phase.EXCHANGE else ()
                d = Decision(m.phase, s, legal, m.hands[s], False)
            action = bot.act(obs)
            for i in path_of(d, action):
                _record(xs, masks, ys, obs, d, i)
                d.step(i)
            m.apply(action)
        if (k + 1) % 100 == 0 or k + 1 == hands:
            rate = (k + 1) / (time.perf_counter() - t0)
            print(f"  self-play {k + 1}/{hands} hands, {len(ys):,} steps, {rate:.0f} hands/s")
    return (
        np.array(xs, dtype=np.float16).astype(np.float32),
        np.array(masks, dtype=np.uint8),
        np.array(ys, dtype=np.int16),
    )


def _record(
    xs: list[F32],
    masks: list[npt.NDArray[np.uint8]],
    ys: list[int],
    obs: Observation,
    d: Decision,
    target: int,
) -> None:
    """Keeps one step, unless a single index was legal (nothing to learn there)."""
    indices = d.indices()
    if len(indices) < 2:
        return
    mask = np.zeros(N_ACTIONS, dtype=np.uint8)
    mask[indices] = 1
    xs.append(encode_observation(obs, d))
    masks.append(np.packbits(mask))
    ys.append(target)


def init(sizes: list[int], rng: np.random.Generator) -> list[F32]:
    """He-initialised weights and zero biases: ``[w0, b0, w1, b1, ...]``."""
    params: list[F32] = []
    for a, b in itertools.pairwise(sizes):
        params.append((rng.standard_normal((a, b)) * np.sqrt(2 / a)).astype(np.float32))
        params.append(np.zeros(b, dtype=np.float32))
    return params


def forward_backward(
    params: list[F32], x: F32, mask: npt.NDArray[np.bool_], y: npt.NDArray[np.int64]
) -> tuple[float, int, list[F32]]:
    """Masked cross-entropy of a batch: its loss, correct count and the gradients."""
    hs = [x]
    n_layers = len(params) // 2
    h = x
    for i in range(n_layers):
        h = h @ params[2 * i] + params[2 * i + 1]
        if i < n_layers - 1:
            h = np.maximum(h, 0)
            hs.append(h)
    z = np.where(mask, h, -1e9)
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    rows = np.arange(len(y))
    loss = float(-np.log(p[rows, y] + 1e-12).mean())
    correct = int((z.argmax(axis=1) == y).sum())
    g = p
    g[rows, y] -= 1
    g /= len(y)
    grads: list[F32] = [np.empty(0, np.float32)] * len(params)
    for i in range(n_layers - 1, -1, -1):
        grads[2 * i] = hs[i].T @ g
        grads[2 * i + 1] = g.sum(axis=0)
        if i:
            g = (g @ params[2 * i].T) * (hs[i] > 0)
    return loss, correct, grads


def main() -> None:
    """Collects (or reloads) the data, trains from the checkpoint on, exports the weights."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--teacher", default="quick", help="quick, heuristic or greedy")
    parser.add_argument("--hands", type=int, default=1500, help="self-play hands of data")
    parser.add_argument("--epochs", type=int, default=12, help="passes over the data in all")
    parser.add_argument("--hidden", type=int, nargs="*", default=[256, 256])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "learned")
    parser.add_argument(
        "--out", type=Path, default=ROOT / "example_bots" / "learned" / "weights.npz"
    )
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    data_path = args.work / f"data-{args.teacher}-{args.hands}-{args.seed}.npz"
    if data_path.exists():
        with np.load(data_path) as f:
            x_all, m_all, y_all = f["x"], f["m"], f["y"]
        print(f"data: {data_path} ({len(y_all):,} steps)")
    else:
        print(f"data: {args.hands} self-play hands of {args.teacher}")
        x_all, m_all, y_all = collect(args.teacher, args.hands, args.seed * 1_000_003)
        np.savez_compressed(data_path, x=x_all.astype(np.float16), m=m_all, y=y_all)
        print(f"  saved {data_path} ({data_path.stat().st_size / 1e6:.1f} MB)")
    x_all = x_all.astype(np.float32)
    n = len(y_all)
    held = max(1, n // 20)  # the last twentieth (the last hands) is held out
    rng = np.random.default_rng(args.seed)
    sizes = [OBS_SIZE, *args.hidden, N_ACTIONS]
    ckpt = args.work / "checkpoint.npz"
    if ckpt.exists():
        with np.load(ckpt) as f:
            k = len([s for s in f.files if s.startswith("p")])
            params = [f[f"p{i}"] for i in range(k)]
            m1 = [f[f"m{i}"] for i in range(k)]
            m2 = [f[f"v{i}"] for i in range(k)]
            epoch, t = int(f["epoch"]), int(f["t"])
        print(f"resumed from {ckpt} after epoch {epoch}")
    else:
        params = init(sizes, rng)
        m1 = [np.zeros_like(p) for p in params]
        m2 = [np.zeros_like(p) for p in params]
        epoch = t = 0
    b1, b2, eps = 0.9, 0.999, 1e-8
    train = n - held
    while epoch < args.epochs:
        t0 = time.perf_counter()
        order = np.random.default_rng(args.seed + epoch).permutation(train)
        total = correct = 0.0
        for start in range(0, train, args.batch):
            idx = order[start : start + args.batch]
            mask = np.unpackbits(m_all[idx], axis=1)[:, :N_ACTIONS].astype(bool)
            loss, ok, grads = forward_backward(
                params, x_all[idx], mask, y_all[idx].astype(np.int64)
            )
            total += loss * len(idx)
            correct += ok
            t += 1
            for i, g in enumerate(grads):  # Adam
                m1[i] = b1 * m1[i] + (1 - b1) * g
                m2[i] = b2 * m2[i] + (1 - b2) * g * g
                step = args.lr * np.sqrt(1 - b2**t) / (1 - b1**t)
                params[i] -= (step * m1[i] / (np.sqrt(m2[i]) + eps)).astype(np.float32)
        epoch += 1
        mask = np.unpackbits(m_all[train:], axis=1)[:, :N_ACTIONS].astype(bool)
        h_loss, h_ok, _ = forward_backward(
            params, x_all[train:], mask, y_all[train:].astype(np.int64)
        )
        print(
            f"epoch {epoch}/{args.epochs}: loss {total / train:.3f}, agreement"
            f" {correct / train:.1%}; held out loss {h_loss:.3f}, agreement {h_ok / held:.1%}"
            f" ({time.perf_counter() - t0:.0f} s)"
        )
        state = {f"p{i}": p for i, p in enumerate(params)}
        state |= {f"m{i}": p for i, p in enumerate(m1)}
        state |= {f"v{i}": p for i, p in enumerate(m2)}
        np.savez(ckpt, epoch=epoch, t=t, **state)
        export = {f"{'w' if i % 2 == 0 else 'b'}{i // 2}": p for i, p in enumerate(params)}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        np.savez(args.out, **export)
    print(f"weights: {args.out}")


if __name__ == "__main__":
    main()
