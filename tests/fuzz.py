"""Differential fuzzing: seeded mutations of corpus inputs replayed by the reference and by monitord.

A *variant* is (sample, seed): a copy of the sample's submit directory with one to three
mutations chosen by ``random.Random(seed)`` -- garbage lines, cut or duplicated or dropped
lines, CRLF line ends and invalid UTF-8 in dagman.out; empty, truncated or junk kickstart
records; missing job files (.sub, .out, .err), a missing .dag.  Both daemons replay the same
bytes (tests/differential.py).  The rules:

* the reference exits cleanly: monitord exits cleanly too and the outputs agree, or differ only
  in a kept way (verdict ``ours-better``: monitord keeps more, README *Differences*);
* the reference fails (exit status, traceback): monitord exits without a traceback, and keeps
  every database row the reference kept.

CI runs a small fixed set (tests/test_differential_fuzz.py).  The large set runs on demand and
prints the figures (variants, agree, ours-better, differ) and every remaining difference::

    python -m tests.fuzz --variants 200 [--seed 1] [--samples process_wf_success,...]

Nothing the reference made is stored: the outputs are made again on every run.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import CORPUS, copy_submit_dir, corpus_samples
from tests.differential import compare, keeps_reference_rows, replay_both
from tests.oracle import Oracle

JUNK_LINES = (
    b"garbage \x00\x01 line without a time stamp",
    b"01/02/23 03:04:05 Event: ULOG_SUBMIT for HTCondor Node (",
    b"13/45/99 99:99:99 Node no_such_job job proc (1.0.0) completed successfully.",
    b"01/02/23 03:04:05 Node ghost_ID0000099 job proc (9999.0.0) failed with status 3.",
    b"01/02/23 03:04:05 POST Script of node ghost_ID0000099 failed with signal 9",
    b"01/02/23 03:04:05 ** PID = notanumber",
    b"   Hold reason: dangling reason without a held job",
    b"\xff\xfe\xfd binary noise \x80\x81",
    b"",
)
JUNK_RECORD = b"- invocation: true\n  hostname: [unclosed\n  mainjob: {start: \n\x00\xff\n"


@dataclass(frozen=True)
class Mutation:
    name: str
    apply: Callable[[Path, random.Random], str]  # returns what it did


def _dagman_out(run: Path) -> Path:
    return next(run.glob("*.dag.dagman.out"))


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


def _pick(rng: random.Random, run: Path, pattern: str) -> Path | None:
    found = sorted(p for p in run.rglob(pattern) if p.is_file())
    return rng.choice(found) if found else None


def _garbage(run: Path, rng: random.Random) -> str:
    path = _dagman_out(run)
    lines = _lines(path)
    for _ in range(rng.randint(1, 4)):
        lines.insert(rng.randrange(len(lines)), rng.choice(JUNK_LINES))
    path.write_bytes(b"\n".join(lines))
    return f"junk lines in {path.name}"


def _cut(run: Path, rng: random.Random) -> str:
    path = _dagman_out(run)
    data = path.read_bytes()
    at = rng.randrange(len(data) // 4, len(data))
    path.write_bytes(data[:at])
    return f"{path.name} cut at byte {at} of {len(data)}"


def _duplicate(run: Path, rng: random.Random) -> str:
    path = _dagman_out(run)
    lines = _lines(path)
    start = rng.randrange(len(lines) - 1)
    n = rng.randint(1, 30)
    lines[start:start] = lines[start : start + n]
    path.write_bytes(b"\n".join(lines))
    return f"{path.name} lines {start + 1}-{start + n} duplicated"


def _drop(run: Path, rng: random.Random) -> str:
    path = _dagman_out(run)
    lines = _lines(path)
    start = rng.randrange(len(lines) - 1)
    n = rng.randint(1, 10)
    del lines[start : start + n]
    path.write_bytes(b"\n".join(lines))
    return f"{path.name} lines {start + 1}-{start + n} dropped"


def _crlf(run: Path, rng: random.Random) -> str:
    path = rng.choice([_dagman_out(run), _pick(rng, run, "*.sub") or _dagman_out(run)])
    path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    return f"CRLF line ends in {path.relative_to(run)}"


def _bad_utf8(run: Path, rng: random.Random) -> str:
    path = rng.choice([_dagman_out(run), _pick(rng, run, "*.out.*") or _dagman_out(run)])
    lines = _lines(path)
    i = rng.randrange(len(lines))
    cut = rng.randint(0, len(lines[i]))
    lines[i] = (
        lines[i][:cut] + rng.choice((b"\xff", b"\xc3\x28", b"\xe9t\xe9", b"\x80")) + lines[i][cut:]
    )
    path.write_bytes(b"\n".join(lines))
    return f"invalid UTF-8 in {path.relative_to(run)} line {i + 1}"


def _kickstart(run: Path, rng: random.Random) -> str:
    path = _pick(rng, run, "*.out.0*")
    if path is None:
        return "no kickstart output to damage"
    data = path.read_bytes()
    how = rng.choice(("empty", "truncated", "junk"))
    if how == "empty":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(data[: rng.randrange(max(1, len(data)))])
    else:
        path.write_bytes(data[: len(data) // 2] + JUNK_RECORD + data[len(data) // 2 :])
    return f"{how} kickstart output {path.relative_to(run)}"


def _missing(run: Path, rng: random.Random) -> str:
    kind = rng.choice(("*.sub", "*.out.0*", "*.err.0*", "*.dag"))
    path = _pick(rng, run, kind)
    if path is None or path.name.endswith(".condor.sub"):
        return f"no {kind} to remove"
    path.unlink()
    return f"{path.relative_to(run)} removed"


MUTATIONS = (
    Mutation("garbage", _garbage),
    Mutation("cut", _cut),
    Mutation("duplicate", _duplicate),
    Mutation("drop", _drop),
    Mutation("crlf", _crlf),
    Mutation("bad-utf8", _bad_utf8),
    Mutation("kickstart", _kickstart),
    Mutation("missing", _missing),
)


def make_variant(sample_input: Path, seed: int, dest: Path) -> list[str]:
    """Copies ``sample_input`` to ``dest`` and applies the seed's mutations; returns what was done."""
    copy_submit_dir(sample_input, dest)
    rng = random.Random(seed)
    done = []
    for mutation in rng.sample(MUTATIONS, rng.randint(1, 3)):
        done.append(f"{mutation.name}: {mutation.apply(dest, rng)}")
    return done


@dataclass
class Outcome:
    sample: str
    seed: int
    mutations: list[str]
    verdict: str  # agree | ours-better | differ | ref-failed-ok | ref-failed-lost | ours-failed
    details: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.verdict in ("agree", "ours-better", "ref-failed-ok")


def run_variant(oracle: Oracle, sample: str, seed: int, work: Path) -> Outcome:
    src = work / "input"
    mutations = make_variant(CORPUS / sample / "input", seed, src)
    ref, ours = replay_both(oracle, src, work)
    if ours.violations:
        return Outcome(sample, seed, mutations, "ours-failed", ours.violations)
    if ours.traceback:
        return Outcome(sample, seed, mutations, "ours-failed", [ours.stderr[-3000:]])
    if not ref.clean:
        lost = keeps_reference_rows(ref, ours)
        if lost or ours.returncode not in (0, 1):
            return Outcome(
                sample, seed, mutations, "ref-failed-lost", [f"exit {ours.returncode}", *lost]
            )
        # Passing needs only the rows; how the outputs compare is reported for information.
        comparison = compare(ref, ours)
        why = [ln for ln in ref.stderr.splitlines() if "Error" in ln or "error" in ln][:3]
        return Outcome(
            sample,
            seed,
            mutations,
            "ref-failed-ok",
            [f"reference exit {ref.returncode}: {' | '.join(why)}", f"outputs {comparison.verdict}"]
            + [f"[{rule}] {what}" for rule, what in comparison.items if rule is None],
        )
    if not ours.clean:
        return Outcome(
            sample, seed, mutations, "ours-failed", [f"exit {ours.returncode}", ours.stderr[-3000:]]
        )
    comparison = compare(ref, ours)
    details = [f"[{rule}] {what}" for rule, what in comparison.items]
    return Outcome(sample, seed, mutations, comparison.verdict, details)


def run_set(
    oracle: Oracle, variants: list[tuple[str, int]], keep: Path | None = None
) -> list[Outcome]:
    out = []
    for sample, seed in variants:
        work = Path(tempfile.mkdtemp(prefix=f"fuzz-{sample}-{seed}-", dir=keep))
        try:
            out.append(run_variant(oracle, sample, seed, work))
        finally:
            if keep is None:
                shutil.rmtree(work, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    from tests.oracle import find_oracle

    parser = argparse.ArgumentParser(description="differential fuzzing against the reference")
    parser.add_argument("--variants", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1, help="first seed")
    parser.add_argument("--samples", default=",".join(corpus_samples()))
    parser.add_argument("--keep", type=Path, help="keep the work dirs under this directory")
    parser.add_argument(
        "--variant", action="append", default=[], metavar="SAMPLE:SEED", help="run only these"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="details of every variant")
    args = parser.parse_args(argv)
    samples = [s for s in args.samples.split(",") if s]
    if not samples:
        parser.error(f"no corpus samples (is {CORPUS} there?)")
    variants = [(samples[i % len(samples)], args.seed + i) for i in range(args.variants)]
    if args.variant:
        variants = [(v.split(":")[0], int(v.split(":")[1])) for v in args.variant]
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    outcomes = run_set(find_oracle(), variants, args.keep)
    figures = Counter(o.verdict for o in outcomes)
    print(
        f"variants {len(outcomes)}: agree {figures['agree']}, ours-better {figures['ours-better']}, "
        f"differ {figures['differ']}, reference failed (monitord kept its rows) "
        f"{figures['ref-failed-ok']}, reference failed (rows lost) {figures['ref-failed-lost']}, "
        f"monitord failed {figures['ours-failed']}"
    )
    for o in outcomes:
        if not o.ok or args.verbose:
            print(f"\n== {o.sample} seed {o.seed}: {o.verdict}")
            for m in o.mutations:
                print(f"   mutation {m}")
            for d in o.details[:20]:
                print(f"   {d[:600]}")
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
