"""The HTML status page: one self-contained page (no external assets) served as /status.

Its inline script re-renders the tables from status.json every 5 s with DOM calls only; the
page is sent with a Content-Security-Policy that allows exactly that script and style (hashes).
Every time on it is UTC, written the same way by the server and by the script (the server's
and the reader's time zones may differ), and the page says so.
"""

from __future__ import annotations

import base64
import hashlib
import html
import os
import time

from monitord.service.status import JOB_COLUMNS, ServiceSnapshot

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
  function utc(seconds) {
    return new Date(seconds * 1000).toISOString().slice(0, 19).replace("T", " ") + " UTC";
  }
  function dagName(path) { return path.split("/").pop().replace(/\\.dagman\\.out$/, ""); }
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
      cells.push([dagName(w.dagman_out), ""]);
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
      return row([[k.name, ""], [k.state, ""], [String(k.queued), "num"],
                  [String(k.spooled), "num"], [String(k.failures), "num"]]);
    });
    document.getElementById("sink-rows").replaceChildren.apply(
      document.getElementById("sink-rows"), sinks);
    var ended = (s.finished || []).map(function (f) {
      var tr = row([[utc(f.ended_at), ""], [f.outcome, f.outcome], [String(f.events_total), "num"],
                    [dagName(f.dagman_out), ""], [f.wf_uuid, "uuid"]]);
      tr.title = f.run_dir;
      return tr;
    });
    document.getElementById("finished-rows").replaceChildren.apply(
      document.getElementById("finished-rows"), ended);
    var roots = (s.roots || []).map(function (r) {
      return row([[r.root, ""],
                  [r.exists ? "yes" : "no (" + (r.problem || "missing") + ", waiting for it)", ""],
                  [String(r.workflows), "num"]]);
    });
    document.getElementById("root-rows").replaceChildren.apply(
      document.getElementById("root-rows"), roots);
    document.getElementById("notifications").textContent =
      s.notifications_running + " running, " + s.notifications_queued + " queued";
    document.getElementById("updated").textContent = "updated " + utc(Date.now() / 1000);
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


def utc(seconds: float) -> str:
    """Epoch seconds as the page writes every time: ``2026-11-26 15:04:26 UTC``."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


def _workflow_rows(snapshot: ServiceSnapshot) -> tuple[list[str], list[str]]:
    """The workflows table's rows (job counts per state, done, state, name, lag) and its
    footer (the totals)."""
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
            f'<tr data-wf-uuid="{html.escape(w.wf_uuid)}" title="{html.escape(w.run_dir)}">'
            f"{''.join(cells)}</tr>"
        )
    all_nodes = sum(total.values())
    foot = [_td(total[c], "num") for c in JOB_COLUMNS]
    foot.append(_td(f"{100.0 * total['SUCCESS'] / all_nodes if all_nodes else 0.0:.1f}", "num"))
    foot += [_td(""), _td(f"{len(snapshot.workflows)} workflows"), _td(""), _td("")]
    return rows, foot


def _finished_rows(snapshot: ServiceSnapshot) -> list[str]:
    return [
        f'<tr title="{html.escape(f.run_dir)}">{_td(utc(f.ended_at))}{_td(f.outcome, f.outcome)}'
        f"{_td(f.events_total, 'num')}{_td(_dag_name(f.dagman_out))}{_td(f.wf_uuid, 'uuid')}</tr>"
        for f in snapshot.finished
    ]


def _sink_rows(snapshot: ServiceSnapshot) -> list[str]:
    return [
        f"<tr>{_td(s.name)}{_td(s.state)}{_td(s.queued, 'num')}{_td(s.spooled, 'num')}"
        f"{_td(s.failures, 'num')}</tr>"
        for s in snapshot.sinks
    ]


def _root_rows(snapshot: ServiceSnapshot) -> list[str]:
    """The ``[[watch]]`` roots as ``monitord status`` shows them: listed, workflows below."""
    rows = []
    for r in snapshot.roots:
        exists = "yes" if r.exists else f"no ({r.problem or 'missing'}, waiting for it)"
        rows.append(f"<tr>{_td(r.root)}{_td(exists)}{_td(r.workflows, 'num')}</tr>")
    return rows


def render_status_page(snapshot: ServiceSnapshot) -> str:
    """A self-contained HTML page (no external assets) that refreshes itself from status.json."""
    esc = html.escape
    rows, foot = _workflow_rows(snapshot)
    headings = "".join(
        f'<th class="num">{esc(h)}</th>'
        if h in JOB_COLUMNS or h == "%DONE"
        else f"<th>{esc(h)}</th>"
        for h in _HEADINGS
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>monitord status</title>
<style>{_STYLE}</style>
</head><body>
<h1>monitord: followed workflows</h1>
<p>Service started {esc(utc(snapshot.started_at))}. <span id="updated"></span>
All times are UTC.</p>
<table id="workflows"><thead><tr>{headings}</tr></thead>
<tbody id="wf-rows">{"".join(rows)}</tbody>
<tfoot id="wf-total"><tr>{"".join(foot)}</tr></tfoot></table>
<h2>Finished</h2>
<table id="finished"><thead><tr><th>ENDED</th><th>OUTCOME</th><th class="num">EVENTS</th>
<th>WORKFLOW</th><th>WF_UUID</th></tr></thead>
<tbody id="finished-rows">{"".join(_finished_rows(snapshot))}</tbody></table>
<h2>Watched roots</h2>
<table id="roots"><thead><tr><th>ROOT</th><th>EXISTS</th><th class="num">WORKFLOWS</th></tr>
</thead><tbody id="root-rows">{"".join(_root_rows(snapshot))}</tbody></table>
<h2>Sinks</h2>
<table id="sinks"><thead><tr><th>SINK</th><th>STATE</th><th class="num">QUEUED</th><th class="num">SPOOLED</th>
<th class="num">FAILURES</th></tr></thead><tbody id="sink-rows">{"".join(_sink_rows(snapshot))}</tbody></table>
<h2>Notifications</h2>
<p id="notifications">{snapshot.notifications_running} running, \
{snapshot.notifications_queued} queued</p>
<script>{_SCRIPT}</script>
</body></html>
"""
