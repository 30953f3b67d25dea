"""The service's local HTTP endpoint: /healthz, Prometheus /metrics, /status.json and /status.

A deliberately small HTTP/1.1 server on ``asyncio.start_server`` (no web framework): four
read-only GET pages, one request per connection (``Connection: close``), bounded request
heads and a deadline per request, so a slow or malformed client costs one socket and never an
exception in the service.  It listens on 127.0.0.1 unless the configuration names another
address.  Every page is built from one :class:`~monitord.service.status.ServiceSnapshot`.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import html
import ipaddress
import math
import os
import time
from collections.abc import Iterable
from urllib.parse import urlsplit

import orjson
import structlog

from monitord.service.status import JOB_COLUMNS, ServiceSnapshot, StatusSource, to_json

log = structlog.get_logger(__name__)

DEFAULT_HOST = "127.0.0.1"
MAX_LINE = 8192  # request line or one header line
MAX_HEADERS = 100
REQUEST_TIMEOUT = 10.0  # seconds to send the request head
MAX_CONNECTIONS = 64  # handled at once; more are answered 503 at once

PROMETHEUS_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_REASONS = {
    200: "OK",
    302: "Found",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    503: "Service Unavailable",
    505: "HTTP Version Not Supported",
}


class ListenError(ValueError):
    """A ``listen`` value that is not ``[HOST:]PORT``."""


def parse_listen(listen: str) -> tuple[str, int]:
    """``"127.0.0.1:9175"``, ``"[::1]:9175"``, ``"localhost:9175"`` or ``"9175"`` -> (host, port)."""
    text = listen.strip()
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = "", text
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ListenError(f"{listen!r}: write an IPv6 address in brackets, e.g. [::1]:9175")
    try:
        port = int(port_text)
    except ValueError:
        raise ListenError(f"{listen!r}: port {port_text!r} is not a number") from None
    if not 0 <= port <= 65535:
        raise ListenError(f"{listen!r}: port {port} is out of range")
    return host or DEFAULT_HOST, port


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def start_http(source: StatusSource, listen: str) -> asyncio.AbstractServer:
    """Serve the status pages of ``source`` on ``listen`` (``[HOST:]PORT``, host 127.0.0.1).

    Port 0 picks a free port (``server.sockets[0].getsockname()``).  Raises
    :class:`ListenError` for a bad ``listen`` and ``OSError`` when the address is taken.
    """
    host, port = parse_listen(listen)
    if not _is_loopback(host):
        log.warning("status endpoint listens beyond this host", host=host, port=port)
    handler = _Handler(source)
    server = await asyncio.start_server(handler.handle, host, port, limit=MAX_LINE)
    log.info("status endpoint listening", address=[s.getsockname() for s in server.sockets])
    return server


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Handler:
    def __init__(self, source: StatusSource) -> None:
        self.source = source
        self.active = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.active += 1
        try:
            if self.active > MAX_CONNECTIONS:
                await _send(writer, 503, "text/plain; charset=utf-8", b"busy\n", head=False)
                return
            try:
                async with asyncio.timeout(REQUEST_TIMEOUT):
                    method, target = await _read_head(reader)
            except TimeoutError:
                await _send(writer, 408, "text/plain; charset=utf-8", b"timeout\n", head=False)
                return
            except _BadRequest as exc:
                body = f"{exc}\n".encode()
                await _send(writer, exc.status, "text/plain; charset=utf-8", body, head=False)
                return
            except (ConnectionError, asyncio.IncompleteReadError):
                return
            await self._respond(writer, method, target)
        except (ConnectionError, TimeoutError):
            pass
        except Exception:  # noqa: BLE001 - one bad request never stops the endpoint
            log.exception("status endpoint: request failed")
        finally:
            self.active -= 1
            writer.close()
            try:
                await writer.wait_closed()
            except (ConnectionError, OSError):
                pass

    async def _respond(self, writer: asyncio.StreamWriter, method: str, target: str) -> None:
        head = method == "HEAD"
        path = urlsplit(target).path if "://" in target else target.split("?", 1)[0]
        if path not in _PAGES:
            await _send(writer, 404, "text/plain; charset=utf-8", b"not found\n", head=head)
            return
        if method not in ("GET", "HEAD"):
            await _send(
                writer,
                405,
                "text/plain; charset=utf-8",
                b"method not allowed\n",
                head=False,
                extra={"Allow": "GET, HEAD"},
            )
            return
        if path == "/":
            await _send(
                writer, 302, "text/plain; charset=utf-8", b"", extra={"Location": "/status"}
            )
            return
        try:
            snapshot = self.source.snapshot()
        except Exception as exc:  # noqa: BLE001
            log.error("status endpoint: snapshot failed", error=str(exc))
            body = orjson.dumps({"status": "error", "error": str(exc)})
            await _send(writer, 503 if path == "/healthz" else 500, "application/json", body)
            return
        if path == "/healthz":
            body = orjson.dumps(
                {
                    "status": "ok",
                    "uptime_seconds": round(max(0.0, time.time() - snapshot.started_at), 3),
                    "workflows": len(snapshot.workflows),
                    "pid": os.getpid(),
                }
            )
            await _send(writer, 200, "application/json", body, head=head)
        elif path == "/metrics":
            await _send(writer, 200, PROMETHEUS_TYPE, render_metrics(snapshot).encode(), head=head)
        elif path == "/status.json":
            await _send(writer, 200, "application/json", to_json(snapshot), head=head)
        else:
            await _send(
                writer,
                200,
                "text/html; charset=utf-8",
                render_status_page(snapshot).encode(),
                head=head,
                extra={"Content-Security-Policy": STATUS_PAGE_CSP},
            )


_PAGES = frozenset({"/", "/healthz", "/metrics", "/status.json", "/status"})


async def _read_head(reader: asyncio.StreamReader) -> tuple[str, str]:
    """The request line's method and target; the headers are read and ignored (no bodies)."""
    line = await _read_line(reader)
    if not line:
        raise ConnectionError("closed before the request line")
    parts = line.split(" ")
    if len(parts) != 3:
        raise _BadRequest(400, "malformed request line")
    method, target, version = parts
    if not version.startswith("HTTP/1."):
        raise _BadRequest(505, "only HTTP/1.x is served")
    if not method.isalpha() or not method.isupper() or not target:
        raise _BadRequest(400, "malformed request line")
    if not (target.startswith("/") or target.startswith("http://")):
        raise _BadRequest(400, "unsupported request target")
    for _ in range(MAX_HEADERS):
        header = await _read_line(reader)
        if header == "":
            return method, target
        if ":" not in header:
            raise _BadRequest(400, "malformed header line")
    raise _BadRequest(431, "too many header lines")


async def _read_line(reader: asyncio.StreamReader) -> str:
    try:
        raw = await reader.readline()
    except (ValueError, asyncio.LimitOverrunError):
        raise _BadRequest(431, "request line or header too long") from None
    if raw and not raw.endswith(b"\n"):
        raise asyncio.IncompleteReadError(raw, None)
    try:
        return raw.decode("ascii").rstrip("\r\n")
    except UnicodeDecodeError:
        raise _BadRequest(400, "non-ASCII request head") from None


async def _send(
    writer: asyncio.StreamWriter,
    status: int,
    content_type: str,
    body: bytes,
    *,
    head: bool = False,
    extra: dict[str, str] | None = None,
) -> None:
    lines = [
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Unknown')}",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(body)}",
        "Cache-Control: no-store",
        "X-Content-Type-Options: nosniff",
        "Connection: close",
    ]
    lines.extend(f"{k}: {v}" for k, v in (extra or {}).items())
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("ascii"))
    if not head:
        writer.write(body)
    await writer.drain()


# ---------------------------------------------------------------------- /metrics
def _label_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


def render_metrics(snapshot: ServiceSnapshot) -> str:
    """The snapshot in the Prometheus text exposition format 0.0.4."""
    out: list[str] = []

    def family(
        name: str, kind: str, help_text: str, samples: Iterable[tuple[dict[str, str], float]]
    ) -> None:
        out.append(f"# HELP {name} {help_text}")
        out.append(f"# TYPE {name} {kind}")
        for labels, value in samples:
            if labels:
                text = ",".join(f'{k}="{_label_value(v)}"' for k, v in labels.items())
                out.append(f"{name}{{{text}}} {_number(value)}")
            else:
                out.append(f"{name} {_number(value)}")

    wfs = snapshot.workflows
    family(
        "process_start_time_seconds",
        "gauge",
        "Start time of the process since unix epoch in seconds.",
        [({}, snapshot.started_at)],
    )
    family("monitord_workflows", "gauge", "Workflows followed.", [({}, len(wfs))])
    family(
        "monitord_workflow_lag_bytes",
        "gauge",
        "Bytes of dagman.out not processed yet.",
        [({"wf_uuid": w.wf_uuid}, w.lag_bytes) for w in wfs],
    )
    family(
        "monitord_workflow_lag_seconds",
        "gauge",
        "Age of the oldest dagman.out data not processed yet.",
        [({"wf_uuid": w.wf_uuid}, w.lag_seconds) for w in wfs],
    )
    family(
        "monitord_workflow_events_per_second",
        "gauge",
        "Stampede events produced per second (recent average).",
        [({"wf_uuid": w.wf_uuid}, w.events_per_second) for w in wfs],
    )
    family(
        "monitord_workflow_events_total",
        "counter",
        "Stampede events produced.",
        [({"wf_uuid": w.wf_uuid}, w.events_total) for w in wfs],
    )
    family(
        "monitord_workflow_jobs",
        "gauge",
        "DAG nodes per state, as pegasus-status counts them.",
        [
            ({"wf_uuid": w.wf_uuid, "state": column}, w.jobs.get(column, 0))
            for w in wfs
            for column in JOB_COLUMNS
        ],
    )
    family(
        "monitord_workflow_percent_done",
        "gauge",
        "Nodes done successfully, in percent of all nodes.",
        [({"wf_uuid": w.wf_uuid}, w.percent_done) for w in wfs],
    )
    sinks = snapshot.sinks
    family(
        "monitord_sink_queued",
        "gauge",
        "Event batches waiting for the sink.",
        [({"sink": s.name}, s.queued) for s in sinks],
    )
    family(
        "monitord_sink_spooled",
        "gauge",
        "Event batches spooled to disk for the sink.",
        [({"sink": s.name}, s.spooled) for s in sinks],
    )
    family(
        "monitord_sink_failures_total",
        "counter",
        "Failed attempts to deliver to the sink.",
        [({"sink": s.name}, s.failures) for s in sinks],
    )
    family(
        "monitord_notifications_running",
        "gauge",
        "Notification scripts running.",
        [({}, snapshot.notifications_running)],
    )
    family(
        "monitord_notifications_queued",
        "gauge",
        "Notifications waiting for a free slot.",
        [({}, snapshot.notifications_queued)],
    )
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------- /status
_HEADINGS = (*JOB_COLUMNS, "%DONE", "STATE", "WORKFLOW", "WF_UUID", "LAG")

_STYLE = """
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.5em}
table{border-collapse:collapse}
th,td{padding:.2em .6em;border-bottom:1px solid #ddd;text-align:left}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tfoot td{font-weight:bold}
.failure{color:#b00}.success{color:#070}
#updated{color:#666}
"""

# Re-renders the tables from status.json every 5 s with DOM calls only (textContent: no markup
# from the data is ever interpreted).
_SCRIPT = """
(function () {
  "use strict";
  var COLS = ["UNREADY", "READY", "PRE", "QUEUED", "POST", "SUCCESS", "FAILURE"];
  function row(cells) {
    var tr = document.createElement("tr");
    cells.forEach(function (c) {
      var td = document.createElement("td");
      td.textContent = c[0];
      if (c[1]) { td.className = c[1]; }
      tr.appendChild(td);
    });
    return tr;
  }
  function pct(done, total) { return total ? (100 * done / total).toFixed(1) : "0.0"; }
  function render(s) {
    var total = {}, rows = [];
    COLS.forEach(function (c) { total[c] = 0; });
    s.workflows.forEach(function (w) {
      var cells = COLS.map(function (c) {
        var n = w.jobs[c] || 0;
        total[c] += n;
        return [String(n), "num"];
      });
      cells.push([w.percent_done.toFixed(1), "num"]);
      cells.push([w.state, w.state]);
      cells.push([w.dagman_out.split("/").pop().replace(/\\.dagman\\.out$/, ""), ""]);
      cells.push([w.wf_uuid, "uuid"]);
      cells.push([w.lag_bytes + " B / " + w.lag_seconds.toFixed(1) + " s", "num"]);
      var tr = row(cells);
      tr.setAttribute("data-wf-uuid", w.wf_uuid);
      tr.title = w.run_dir;
      rows.push(tr);
    });
    document.getElementById("wf-rows").replaceChildren.apply(
      document.getElementById("wf-rows"), rows);
    var all = 0;
    COLS.forEach(function (c) { all += total[c]; });
    var foot = COLS.map(function (c) { return [String(total[c]), "num"]; });
    foot.push([pct(total.SUCCESS, all), "num"], ["", ""], [s.workflows.length + " workflows", ""],
              ["", ""], ["", ""]);
    document.getElementById("wf-total").replaceChildren(row(foot));
    var sinks = s.sinks.map(function (k) {
      return row([[k.name, ""], [String(k.queued), "num"], [String(k.spooled), "num"],
                  [String(k.failures), "num"]]);
    });
    document.getElementById("sink-rows").replaceChildren.apply(
      document.getElementById("sink-rows"), sinks);
    document.getElementById("notifications").textContent =
      s.notifications_running + " running, " + s.notifications_queued + " queued";
    document.getElementById("updated").textContent =
      "updated " + new Date().toLocaleTimeString();
    var n = Number(document.body.getAttribute("data-refreshes") || "0") + 1;
    document.body.setAttribute("data-refreshes", String(n));
  }
  function refresh() {
    fetch("status.json", {cache: "no-store"})
      .then(function (r) { if (!r.ok) { throw new Error("HTTP " + r.status); } return r.json(); })
      .then(render)
      .catch(function (e) {
        document.getElementById("updated").textContent = "refresh failed: " + e.message;
      });
  }
  refresh();
  setInterval(refresh, 5000);
})();
"""


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode()).digest()
    return "'sha256-" + base64.b64encode(digest).decode() + "'"


STATUS_PAGE_CSP = (
    "default-src 'none'; "
    f"script-src {_csp_hash(_SCRIPT)}; "
    f"style-src {_csp_hash(_STYLE)}; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def _td(text: object, cls: str = "") -> str:
    attr = f' class="{html.escape(cls)}"' if cls else ""
    return f"<td{attr}>{html.escape(str(text))}</td>"


def _dag_name(dagman_out: str) -> str:
    name = os.path.basename(dagman_out)
    return name[: -len(".dagman.out")] if name.endswith(".dagman.out") else name


def render_status_page(snapshot: ServiceSnapshot) -> str:
    """A self-contained HTML page (no external assets) that refreshes itself from status.json."""
    esc = html.escape
    rows = []
    total = dict.fromkeys(JOB_COLUMNS, 0)
    for w in snapshot.workflows:
        cells = []
        for column in JOB_COLUMNS:
            n = w.jobs.get(column, 0)
            total[column] += n
            cells.append(_td(n, "num"))
        cells.append(_td(f"{w.percent_done:.1f}", "num"))
        cells.append(_td(w.state, w.state))
        cells.append(_td(_dag_name(w.dagman_out)))
        cells.append(_td(w.wf_uuid, "uuid"))
        cells.append(_td(f"{w.lag_bytes} B / {w.lag_seconds:.1f} s", "num"))
        rows.append(
            f'<tr data-wf-uuid="{esc(w.wf_uuid)}" title="{esc(w.run_dir)}">{"".join(cells)}</tr>'
        )
    all_nodes = sum(total.values())
    foot = [_td(total[c], "num") for c in JOB_COLUMNS]
    foot.append(_td(f"{100.0 * total['SUCCESS'] / all_nodes if all_nodes else 0.0:.1f}", "num"))
    foot += [_td(""), _td(f"{len(snapshot.workflows)} workflows"), _td(""), _td("")]
    sinks = [
        f"<tr>{_td(s.name)}{_td(s.queued, 'num')}{_td(s.spooled, 'num')}"
        f"{_td(s.failures, 'num')}</tr>"
        for s in snapshot.sinks
    ]
    headings = "".join(
        f'<th class="num">{esc(h)}</th>'
        if h in JOB_COLUMNS or h == "%DONE"
        else f"<th>{esc(h)}</th>"
        for h in _HEADINGS
    )
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(snapshot.started_at))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>monitord status</title>
<style>{_STYLE}</style>
</head><body>
<h1>monitord: followed workflows</h1>
<p>Service started {esc(started)}. <span id="updated"></span></p>
<table id="workflows"><thead><tr>{headings}</tr></thead>
<tbody id="wf-rows">{"".join(rows)}</tbody>
<tfoot id="wf-total"><tr>{"".join(foot)}</tr></tfoot></table>
<h2>Sinks</h2>
<table id="sinks"><thead><tr><th>SINK</th><th class="num">QUEUED</th><th class="num">SPOOLED</th>
<th class="num">FAILURES</th></tr></thead><tbody id="sink-rows">{"".join(sinks)}</tbody></table>
<h2>Notifications</h2>
<p id="notifications">{snapshot.notifications_running} running, \
{snapshot.notifications_queued} queued</p>
<script>{_SCRIPT}</script>
</body></html>
"""
