"""What the OTLP sink costs its thread: the trace model and the protobuf encoding, per event.

Generates a synthetic workflow, replays it once into a JSON events file, then times, in this
process, the model fed in batches of 5,000 events (the daemon's batch) and the encoding of the
spans each batch completes (no network)::

    .venv/bin/python bench/otlp_bench.py --jobs 2000 --rounds 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from monitord.tools.synthetic import generate  # noqa: E402
from sinks.encoding import decode_json  # noqa: E402
from sinks.otlp.encode import encode_request  # noqa: E402
from sinks.otlp.model import TraceModel  # noqa: E402

BATCH = 5000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        gen = generate(Path(tmp) / "wf", args.jobs, retry_fraction=0.1, seed=1, name="bench")
        events_file = Path(tmp) / "events.json"
        env = {**os.environ, "TZ": "America/Los_Angeles", "HOME": tmp}
        cmd = [sys.executable, "-m", "monitord.cli", "replay", "-q", "--no-dashboard"]
        cmd += ["-e", "json", "-d", f"file://{events_file}", str(gen.dagman_out)]
        subprocess.run(cmd, check=True, env=env, cwd=ROOT)
        lines = events_file.read_text().splitlines()
    events = [decode_json(line) for line in lines if line.strip()]
    model_s, encode_s, spans, size = [], [], 0, 0
    for _ in range(args.rounds):
        model = TraceModel()
        t0 = time.perf_counter()
        batches = [model.feed(events[i : i + BATCH]) for i in range(0, len(events), BATCH)]
        t1 = time.perf_counter()
        bodies = [encode_request(b, {"service.name": "pegasus"}, "0") for b in batches if b]
        t2 = time.perf_counter()
        model_s.append(t1 - t0)
        encode_s.append(t2 - t1)
        spans, size = sum(map(len, batches)), sum(map(len, bodies))
    m, e = statistics.median(model_s), statistics.median(encode_s)
    n = len(events)
    print(f"{args.jobs} jobs: {n} events -> {spans} spans, {size / 1e6:.1f} MB of protobuf")
    print(f"model  {m * 1e3:7.1f} ms  {n / m:10.0f} events/s  (median of {args.rounds})")
    print(f"encode {e * 1e3:7.1f} ms  {spans / e:10.0f} spans/s")


if __name__ == "__main__":
    main()
