"""Trains the learned bot: imitation of a teacher bot, then rounds of DAgger.

    nice -n 19 .venv/bin/python scripts/train_learned.py

Four copies of the teacher (``quick`` by default) play ``--hands`` hands in-process, on
``--workers`` processes; every step of every decision is recorded as the environment encodes
it (``arena.env.encoding``: the observation vector, the action features of each legal index,
the teacher's index), steps with a single legal index left out. The scorer of
``example_bots/learned/policy.py`` is fitted to the teacher's indices by cross-entropy over
each step's legal indices, with Adam (written here: no framework to install), for
``--epochs`` passes. Then each of ``--rounds`` rounds (DAgger) lets the policy as it stands
play ``--round-hands`` hands against two ``--opponent`` bots, the teacher labels every state
the policy's seats reach, and ``--round-epochs`` passes over all the data so far follow (at a
third of the rate): the policy learns the teacher's answers where its own mistakes lead.

The data and a checkpoint (weights, Adam's moments, the stage and its epochs) live in
``--work``; a run interrupted continues from its checkpoint. The weights are exported to
``--out`` (the bot's ``weights.npz``) after each epoch, with the held-out agreement with the
teacher printed (the newest twentieth of the data).
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
    LENGTH_RANK_AT,
    N_ACTION_FEATURES,
    OBS_SIZE,
    TICHU_ACTION,
    Decision,
    action_features,
    encode_observation,
    path_of,
)
from arena.rules import CALL_TICHU, Match, Observation, Options, Phase, observe
from example_bots.learned.bot import LearnedBot
from example_bots.learned.policy import PARAMETERS
from sdk import Bot

ROOT = Path(__file__).resolve().parents[1]
F32 = npt.NDArray[np.float32]
CHUNK = 100  # hands a worker plays between two reports
#: Action features are stored as small integers: the length (x 14) and rank (x 15) of a shape.
FEATURE_SCALE = np.ones(N_ACTION_FEATURES, dtype=np.float32)
FEATURE_SCALE[LENGTH_RANK_AT : LENGTH_RANK_AT + 2] = (14, 15)
Data = tuple[
    npt.NDArray[np.float16], npt.NDArray[np.uint8], npt.NDArray[np.int16], npt.NDArray[np.int16]
]


def _bot(name: str) -> type[Bot]:
    if name == "quick":
        from example_bots.quick.bot import QuickBot

        return QuickBot
    if name == "heuristic":
        from example_bots.heuristic.bot import HeuristicBot

        return HeuristicBot
    if name == "greedy":
        from example_bots.greedy.bot import GreedyBot

        return GreedyBot
    raise SystemExit(f"unknown bot {name!r}: quick, heuristic or greedy")


Job = tuple[str, int, int, str | None, str]


def play_chunk(job: Job) -> Data:
    """Hands ``first .. first + count - 1`` and their labelled steps: (vectors, action
    features, legal indices per step, the teacher's position among them).

    Without ``weights``, four copies of the teacher play and every seat is labelled; with
    them, the policy of those weights plays one team (the first on even hands), two
    ``opponent`` bots the other, and the teacher labels the policy's seats.
    """
    teacher_name, first, count, weights, opponent = job
    make = _bot(teacher_name)
    teacher = make()
    out: tuple[list[F32], list[F32], list[int]] = ([], [], [])
    learned = [LearnedBot(Path(weights)) for _ in range(2)] if weights is not None else []
    for k in range(first, first + count):
        m = Match(Options(hands=1), k)
        if weights is None:
            players = [make() for _ in range(4)]
            labelled = [True] * 4
        else:
            team = k & 1
            labelled = [(s & 1) == team for s in range(4)]
            players = [learned[s >> 1] if labelled[s] else _bot(opponent)() for s in range(4)]
        for s, bot in enumerate(players):
            bot.reseed(7 * k + s)
            bot.on_match_start(s)
        teacher.reseed(7 * k)
        while not m.over:
            s = m.seat
            player = players[s]
            if labelled[s]:
                _labelled_decision(m, s, player, teacher if weights else player, out)
                continue
            obs = observe(m, s)
            if obs.may_call_tichu and player.call_tichu(obs):
                m.apply(CALL_TICHU)
                obs = observe(m, s)
            m.apply(player.act(obs))
    xs, fs, ys = out
    return (
        np.array(xs, dtype=np.float16).reshape(-1, OBS_SIZE),
        np.rint(
            np.concatenate(fs or [np.zeros((0, N_ACTION_FEATURES), np.float32)]) * FEATURE_SCALE
        ).astype(np.uint8),
        np.array([len(f) for f in fs], dtype=np.int16),
        np.array(ys, dtype=np.int16),
    )


def _labelled_decision(
    m: Match, s: int, player: Bot, teacher: Bot, out: tuple[list[F32], list[F32], list[int]]
) -> None:
    """Records the teacher's answer to seat ``s``'s decision (its Tichu call first), then
    plays the player's (the teacher's own when the player is the teacher)."""
    obs = observe(m, s)
    may = obs.may_call_tichu
    t_call = may and bool(teacher.call_tichu(obs))
    answer = None
    if t_call:  # the call is the first index; a declined call is in the step of the answer
        _record(out, obs, _decision(m, s, True), [TICHU_ACTION])
    else:
        answer = teacher.act(obs)
        d = _decision(m, s, may)
        _record(out, obs, d, path_of(d, answer))
    call = t_call if player is teacher else may and bool(player.call_tichu(obs))
    if call:
        m.apply(CALL_TICHU)
        obs = observe(m, s)
        answer = teacher.act(obs)
        d = _decision(m, s, False)
        _record(out, obs, d, path_of(d, answer))
    m.apply(answer if player is teacher and answer is not None else player.act(obs))


def _decision(m: Match, s: int, may_call_tichu: bool) -> Decision:
    legal = m.legal_actions() if m.phase is not Phase.EXCHANGE else ()
    return Decision(m.phase, s, legal, m.hands[s], may_call_tichu)


def _record(
    out: tuple[list[F32], list[F32], list[int]], obs: Observation, d: Decision, path: list[int]
) -> None:
    """Keeps each step of ``path`` that had more than one legal index (nothing to learn from
    the others), stepping ``d`` along it."""
    xs, fs, ys = out
    for i in path:
        indices = d.indices()
        if len(indices) > 1:
            xs.append(encode_observation(obs, d))
            fs.append(action_features(d))
            ys.append(indices.index(i))
        d.step(i)


def collect(path: Path, jobs: list[Job], workers: int, what: str) -> Data:
    """The data of ``path``, or played now (chunks over ``workers`` processes, progress
    printed) and saved there."""
    if path.exists():
        with np.load(path) as d:
            data = (d["x"], d["f"], d["k"], d["y"])
        print(f"data: {path} ({len(data[3]):,} steps)")
        return data
    hands = sum(job[2] for job in jobs)
    print(f"data: {hands} hands, {what}")
    parts: list[Data] = []
    t0 = time.perf_counter()
    played = steps = 0
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        for done, part in enumerate(pool.imap(play_chunk, jobs), 1):
            parts.append(part)
            steps += len(part[3])
            played += jobs[done - 1][2]
            if done % 10 == 0 or played == hands:
                rate = played / (time.perf_counter() - t0)
                print(f"  {played}/{hands} hands, {steps:,} steps, {rate:.0f} hands/s", flush=True)
    x, f, k, y = (np.concatenate([p[i] for p in parts]) for i in range(4))
    part_path = path.with_name(path.name + ".part.npz")  # a run stopped here leaves no data
    np.savez(part_path, x=x, f=f, k=k, y=y)
    part_path.replace(path)
    print(f"  saved {path} ({path.stat().st_size / 1e6:.0f} MB)")
    return x, f, k, y


def _jobs(
    teacher: str, first: int, hands: int, weights: Path | None = None, opponent: str = ""
) -> list[Job]:
    w = str(weights) if weights is not None else None
    return [
        (teacher, first + k, min(CHUNK, hands - k), w, opponent) for k in range(0, hands, CHUNK)
    ]


def init(obs: int, hidden: int, hidden2: int, rng: np.random.Generator) -> dict[str, F32]:
    """He-initialised weights and zero biases, named as ``PARAMETERS``."""

    def he(a: int, b: int) -> F32:
        w: F32 = (rng.standard_normal((a, b)) * np.sqrt(2 / a)).astype(np.float32)
        return w

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
    """Imitation, then the DAgger rounds, each stage's data played once and its epochs run
    from the checkpoint on."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--teacher", default="quick", help="quick, heuristic or greedy")
    parser.add_argument("--hands", type=int, default=20000, help="self-play hands of data")
    parser.add_argument("--epochs", type=int, default=4, help="passes of the imitation")
    parser.add_argument("--rounds", type=int, default=4, help="DAgger rounds after it")
    parser.add_argument("--round-hands", type=int, default=10000, help="hands a round plays")
    parser.add_argument("--round-epochs", type=int, default=2, help="passes a round makes")
    parser.add_argument("--opponent", default="heuristic", help="the other team in a round")
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
    if min(args.hands, args.round_hands) < 10 or min(args.epochs, args.workers) < 1:
        raise SystemExit("--hands and --round-hands must be at least 10, --epochs and --workers 1")
    if min(args.rounds, args.round_epochs) < 0 or min(args.hidden) < 1:
        raise SystemExit("--rounds and --round-epochs must not be negative, --hidden above 0")
    for name in (args.teacher, args.opponent):
        _bot(name)
    args.work.mkdir(parents=True, exist_ok=True)
    base = args.seed * 1_000_003
    data = [
        collect(
            args.work / f"data-{args.teacher}-{args.hands}-{args.seed}.npz",
            _jobs(args.teacher, base, args.hands),
            args.workers,
            f"self-play of {args.teacher}",
        )
    ]
    trainer = Trainer(args)
    while trainer.stage <= args.rounds:
        while len(data) <= trainer.stage:  # round r's data: read, or played by the policy now
            r = len(data)
            path = args.work / f"round{r}-{args.opponent}-{args.round_hands}-{args.seed}.npz"
            weights = args.work / f"round{r}-weights.npz"
            if not path.exists():
                _save(weights, **trainer.w)  # the policy as the round starts
            first = base + args.hands + (r - 1) * args.round_hands  # deals of its own
            what = f"round {r}: the policy against {args.opponent}, {args.teacher} labels"
            jobs = _jobs(args.teacher, first, args.round_hands, weights, args.opponent)
            data.append(collect(path, jobs, args.workers, what))
        trainer.run_stage(data[: trainer.stage + 1])
    print(f"weights: {args.out}")


class Trainer:
    """Adam over the stages (0: imitation, r: DAgger round r), checkpointed each epoch."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.ckpt = args.work / "checkpoint.npz"
        if self.ckpt.exists():
            with np.load(self.ckpt) as c:
                self.w = {k: c[f"p_{k}"] for k in PARAMETERS}
                self.m1 = {k: c[f"m_{k}"] for k in PARAMETERS}
                self.m2 = {k: c[f"v_{k}"] for k in PARAMETERS}
                self.stage, self.epoch, self.t = int(c["stage"]), int(c["epoch"]), int(c["t"])
            print(f"resumed from {self.ckpt}: {self.where()}")
        else:
            self.w = init(
                OBS_SIZE, args.hidden[0], args.hidden[1], np.random.default_rng(args.seed)
            )
            self.m1 = {k: np.zeros_like(v) for k, v in self.w.items()}
            self.m2 = {k: np.zeros_like(v) for k, v in self.w.items()}
            self.stage = self.epoch = self.t = 0

    def where(self) -> str:
        """The stage and its epochs done, in words."""
        name = "imitation" if self.stage == 0 else f"round {self.stage}"
        return f"{name}, {self.epoch} epochs done"

    def epochs(self) -> int:
        """The passes the current stage makes."""
        return int(self.args.epochs if self.stage == 0 else self.args.round_epochs)

    def run_stage(self, parts: list[Data]) -> None:
        """The stage's remaining epochs over ``parts`` (all the data so far), then the next
        stage."""
        if self.epoch < self.epochs():
            x, f, k, y = (np.concatenate([p[i] for p in parts]) for i in range(4))
            while self.epoch < self.epochs():
                self.run_epoch(x, f, k.astype(np.intp), y.astype(np.intp))
        self.stage, self.epoch = self.stage + 1, 0
        self.save()

    def run_epoch(
        self,
        x_all: npt.NDArray[np.float16],
        f_all: npt.NDArray[np.uint8],
        k_all: npt.NDArray[np.intp],
        y_all: npt.NDArray[np.intp],
    ) -> None:
        """One pass of Adam over the data, the held-out agreement printed, weights exported."""
        args = self.args
        n = len(y_all)
        held = max(1, n // 20)  # the last twentieth (the newest hands) is held out
        train_n = n - held
        first = np.concatenate([[0], np.cumsum(k_all)])

        def batch(idx: npt.NDArray[np.intp]) -> tuple[F32, F32, npt.NDArray[np.intp]]:
            rows = np.concatenate([np.arange(first[i], first[i + 1]) for i in idx])
            return x_all[idx].astype(np.float32), f_all[rows] / FEATURE_SCALE, k_all[idx]

        w, m1, m2 = self.w, self.m1, self.m2
        b1, b2, eps = 0.9, 0.999, 1e-8
        # A third of the rate in the rounds and in the last of three or more imitation passes.
        slower = self.stage > 0 or (self.epoch >= 2 and self.epoch == args.epochs - 1)
        lr = args.lr / 3 if slower else args.lr
        t0 = time.perf_counter()
        order = np.random.default_rng(args.seed + 100 * self.stage + self.epoch).permutation(
            train_n
        )
        total = correct = 0.0
        for start in range(0, train_n, args.batch):
            idx = np.sort(order[start : start + args.batch])
            loss, ok, grads = forward_backward(w, *batch(idx), y_all[idx])
            total += loss * len(idx)
            correct += ok
            self.t += 1
            step = lr * np.sqrt(1 - b2**self.t) / (1 - b1**self.t)
            for key, g in grads.items():
                m1[key] = b1 * m1[key] + (1 - b1) * g
                m2[key] = b2 * m2[key] + (1 - b2) * g * g
                w[key] -= (step * m1[key] / (np.sqrt(m2[key]) + eps)).astype(np.float32)
        self.epoch += 1
        h_loss = h_ok = 0.0
        for start in range(train_n, n, 4096):
            idx = np.arange(start, min(n, start + 4096))
            loss, ok, _ = forward_backward(w, *batch(idx), y_all[idx], grad=False)
            h_loss += loss * len(idx)
            h_ok += ok
        name = "imitation" if self.stage == 0 else f"round {self.stage}"
        print(
            f"{name} epoch {self.epoch}/{self.epochs()}: loss {total / train_n:.3f}, agreement"
            f" {correct / train_n:.1%}; held out loss {h_loss / held:.3f}, agreement"
            f" {h_ok / held:.1%} ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
        self.save()
        args.out.parent.mkdir(parents=True, exist_ok=True)
        _save(args.out, **w)

    def save(self) -> None:
        """The checkpoint: weights, Adam's moments, the stage, its epochs done, the step."""
        state = {f"p_{k}": v for k, v in self.w.items()}
        state |= {f"m_{k}": v for k, v in self.m1.items()}
        state |= {f"v_{k}": v for k, v in self.m2.items()}
        counters = {"stage": self.stage, "epoch": self.epoch, "t": self.t}
        _save(self.ckpt, **state, **{k: np.array(v) for k, v in counters.items()})


def _save(path: Path, **arrays: npt.NDArray[np.generic]) -> None:
    """Writes an ``.npz`` whole or not at all (a stop mid-write keeps the last one)."""
    part = path.with_name(path.name + ".part.npz")
    np.savez(part, **arrays)  # type: ignore[arg-type]
    part.replace(path)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        print(
            "stopped: the same command continues from the last finished epoch (a data set"
            " stopped while it was played is played again from its start: none of it was kept)",
            file=sys.stderr,
        )
        sys.exit(130)
