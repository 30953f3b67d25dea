"""``monitord serve``: one asyncio process following every workflow of a submit host.

Three ways in — the attach socket (``monitord attach`` and the ``pegasus-monitord
-N`` drop-in), watched root directories, and the persisted list of the previous
run — all end in :meth:`Service.follow`, which runs the per-workflow daemon's
code (:mod:`monitord.service.workflows`) as one task per root workflow.

Sharing: one file watcher (:mod:`.watcher`), a few sink lanes with one engine per
database server (:mod:`.sinkpool`), one thread pool for parsing.  Isolation:
each workflow's errors stay in its task (logged with its ``wf_uuid``), its reads
come in bounded slices, and its sinks hold a bounded queue on a round-robin lane.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import structlog

from monitord.core.readers.braindump import BraindumpError, read_braindump
from monitord.core.readers.default_db import default_db_url
from monitord.daemon.config import MonitorConfig
from monitord.daemon.resume import ResumeStore
from monitord.service.attached import stream_until_end
from monitord.service.config import ServiceConfig
from monitord.service.discovery import file_stamp, found_config, root_warning
from monitord.service.finished import FinishedWorkflows, ended_item
from monitord.service.peer import NotAllowed, check_attach, dashboard_allowed, peer_credentials
from monitord.service.protocol import (
    MAX_LINE,
    ProtocolError,
    config_from_dict,
    config_to_dict,
    decode,
    encode,
)
from monitord.service.scan import RootScanner
from monitord.service.sinkpool import SinkPool
from monitord.service.snapshot import service_snapshot, undelivered_events
from monitord.service.sockets import activated_socket, sdnotify_module, socket_answers
from monitord.service.store import Entry, FollowedStore
from monitord.service.watcher import FileWatcher
from monitord.service.workflows import Followed, root_finished, run_followed

log = structlog.get_logger("monitord.service")

FOLLOWERS_STOP_SECONDS = 30.0  # service stop: the longest wait for the followers' last chunk
RESUME_DIR = "resume"  # under the state directory: the snapshots (monitord/daemon/resume.py)


class ServiceError(Exception):
    """The service cannot start (socket in use, state dir not writable...)."""


class Refused(Exception):
    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class Service:
    def __init__(self, cfg: ServiceConfig) -> None:
        self.cfg = cfg
        self.started_at = time.time()
        self.followed: dict[str, Followed] = {}
        self.store = FollowedStore(cfg.state_dir)
        self.resume = ResumeStore(os.path.join(cfg.state_dir, RESUME_DIR))
        self.watcher = FileWatcher(
            poll_seconds=cfg.limits.poll_seconds, idle_seconds=cfg.limits.idle_check_seconds
        )
        self.pool: SinkPool | None = None
        self.stopping = False
        self.scanners = [RootScanner(w.root, w.pattern, w.max_depth) for w in cfg.watch]
        self._judged: dict[str, tuple[int, int]] = {}  # scanner: dagman.out -> (size, mtime)
        self._root_problems: dict[str, str | None] = {}  # watched root -> last problem logged
        self._stop: asyncio.Event | None = None
        self._server: asyncio.AbstractServer | None = None
        self._http: asyncio.AbstractServer | None = None
        self._background: list[asyncio.Task[Any]] = []
        self._dirty = False
        self.finished = FinishedWorkflows(cfg.keep_finished_seconds)
        self._saving: asyncio.Lock | None = None
        self._clients: set[asyncio.Task[Any]] = set()  # connections being served

    # ------------------------------------------------------------------ life cycle
    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(
            ThreadPoolExecutor(self.cfg.limits.worker_threads, thread_name_prefix="wf")
        )
        self._stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._stop.set)
        loop.add_signal_handler(signal.SIGHUP, lambda: log.info("SIGHUP ignored"))
        try:
            await asyncio.to_thread(self.store.prepare)
        except OSError as exc:
            raise ServiceError(f"state_dir {self.cfg.state_dir}: {exc.strerror}") from None
        self.pool = SinkPool(
            self.cfg.limits.sink_threads, keep_ended=self.cfg.keep_finished_seconds
        )
        self.watcher.start()
        await self._listen()
        entries, ended = await asyncio.to_thread(self.store.load)
        self.finished.load(ended)
        for entry in entries:
            try:
                config = config_from_dict(entry.config)
            except ProtocolError as exc:
                log.error("cannot resume workflow", dagman_out=entry.dagman_out, error=str(exc))
                continue
            self.follow(config, source="restart", uid=entry.uid, previous=entry.source)
        self._background.append(asyncio.create_task(self._persist_loop(), name="persist"))
        if self.scanners:
            self._background.append(asyncio.create_task(self._scan_loop(), name="scan"))
        await self._start_http()
        sdnotify = sdnotify_module()
        if sdnotify is not None:
            sdnotify.sd_notify(f"READY=1\nSTATUS=following {len(self.followed)} workflows")
            self._background.append(
                asyncio.create_task(sdnotify.watchdog_loop(self._stop), name="watchdog")
            )
        log.info(
            "service started",
            socket=self.cfg.socket,
            workflows=len(self.followed),
            inotify=self.watcher.inotify,
            http=self.cfg.http_listen or None,
        )
        await self._stop.wait()
        await self.shutdown()
        return 0

    async def shutdown(self) -> None:
        """Stop following without ending: every workflow resumes after the next start."""
        self.stopping = True
        sdnotify = sdnotify_module()
        if sdnotify is not None:
            sdnotify.sd_notify("STOPPING=1")
        log.info("service stopping", workflows=len(self.followed))
        if self._server is not None:
            self._server.close()
        for item in list(self.followed.values()):
            if item.monitor is not None:
                item.monitor.shutting_down = True
            item.stop.set()
        # Every follower stops and takes its last resume snapshot while the deliveries still
        # take batches; then they stop, leaving what they could not write spooled.
        over = [
            asyncio.ensure_future(item.monitor.following_over.wait())
            for item in self.followed.values()
            if item.monitor is not None
        ]
        if over:
            _, late = await asyncio.wait(over, timeout=FOLLOWERS_STOP_SECONDS)
            for waiter in late:
                waiter.cancel()
        if self.pool is not None:
            self.pool.begin_close()  # workflows still delivering leave the rest spooled
        self.watcher.close()
        tasks = [item.task for item in self.followed.values() if item.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=120)
        await self.save(final=True)  # workflows that ended during the stop are not resumed
        for item in list(self.followed.values()):
            item.notify({"event": "stopping"})
        for task in self._background:
            task.cancel()
        if self._http is not None:
            self._http.close()
        await self._close_clients()
        if self.pool is not None:
            await asyncio.to_thread(self.pool.close)
        with contextlib.suppress(OSError):
            if self._owns_socket:
                os.unlink(self.cfg.socket)
        log.info("service stopped")

    async def _close_clients(self) -> None:
        """End the connections still served (they were told "stopping"), before the loop goes."""
        clients = list(self._clients)
        if not clients:
            return
        _, pending = await asyncio.wait(clients, timeout=2)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=2)

    async def _listen(self) -> None:
        self._owns_socket = False
        sock = activated_socket()
        if sock is not None:
            self._server = await asyncio.start_unix_server(self._client, sock=sock, limit=MAX_LINE)
            return
        path = self.cfg.socket
        os.makedirs(os.path.dirname(path) or ".", mode=0o755, exist_ok=True)
        if os.path.exists(path):
            if await socket_answers(path):
                raise ServiceError(f"{path}: another service is listening there")
            os.unlink(path)
        self._server = await asyncio.start_unix_server(self._client, path=path, limit=MAX_LINE)
        os.chmod(path, self.cfg.socket_mode)
        self._owns_socket = True

    async def _start_http(self) -> None:
        if not self.cfg.http_listen:
            return
        try:
            from monitord.service.http import start_http
        except ImportError:
            log.warning("no HTTP endpoint in this build")
            return
        try:
            self._http = await start_http(self, self.cfg.http_listen)
        except (OSError, ValueError) as exc:
            log.error("HTTP endpoint disabled", listen=self.cfg.http_listen, error=str(exc))

    # ------------------------------------------------------------------ following
    def follow(
        self, config: MonitorConfig, *, source: str, uid: int, previous: str | None = None
    ) -> tuple[Followed, bool]:
        """Follow ``config.dagman_out`` unless it is followed already; (item, existing)."""
        key = os.path.realpath(os.path.abspath(config.dagman_out))
        item = self.followed.get(key)
        if item is not None and item.exit_code is None:
            return item, True
        if len(self.followed) >= self.cfg.limits.max_workflows:
            raise Refused(f"the service follows {len(self.followed)} workflows already (limit)")
        config = dataclasses.replace(config, dagman_out=key, replay=False)
        item = Followed(key, config, previous or source, uid)
        try:
            item.wf_uuid = read_braindump(os.path.dirname(key)).wf_uuid
        except BraindumpError:
            item.wf_uuid = None
        assert self.pool is not None
        item.task = asyncio.create_task(
            run_followed(
                item,
                watcher=self.watcher,
                pool=self.pool,
                shutting_down=lambda: self.stopping,
                resume=self.resume,
            ),
            name=f"wf:{key}",
        )
        item.task.add_done_callback(functools.partial(self._ended, item))
        self.followed[key] = item
        self._dirty = True
        return item, False

    def _ended(self, item: Followed, task: asyncio.Task[int]) -> None:
        if task.cancelled():
            code = 1
        elif task.exception() is not None:
            code = 1
        else:
            code = task.result()
        if self.stopping and (not root_finished(item) or undelivered_events(item)):
            # stays in the persisted list: resumed by the next start (which delivers the
            # spool of a workflow that ended but whose events were not all delivered)
            return
        # (A workflow that reached its end while the service stops is ended for good: the
        # final save of shutdown() leaves it out, or the next start would follow it again.)
        item.exit_code = code
        if self.followed.get(item.dagman_out) is item:
            del self.followed[item.dagman_out]
            self._dirty = True
        stamp = file_stamp(item.dagman_out)
        self._judged[item.dagman_out] = stamp
        self.finished.record(item, code, stamp)
        self._dirty = True
        # Saved before the clients hear of it: a restart must not resume an ended workflow.
        saving = asyncio.ensure_future(self.save())
        saving.add_done_callback(
            lambda _t: item.notify({"event": "ended", "exit_code": code, "error": item.error})
        )

    def interrupt(self, item: Followed) -> None:
        """Like SIGINT to the per-workflow daemon: end the workflow now, exit code 1."""
        item.stop.set()
        if item.monitor is not None:
            for stats in item.monitor.stats:
                self.watcher.poke(stats.tracked.dagman_out)

    async def _persist_loop(self) -> None:
        while True:
            await asyncio.sleep(0.2)
            if self._dirty:
                await self.save()

    async def save(self, *, final: bool = False) -> None:
        """Write the followed list now (one writer at a time; once stopping, only the final one).

        While the service stops, the workflows interrupted by the stop must stay listed, so
        the saves of the stop are skipped; ``shutdown`` makes one last save after every task
        has ended, which drops only the workflows that did reach their end meanwhile.
        """
        if self._saving is None:
            self._saving = asyncio.Lock()
        async with self._saving:
            if (self.stopping and not final) or not self._dirty:
                return
            self._dirty = False
            self.finished.expire()
            entries = [
                Entry(i.dagman_out, config_to_dict(i.config), i.source, i.uid)
                for i in self.followed.values()
            ]
            ended = self.finished.entries()
            try:
                await asyncio.to_thread(self.store.save, entries, ended)
            except OSError as exc:
                log.error("cannot save the followed workflows", error=str(exc))

    # ------------------------------------------------------------------ the socket
    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._clients.add(task)
        try:
            await self._serve_client(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # The loop is going away (service stop).  Swallowed, not re-raised: asyncio's
            # stream server asks a finished client task for its exception, and a
            # cancelled one would make it print a traceback.
            pass
        except Exception as exc:  # a client never takes the service down
            log.error("client handling failed", error=repr(exc))
        finally:
            writer.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()
            self._clients.discard(task)  # type: ignore[arg-type]

    async def _serve_client(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        sock = writer.get_extra_info("socket")
        try:
            peer = peer_credentials(sock)
        except OSError as exc:
            writer.write(encode({"event": "refused", "message": f"no peer credentials: {exc}"}))
            return
        try:
            line = await asyncio.wait_for(reader.readline(), 30)
        except (TimeoutError, ValueError):
            return
        if not line:
            return
        try:
            request = decode(line)
            op = request.get("op")
            if op == "ping":
                writer.write(encode({"event": "pong", "workflows": len(self.followed)}))
                return
            if op != "attach":
                raise ProtocolError(f"unknown op {op!r}")
            if self.stopping:
                raise Refused("the service is stopping")
            item, existing = await self._attach(request, peer.uid)
            await self.save()  # accepted means: resumed after a restart, too
        except (ProtocolError, NotAllowed) as exc:
            writer.write(encode({"event": "refused", "message": str(exc), "exit_code": 1}))
            await writer.drain()
            return
        except Refused as exc:
            msg = {"event": "refused", "message": str(exc), "exit_code": exc.exit_code}
            writer.write(encode(msg))
            await writer.drain()
            return
        log.info(
            "workflow attached",
            dagman_out=item.dagman_out,
            uid=peer.uid,
            pid=peer.pid,
            existing=existing,
            wf_uuid=item.wf_uuid,
        )
        accepted = {"event": "accepted", "wf_uuid": item.wf_uuid, "existing": existing}
        if item.exit_code is not None:
            accepted["outcome"] = item.outcome or "unknown"  # it had ended already
        writer.write(encode(accepted))
        await writer.drain()
        if request.get("wait"):
            await stream_until_end(item, reader, writer, self.interrupt)

    async def _attach(self, request: dict[str, Any], uid: int) -> tuple[Followed, bool]:
        config = config_from_dict(request.get("config"))
        dagman_out = config.dagman_out
        if not os.path.isabs(dagman_out):
            raise ProtocolError("dagman_out must be an absolute path")
        if not dagman_out.endswith(".dagman.out"):
            raise Refused(f"{dagman_out}: not a DAGMan output file (*.dagman.out)")
        run_dir = os.path.dirname(dagman_out)
        if not os.path.isdir(run_dir):
            raise Refused(f"{run_dir}: no such directory")
        try:
            bd = await asyncio.to_thread(read_braindump, run_dir)
        except BraindumpError as exc:
            raise Refused(f"{run_dir} is not a Pegasus submit directory: {exc}") from None
        default_db = default_db_url(run_dir, bd) if bd.wf_uuid and bd.dag else None
        check_attach(uid, config, default_db)
        config = dataclasses.replace(config, dashboard=dashboard_allowed(uid, config))
        key = os.path.realpath(dagman_out)
        source = (
            request.get("source") if request.get("source") in ("attach", "dropin") else "attach"
        )
        ended = self.finished.unchanged(key)
        # A workflow that ended and whose dagman.out has not grown since is over: a client
        # back after a service restart, or anyone attaching it again, gets its outcome.  (The
        # drop-in comes first for a rescue DAG, before its DAGMan writes: it is followed.)
        if (
            ended is not None
            and key not in self.followed
            and (request.get("reattach") or source == "attach")
        ):
            log.info("workflow already ended", dagman_out=key, outcome=ended.outcome)
            return ended_item(key, config, uid, ended), True
        return self.follow(config, source=str(source), uid=uid)

    # ------------------------------------------------------------------ watched roots
    async def _scan_loop(self) -> None:
        while not self.stopping:
            try:
                found = await asyncio.to_thread(self._scan_once)
            except Exception as exc:
                log.error("scan of the watched roots failed", error=repr(exc))
                found = []
            self._report_roots()
            for dagman_out, config in found:
                if self.stopping:
                    break
                try:
                    self.follow(config, source="watch", uid=0)
                    log.info("new workflow found", dagman_out=dagman_out)
                except Refused as exc:
                    log.warning("workflow not followed", dagman_out=dagman_out, error=str(exc))
            await asyncio.sleep(self.cfg.limits.scan_interval_seconds)

    def _report_roots(self) -> None:
        """A warning when a watched root cannot be listed (at start-up too), a line when it can
        again: one line per change, not one per scan."""
        for scanner in self.scanners:
            if not scanner.scanned:
                continue
            previous = self._root_problems.get(scanner.root, "")  # "": not scanned before
            now = scanner.problem
            if now == previous:
                continue
            self._root_problems[scanner.root] = now
            if now is not None:
                log.warning(root_warning(scanner.root, now, self.cfg), root=scanner.root)
            elif previous:
                log.info(
                    "watched root can be listed, following the workflows below it",
                    root=scanner.root,
                )

    def _scan_once(self) -> list[tuple[str, MonitorConfig]]:
        """(runs in a thread) dagman.outs below the watched roots that nobody follows yet."""
        found = []
        for scanner in self.scanners:
            for path in scanner.scan():
                key = os.path.realpath(path)
                if key in self.followed:
                    continue
                stamp = file_stamp(key)
                if self._judged.get(key) == stamp:
                    continue
                self._judged[key] = stamp
                config = found_config(key, self.cfg)
                if config is not None:
                    found.append((key, config))
        return found

    # ------------------------------------------------------------------ status
    def snapshot(self) -> Any:
        snap = service_snapshot(self.followed, self.pool, self.started_at, self.scanners)
        if self.finished.expire():
            self._dirty = True
        snap.finished = self.finished.statuses()
        return snap


async def serve(cfg: ServiceConfig) -> int:
    return await Service(cfg).run()
