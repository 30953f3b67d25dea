"""``--read-ahead`` (issue 30): a replay's job files read and parsed by a worker process.

The rows are the same as without it (a generated workflow, every corpus sample against the
reference's), each answer is the disk's even when a file changed or went away after the
worker read it, and the worker ends with the daemon however the daemon ends.
"""

from __future__ import annotations

import os
import re
import signal
import time
from dataclasses import astuple
from pathlib import Path
from typing import Any

import pytest

from monitord.core import dagman as D
from monitord.core.jobreader import ParsingReader, with_texts
from monitord.daemon import readahead
from monitord.daemon.jobfiles import read_text
from monitord.daemon.readahead import Plan, ReadAhead, _asking_records, _Predicted, _requests
from monitord.tools.synthetic import generate
from tests.conftest import CORPUS, corpus_samples, replay_copy, require_corpus
from tests.replays import assert_same_rows, generated_and_replayed, replay, replayed

TITLE = "monitord read-ahead "


def workers_of(dagman_out: Path) -> dict[int, str]:
    """Every read-ahead worker of ``dagman_out`` (by its title): pid -> title."""
    found = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if title.startswith(TITLE) and str(dagman_out) in title:
                found[int(pid)] = title
    return found


def _ask(reader: Any, key: tuple[Any, ...], path: str) -> Any:
    kind = key[0]
    if kind == "sub":
        return reader.submit_file(path, key[2], key[3])
    if kind == "out":
        return reader.out_file(path)
    if kind == "err":
        return reader.err_file(path)
    return reader.exitcode(path)


def test_each_answer_is_the_disks_even_for_a_file_changed_or_gone(tmp_path: Path) -> None:
    out = generate(tmp_path / "run", 40, seed=7, retry_fraction=0.2, name="ra").dagman_out
    plan = Plan(str(out), store_stdout=True)
    asked = [(key, path) for key, path, _ in _requests(plan)]
    kinds = {key[0] for key, _ in asked}
    assert {"sub", "out", "err"} <= kinds, kinds
    disk = ParsingReader(read_text)
    ahead = ReadAhead(plan, ParsingReader(read_text))
    ahead.start()
    try:
        assert workers_of(out), "no worker started"
        while ahead._pull():  # every result in hand (40 jobs: under the bound)
            pass
        changed = next(p for k, p in asked if k[0] == "out")
        with open(changed, "a") as fh:
            fh.write("appended after the worker read it\n")
        gone = next(p for k, p in asked if k[0] == "err")
        os.remove(gone)
        # out of order first: the last file, then all of them in the machine's order
        for key, path in [asked[-1], *asked[:-1]]:
            assert _ask(ahead, key, path) == _ask(disk, key, path), (key, path)
        unknown = str(tmp_path / "run" / "not-predicted.out")
        assert ahead.out_file(unknown) is None
    finally:
        ahead.close()
    assert ahead.counts == {
        "used": len(asked) - 2,
        "changed": 2,  # the changed one and the one gone: read here
        "read_here": 1,  # the one not predicted
        "unused": 0,
        "worker_lost": 0,
    }
    assert workers_of(out) == {}, "the worker outlived its pipe"


def test_a_file_settled_before_the_replay_is_taken_without_a_stat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replay's job files are complete before it begins: one last changed ``SETTLED_NS``
    or more before it is taken as the worker read it, without a system call per file (the
    files changed since are stat'ed: the test above)."""
    out = generate(tmp_path / "run", 20, seed=7, retry_fraction=0.2, name="ra").dagman_out
    plan = Plan(str(out), store_stdout=True)
    asked = [(key, path) for key, path, _ in _requests(plan)]
    settled = time.time() - readahead.SETTLED_NS / 1e9 - 60
    for _, path in asked:
        if os.path.exists(path):
            os.utime(path, (settled, settled))
    stats: list[str] = []
    monkeypatch.setattr(readahead, "_stat", lambda path: stats.append(path))
    disk = ParsingReader(read_text)
    ahead = ReadAhead(plan, ParsingReader(read_text))
    ahead.start()
    try:
        for key, path in asked:
            assert _ask(ahead, key, path) == _ask(disk, key, path), (key, path)
    finally:
        ahead.close()
    assert stats == []
    assert ahead.counts["used"] == len(asked), ahead.counts


def test_a_file_changed_after_a_prestarted_worker_read_it_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "Settled" counts from the worker's start when it began before the replay's clock (a
    prestarted worker reads while the daemon starts up): a file changed 45 s before the worker
    began is not settled, even when the replay's clock starts 30 s later, so a change after
    the worker read it is seen (stat'ed, read here)."""
    out = generate(tmp_path / "run", 20, seed=7, retry_fraction=0.2, name="pre").dagman_out
    plan = Plan(str(out), store_stdout=True)
    asked = [(key, path) for key, path, _ in _requests(plan)]
    recent = time.time() - 45
    for _, path in asked:
        if os.path.exists(path):
            os.utime(path, (recent, recent))
    real = time.time_ns
    monkeypatch.setattr(time, "time_ns", lambda: real() + 30 * 10**9)
    ahead = ReadAhead(plan, ParsingReader(read_text))  # its clock: 30 s after the worker's
    monkeypatch.undo()
    disk = ParsingReader(read_text)
    ahead.start()
    try:
        while ahead._pull():  # every result in hand
            pass
        changed = next(p for k, p in asked if k[0] == "out")
        with open(changed, "a") as fh:
            fh.write("appended after the worker read it\n")
        for key, path in asked:
            assert _ask(ahead, key, path) == _ask(disk, key, path), (key, path)
    finally:
        ahead.close()
    assert ahead.counts["changed"] == 1, ahead.counts


def test_the_worker_reads_a_file_below_the_block_in_one_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker reads as the parser does (``jobfiles.read_text_stat``): a job file smaller
    than the block is one read, not a second one to see its end; its stat is the file's."""
    from monitord.daemon import readahead

    out = generate(tmp_path / "run", 40, seed=7, retry_fraction=0.2, name="reads").dagman_out
    reads: list[int] = []
    real = os.read

    def counted(fd: int, n: int) -> bytes:
        reads.append(fd)
        return real(fd, n)

    monkeypatch.setattr(os, "read", counted)
    plan = Plan(str(out), store_stdout=True)
    results = [r for batch in readahead._messages(plan) if type(batch) is list for r in batch]
    monkeypatch.undo()
    paths = [path for _, path, _ in _requests(plan)]
    read = [(st, path) for (_, st, _), path in zip(results, paths, strict=True) if st]
    assert len(read) > 40 and len(reads) == len(read), (len(reads), len(read))
    for st, path in read:
        disk = os.stat(path)
        assert st == (disk.st_size, disk.st_mtime_ns, disk.st_ino), path


def test_a_file_asked_for_far_out_of_order_is_read_here_within_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parser holds at most KEEP results (and the batch that crossed it): a file asked for
    before many others it skipped is read here, and the skipped ones are still used."""
    from monitord.daemon import readahead

    monkeypatch.setattr(readahead, "KEEP", 8)
    out = generate(tmp_path / "run", 200, seed=8, name="far").dagman_out
    plan = Plan(str(out), store_stdout=False)
    asked = [(key, path) for key, path, _ in _requests(plan)]
    assert len(asked) > 4 * readahead.BATCH
    disk = ParsingReader(read_text)
    ahead = ReadAhead(plan, ParsingReader(read_text))
    ahead.start()
    try:
        last_key, last = asked[-1]
        assert _ask(ahead, last_key, last) == _ask(disk, last_key, last)
        assert ahead.counts["read_here"] == 1
        assert len(ahead._ready) <= 8 + readahead.BATCH
        key, path = asked[0]
        assert _ask(ahead, key, path) == _ask(disk, key, path)
        assert ahead.counts["used"] == 1
    finally:
        ahead.close()


def test_without_stdout_the_texts_are_not_sent(tmp_path: Path) -> None:
    """``--skip-stdout``: the daemon keeps neither a ``.out``'s stdout text nor an ``.err``'s
    stderr text (``jobout._stdout_text``, ``jobout.py``), so the worker sends neither; the
    rest of each result is the disk's."""
    out = generate(tmp_path / "run", 20, seed=7, name="ra").dagman_out
    plan = Plan(str(out), store_stdout=False)
    results = [r for batch in readahead._messages(plan) if type(batch) is list for r in batch]
    disk = ParsingReader(read_text)
    texts = {"out": "stdout_text", "err": "stderr_text"}
    blanked = set()
    for key, _, value in results:
        if key[0] in texts:
            want = _ask(disk, key, key[1])
            if getattr(want, texts[key[0]]):
                blanked.add(key[0])  # a text the disk's parse has
            assert getattr(value, texts[key[0]]) == ""
            if key[0] == "out":
                value = with_texts(value)  # a kickstart .out's payloads: the parser's
            setattr(want, texts[key[0]], "")
            setattr(value, texts[key[0]], "")
            assert value == want, key
    assert blanked == {"out", "err"}


def test_a_kickstart_out_is_sent_as_its_records_without_their_texts(tmp_path: Path) -> None:
    """A ``.out`` with kickstart records travels as its records: their stdout text (raw in
    the records) not a second time quoted, nor its payloads; the parser makes both from the
    records (``jobreader.with_texts``), so its answer is the disk's parse."""
    out = generate(tmp_path / "run", 20, seed=7, name="ra").dagman_out
    plan = Plan(str(out), store_stdout=True)
    results = [r for batch in readahead._messages(plan) if type(batch) is list for r in batch]
    disk = ParsingReader(read_text)
    outs = [(key, value) for key, _, value in results if key[0] == "out"]
    assert len(outs) >= 20
    for key, value in outs:
        want = _ask(disk, key, key[1])
        assert want.records and want.stdout_text, key
        assert (value.stdout_text, value.payloads) == ("", []), key
        assert with_texts(value) == want, key


def test_the_option_is_parsed_into_the_config() -> None:
    """``--no-read-ahead`` / ``--read-ahead`` / neither: False / True / None (the rule of a
    large replay's helper processes, monitord/daemon/outputs.py), and a followed workflow's
    config says no worker whatever the option."""
    from monitord.cli.options import REPLAY, build_parser
    from monitord.daemon.config import Options, monitor_config

    got = []
    for argv in (["--no-read-ahead"], ["--read-ahead"], []):
        args = build_parser("monitord replay", REPLAY).parse_args([*argv, "x.dagman.out"])
        got.append(monitor_config(Options.from_args(args), {}).read_ahead)
    assert got == [False, True, None]
    following = Options(dagman_out="x.dagman.out", read_ahead=True)
    assert monitor_config(following, {}).read_ahead is False


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A generated 300-job workflow (retries) and its database replayed without the option."""
    return generated_and_replayed(tmp_path_factory.mktemp("gen"), "rah", 0.1, "--no-read-ahead")


def test_a_generated_workflows_rows_are_the_same_and_come_from_the_worker(
    generated: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    out, expected, home = generated
    db = tmp_path / "ahead.db"
    err = replayed(out, db, home, "-v", "--read-ahead")
    assert_same_rows(expected, db)
    line = next(x for x in err.splitlines() if "read-ahead " in x and "used=" in x)
    counts = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)\b", line)}
    assert counts["used"] > 600 and counts["read_here"] == 0 and counts["changed"] == 0, line
    # the parser took every chunk's lines classified by the worker
    assert counts["chunks_classified"] >= 2 and counts["chunks_here"] == 0, line


def test_the_worker_keeps_a_jobs_counter_only_until_its_success(
    generated: tuple[Path, Path, Path],
) -> None:
    """Memory flat in the job count: every job of the workflow (retried ones too) ends
    well, so none is left (the machine's own counters, all kept, made 100,000 of them)."""
    out = str(generated[0])
    predicted = _Predicted(out)
    asked = sum(len(list(predicted.asked(rec))) for rec in _asking_records(out))
    assert asked > 600 and predicted.counters == {}


def test_the_lines_cut_as_the_parser_cuts_them_ask_for_the_same_files(
    generated: tuple[Path, Path, Path],
) -> None:
    """The worker classifies dagman.out cut into the parser's chunks: every line classified
    asks for the same files in the same order (the generated workflow, and the corpus'
    dagman.outs)."""
    outs = [generated[0]]
    if CORPUS.is_dir():
        outs += sorted(CORPUS.glob("*/input/**/*.dagman.out"))
    for out in outs:
        predicted = _Predicted(str(out))
        every = []
        with open(out, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                rec = D.classify_line(line.rstrip(), 0.0)
                if rec is not None:
                    every += [key for key, _, _ in predicted.asked((0, *astuple(rec)))]
        assert [key for key, _, _ in _requests(Plan(str(out), store_stdout=True))] == every, out
        assert every or out != generated[0]


@pytest.mark.parametrize("sample", corpus_samples() or ["<corpus absent>"])
def test_every_corpus_sample_gives_the_references_rows(sample: str, tmp_path: Path) -> None:
    require_corpus()
    run = replay_copy(CORPUS / sample / "input", tmp_path, "--read-ahead")
    (db,) = run.glob("*.stampede.db")
    assert_same_rows(CORPUS / sample / "expected" / "stampede.db", db)


def _taken(proc: Any, log: Path, out: Path) -> int:
    """The pid of the worker once the replay took it (its ``-v`` log says so; the worker
    exists from the daemon's start, before its interrupt handler does)."""
    deadline = time.monotonic() + 300
    while "read-ahead worker started" not in log.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, "no worker started"
        time.sleep(0.01)
    (pid,) = workers_of(out)
    return pid


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
def test_the_worker_ends_with_the_daemon(
    generated: tuple[Path, Path, Path], tmp_path: Path, how: signal.Signals
) -> None:
    out, _, home = generated
    log = tmp_path / "stderr"
    with open(log, "w") as stderr:
        proc = replay(out, tmp_path / "killed.db", home, "-v", "--read-ahead", stderr=stderr)
        _taken(proc, log, out)
        proc.send_signal(how)
        proc.wait(timeout=120)
    err = log.read_text()
    if how != signal.SIGKILL:  # an interrupt: one line, no traceback
        assert proc.returncode in (0, 128 + how), err[-3000:]
        assert "Traceback" not in err
    deadline = time.monotonic() + 60  # the batch in hand, at most, then the closed pipe
    while workers_of(out) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert workers_of(out) == {}


def test_a_worker_killed_mid_replay_leaves_the_parser_reading(
    generated: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """SIGKILL the worker: the parser reads every file left itself; the rows are the same."""
    out, expected, home = generated
    db = tmp_path / "worker-killed.db"
    log = tmp_path / "stderr"
    with open(log, "w") as err:
        proc = replay(out, db, home, "-v", "--read-ahead", stderr=err)
        os.kill(_taken(proc, log, out), signal.SIGKILL)
        proc.wait(timeout=600)
    text = log.read_text()
    assert proc.returncode == 0, text[-3000:]
    assert "read-ahead worker gone" in text or "read-ahead worker did not start" in text, text
    assert "worker_lost=1" in text, text[-3000:]
    assert_same_rows(expected, db)
