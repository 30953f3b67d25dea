"""A per-workflow job summary file, kept up to date from monitord's events.

Written only against the pegasus-monitord plugin contract: ``start(props, restart)``,
``handle_event(event, kw)``, ``tick()``, ``stop()``.
"""

import json
import os
import time

PREFIX = "pegasus.monitord.plugins.job_summary."

# The last event of a job instance decides its state.
STATES = {
    "stampede.job_inst.submit.start": "submitted",
    "stampede.job_inst.submit.end": "submitted",
    "stampede.job_inst.held.start": "held",
    "stampede.job_inst.held.end": "submitted",
    "stampede.job_inst.main.start": "running",
    "stampede.job_inst.main.term": "running",
    "stampede.job_inst.pre.start": "pre-script",
    "stampede.job_inst.post.start": "post-script",
}


class JobSummaryPlugin:
    event_filter = ("stampede.xwf.", "stampede.wf.plan", "stampede.job_inst.")

    def start(self, props, restart=False, **kwargs):
        cfg = props.propertyset(PREFIX, remove=True)
        self.dir = cfg.get("dir") or os.getcwd()
        os.makedirs(self.dir, exist_ok=True)
        self.interval = float(cfg.get("tick_interval") or 0)
        self.workflows = {}  # xwf.id -> summary
        self.dirty = set()
        if not restart:
            self._load()

    # --- events ---
    def handle_event(self, event, kw):
        wf_id = kw.get("xwf__id")
        if not wf_id:
            return
        wf = self.workflows.get(wf_id)
        if wf is None:
            wf = self.workflows[wf_id] = {
                "wf_uuid": wf_id,
                "root_wf_uuid": kw.get("root__xwf__id"),
                "label": None,
                "state": "planned",
                "status": None,
                "jobs": {},
                "failed": [],
                "updated": None,
            }
        if event == "stampede.wf.plan":
            wf["label"] = kw.get("dax__label")
            wf["root_wf_uuid"] = kw.get("root__xwf__id") or wf["root_wf_uuid"]
        elif event == "stampede.xwf.start":
            wf["state"] = "running"
        elif event == "stampede.xwf.end":
            wf["state"] = "finished"
            wf["status"] = kw.get("status")
        elif event.startswith("stampede.job_inst."):
            self._job(wf, event, kw)
        wf["updated"] = kw.get("ts")
        self.dirty.add(wf_id)
        if self.interval <= 0:
            self._write()

    def _job(self, wf, event, kw):
        key = f"{kw.get('job__id')}/{kw.get('job_inst__id')}"
        if event == "stampede.job_inst.main.end":
            ok = str(kw.get("status")) == "0"
            wf["jobs"][key] = "succeeded" if ok else "failed"
            if not ok:
                wf["failed"].append(
                    {"job": kw.get("job__id"), "exitcode": kw.get("exitcode"), "ts": kw.get("ts")}
                )
        elif event == "stampede.job_inst.post.end" and str(kw.get("status")) not in ("0", "None"):
            wf["jobs"][key] = "failed"
        elif event in STATES and wf["jobs"].get(key) not in ("succeeded", "failed"):
            wf["jobs"][key] = STATES[event]

    def tick(self):
        self._write()

    def stop(self):
        self._write()

    # --- files ---
    def _path(self, wf_id):
        return os.path.join(self.dir, f"{wf_id}.job-summary.json")

    def _write(self):
        for wf_id in sorted(self.dirty):
            wf = self.workflows[wf_id]
            counts = {}
            for state in wf["jobs"].values():
                counts[state] = counts.get(state, 0) + 1
            doc = {k: v for k, v in wf.items() if k != "jobs"}
            doc["job_counts"] = dict(sorted(counts.items()))
            doc["written"] = time.time()
            doc["_jobs"] = wf["jobs"]
            path = self._path(wf_id)
            with open(path + ".tmp", "w", encoding="utf-8") as fh:
                json.dump(doc, fh, indent=1, sort_keys=True)
            os.replace(path + ".tmp", path)
        self.dirty.clear()

    def _load(self):
        """A resumed daemon continues the summaries it left (events do not start over)."""
        for name in os.listdir(self.dir):
            if name.endswith(".job-summary.json"):
                try:
                    with open(os.path.join(self.dir, name), encoding="utf-8") as fh:
                        doc = json.load(fh)
                    doc["jobs"] = doc.pop("_jobs", {})
                    doc.pop("job_counts", None)
                    doc.pop("written", None)
                    self.workflows[doc["wf_uuid"]] = doc
                except (OSError, ValueError, KeyError):
                    continue
