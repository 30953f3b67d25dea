"""The files the planner writes before DAGMan starts, in the shapes Pegasus 5.0 writes them.

braindump.yml, the .dag, static.bp and the job .sub/.in files are what the daemon
reads to know the workflow before the first dagman.out line, so each has every key
and classad a real run has, in the planner's order.
"""

from __future__ import annotations

import os

from monitord.tools.synthetic.clock import planner_ts
from monitord.tools.synthetic.context import PEGASUS_VERSION, Ctx
from monitord.tools.synthetic.dag import (
    CLEANUP,
    COMPUTE,
    CREATE_DIR,
    REGISTER,
    STAGE_IN,
    STAGE_OUT,
    STDIN_FED,
    THROTTLES,
    TYPE_DESC,
    Node,
)
from monitord.tools.synthetic.filewriter import write_text


def post_cmd(ctx: Ctx, node: Node) -> str:
    lite = " -s PegasusLite:+exitcode+0" if node.kind == COMPUTE else ""
    return (
        f"{ctx.bindir}/pegasus-exitcode  -r $RETURN{lite} -l {ctx.wf_name}.exitcode.log "
        f"-M {ctx.wf_name}.cache.meta   .//{node.subdir}/{node.name}.out"
    )


def job_exec_argv(ctx: Ctx, node: Node) -> tuple[str, str | None]:
    """(executable, arguments) as the planner puts them in job.info and the .sub file."""
    ks = f"-N null -i - -R local  -L {ctx.label} -T {ctx.wf_stamp}"
    lite = f"{ctx.sharedir}/sh/pegasus-lite-local.sh"
    kick = f"{ctx.bindir}/../bin/pegasus-kickstart"
    if node.kind == COMPUTE:
        return f"{ctx.submit_dir}/{node.subdir}/{node.name}.sh", None
    if node.kind == CREATE_DIR:
        return lite, f"pegasus-kickstart  -n pegasus::dirmanager {ks} pegasus-transfer "
    if node.kind == CLEANUP:
        return lite, f"pegasus-kickstart  -n pegasus::cleanup {ks} pegasus-transfer "
    if node.kind == STAGE_OUT:
        return lite, (
            f"{kick}  -n pegasus::transfer {ks} {ctx.bindir}/../bin/pegasus-transfer  --threads 2 -m 1"
        )
    if node.kind == STAGE_IN:
        return (
            kick,
            f" -n pegasus::transfer {ks} {ctx.bindir}/../bin/pegasus-transfer  --threads 2 ",
        )
    return kick, (  # REGISTER
        f" -n pegasus::rc-client -N null -R local  -L {ctx.label} -T {ctx.wf_stamp} "
        f"{ctx.bindir}/pegasus-rc-client --prefix pegasus.catalog.replica.output "
        f"--conf {ctx.submit_dir}/{ctx.properties} -v --insert {ctx.submit_dir}/{node.subdir}/{node.name}.in"
    )


def write_braindump(ctx: Ctx) -> None:
    """All the keys the planner writes, in its order."""
    base = os.path.dirname(ctx.submit_dir)
    write_text(
        f"{ctx.submit_dir}/braindump.yml",
        f'user: "{ctx.user}"\n'
        "grid_dn: null\n"
        f'submit_hostname: "{ctx.submit_host}"\n'
        f'root_wf_uuid: "{ctx.wf_uuid}"\n'
        f'wf_uuid: "{ctx.wf_uuid}"\n'
        f'dax: "{base}/workflow.yml"\n'
        f'dax_label: "{ctx.label}"\n'
        'dax_index: "0"\n'
        'dax_version: "5.0.4"\n'
        f'pegasus_wf_name: "{ctx.wf_name}"\n'
        f'timestamp: "{ctx.wf_time}"\n'
        f'basedir: "{base}"\n'
        f'submit_dir: "{ctx.submit_dir}"\n'
        f'planner: "{ctx.bindir}/pegasus-plan"\n'
        f'planner_version: "{PEGASUS_VERSION}"\n'
        'pegasus_build: "20230217201750Z"\n'
        'planner_arguments: "\\"--conf pegasus.properties --dir submit --sites condorpool '
        '--output-sites local --cleanup inplace --force workflow.yml \\""\n'
        'jsd: "jobstate.log"\n'
        f'rundir: "{os.path.basename(ctx.submit_dir)}"\n'
        f'bindir: "{ctx.bindir}"\n'
        'vogroup: "pegasus"\n'
        'uses_pmc: "false"\n'
        f'properties: "{ctx.properties}"\n'
        f'condor_log: "{ctx.wf_name}.log"\n'
        f'dag: "{ctx.dag}"\n'
        'type: "dag"\n'
        f'notify: "{ctx.wf_name}.notify"\n',
    )


def write_dag(ctx: Ctx, nodes: list[Node]) -> int:
    """The planner's .dag, streamed; returns its line count."""
    rule = "#" * 70
    count = 0
    with open(f"{ctx.submit_dir}/{ctx.dag}", "w", encoding="utf-8", buffering=1 << 20) as fh:
        head = [rule, "# PEGASUS WMS GENERATED DAG FILE", f"# DAG {ctx.label}"]
        head += ["# Index = 0, Count = null", rule]
        head += [f"MAXJOBS {cat} {n}" for cat, n in THROTTLES.items()]
        fh.write("\n".join(head) + "\n\n")
        count += len(head) + 1
        for node in nodes:
            name = node.name
            category = f"CATEGORY {name} {node.category}\n" if node.category else ""
            fh.write(
                f"JOB {name} {node.subdir}/{name}.sub\n"
                f"SCRIPT POST {name} {post_cmd(ctx, node)}\n"
                f"PRIORITY {name} {node.priority}\n"
                f"RETRY {name} 1\n"
                f"{category}"
                f'VARS {name} +DAGNodeRetry="$(RETRY)"\n\n'
            )
            count += 6 + (1 if category else 0)
        for node in nodes:
            for child in node.children:
                fh.write(f"PARENT  {node.name} CHILD {child.name}\n")
                count += 1
        fh.write(f"{rule}\n# End of DAG\n{rule}\n")
    return count + 3


def _bp(value: str) -> str:
    return '"' + value.replace('"', '\\"') + '"'


def write_static_bp(ctx: Ctx, nodes: list[Node]) -> None:
    """task.info/task.edge, the metadata block, job.info, wf.map.task_job, job.edge."""
    rng = ctx.rng
    clock = rng.uniform(100_000.0, 5_000_000.0)  # planner's monotonic clock, seconds
    xid = f"xwf.id={ctx.wf_uuid}"
    path = f"{ctx.submit_dir}/{ctx.wf_name}.static.bp"
    with open(path, "w", encoding="utf-8", buffering=1 << 20) as fh:
        rand = rng.random

        def emit(body: str, step: float = 0.00015) -> None:
            nonlocal clock
            clock += step * (0.5 + rand())
            fh.write(f"ts={planner_ts(clock)} {body}\n")

        computes = [n for n in nodes if n.kind == COMPUTE]
        for n in computes:
            emit(
                f'event=task.info {xid} task.id="{n.task}" type="1" type_desc="compute" '
                f"transformation={_bp(n.xform)} argv={_bp(n.argv)}"
            )
        for n in computes:
            for c in n.children:
                if c.kind == COMPUTE:
                    emit(
                        f'event=task.edge {xid} parent.task.id="{n.task}" child.task.id="{c.task}"'
                    )
        emit(f"event=static.meta.start {xid}", 0.02)
        emit(f'event=xwf.meta {xid} key="wf.api" value="python"')
        for n in computes:
            if n.xform == "analyze":
                emit(f'event=task.meta {xid} task.id="{n.task}" key="stage" value="merge"')
        seen: set[str] = set()
        for n in computes:
            for lfn, size in n.inputs:
                if lfn not in seen and n.parents and n.parents[0].kind != COMPUTE:
                    seen.add(lfn)
                    emit(f'event=rc.meta {xid} lfn.id="{lfn}" key="size" value="{size}"')
        for n in computes:
            for lfn, _ in n.inputs + n.outputs:
                emit(f'event=wf.map.file {xid} lfn.id="{lfn}" task.id="{n.task}"')
        emit(f"event=static.meta.end {xid}")
        clock += 0.17
        for n in nodes:
            executable, argv = job_exec_argv(ctx, n)
            argv_attr = f" argv={_bp(argv)}" if argv is not None else ""
            emit(
                f'event=job.info {xid} job.id="{n.name}" submit_file="{n.subdir}/{n.name}.sub" '
                f'type="{n.kind}" type_desc="{TYPE_DESC[n.kind]}" clustered="0" max_retries="1" '
                f'executable="{executable}"{argv_attr} task_count="{1 if n.kind == COMPUTE else 0}"',
                0.0003,
            )
        for n in computes:
            emit(f'event=wf.map.task_job {xid} job.id="{n.name}" task.id="{n.task}"')
        for n in nodes:
            for c in n.children:
                emit(f'event=job.edge {xid} parent.job.id="{n.name}" child.job.id="{c.name}"')


def write_sub(ctx: Ctx, node: Node) -> None:
    """A job submit file with all the +pegasus_* classads."""
    name = node.name
    executable, argv = job_exec_argv(ctx, node)
    head = (
        "######################################################################\n"
        "# PEGASUS WMS GENERATED SUBMIT FILE\n"
        f"# DAG : {ctx.label}, Index = 0, Count = null\n"
        f"# SUBMIT FILE NAME : {name}.sub\n"
        "######################################################################\n"
        "stream_error  = false\n"
        "stream_output = false\n"
    )
    ident = (
        f"CONDOR_JOBID=$(cluster).$(process) PEGASUS_WF_UUID={ctx.wf_uuid} "
        f"PEGASUS_WF_LABEL={ctx.label} PEGASUS_DAG_JOB_ID={name}"
    )
    if node.kind == COMPUTE:
        body, site = _compute_body(ctx, node, executable, ident), "condorpool"
    else:
        body, site = _local_body(ctx, node, executable, argv, ident), "local"
    ctx.sink(f"{ctx.submit_dir}/{node.subdir}/{name}.sub", head + body + _classads(ctx, node, site))


def _compute_body(ctx: Ctx, node: Node, executable: str, ident: str) -> str:
    """A compute job's submit commands: vanilla universe on the pool, files transferred."""
    sd, name = ctx.submit_dir, node.name
    outs = ",".join(lfn for lfn, _ in node.outputs)
    ins = ",".join(f"{sd}/{lfn}" for lfn, _ in node.inputs)
    return (
        f'environment = "LANG=en_US.UTF-8 {ident} PEGASUS_SITE=condorpool"\n'
        "+WantIOProxy = True\n"
        f"error = {sd}//{node.subdir}/{name}.err\n"
        f"executable = {executable}\n"
        f"initialdir = {ctx.scratch}\n"
        f"log = {sd}/{ctx.wf_name}.log\n"
        "notification = NEVER\n"
        f"output = {sd}//{node.subdir}/{name}.out\n"
        "periodic_release = False\n"
        "periodic_remove = (JobStatus == 5) && ((CurrentTime - EnteredCurrentStatus) > 10)\n"
        f"priority = {node.priority}\n"
        "request_memory = 1024\n"
        "should_transfer_files = YES\n"
        "submit_event_user_notes = pool:condorpool\n"
        "transfer_executable = true\n"
        f"transfer_input_files = {sd}/pegasus-worker-{PEGASUS_VERSION}-x86_64_rhel_8.tar.gz,"
        f"{sd}/pegasus-lite-common.sh,{ins}\n"
        f"transfer_output_files = {outs}\n"
        "universe = vanilla\n"
        "when_to_transfer_output = ON_EXIT\n"
    )


def _local_body(ctx: Ctx, node: Node, executable: str, argv: str | None, ident: str) -> str:
    """An auxiliary job's submit commands: local universe, Pegasus's own tools."""
    sd, name = ctx.submit_dir, node.name
    env_path = (
        f" PATH={ctx.bindir}:/usr/local/bin:/usr/bin:/usr/local/sbin:/usr/sbin"
        if node.kind != STAGE_IN
        else ""
    )
    stdin = f"input = {sd}//{node.subdir}/{name}.in\n" if node.kind in STDIN_FED else ""
    connect = (
        " _PEGASUS_CONNECT_STDIN=true" if node.kind in (CREATE_DIR, CLEANUP, STAGE_OUT) else ""
    )
    return (
        f'environment = "LANG=en_US.UTF-8{env_path} {ident} PEGASUS_SITE=local '
        f'PEGASUS_BIN_DIR={ctx.bindir}{connect}"\n'
        f'arguments = "{argv}"\n'
        f"error = {sd}//{node.subdir}/{name}.err\n"
        f"executable = {executable}\n"
        f"{stdin}"
        f"log = {sd}/{ctx.wf_name}.log\n"
        "notification = NEVER\n"
        f"output = {sd}//{node.subdir}/{name}.out\n"
        "periodic_release = False\n"
        "periodic_remove = (JobStatus == 5) && ((CurrentTime - EnteredCurrentStatus) > 1800)\n"
        f"priority = {node.priority}\n"
        "submit_event_user_notes = pool:local\n"
        "transfer_executable = false\n"
        "universe = local\n"
    )


def _classads(ctx: Ctx, node: Node, site: str) -> str:
    """The +pegasus_* classads and the submit file's end."""
    return (
        '+pegasus_generator = "Pegasus"\n'
        f'+pegasus_root_wf_uuid = "{ctx.wf_uuid}"\n'
        f'+pegasus_wf_uuid = "{ctx.wf_uuid}"\n'
        f'+pegasus_version = "{PEGASUS_VERSION}"\n'
        f'+pegasus_wf_name = "{ctx.wf_name}"\n'
        f'+pegasus_wf_time = "{ctx.wf_time}"\n'
        f'+pegasus_wf_xformation = "{node.xform}"\n'
        f'+pegasus_wf_dax_job_id = "{node.task or "null"}"\n'
        f'+pegasus_wf_dag_job_id = "{node.name}"\n'
        f"+pegasus_job_class = {node.kind}\n"
        f'+pegasus_site = "{site}"\n'
        "+pegasus_job_runtime = 0\n"
        "+pegasus_cores = 1\n"
        "+pegasus_gpus = 1\n"
        "+pegasus_cluster_size = 1\n"
        "queue\n"
        "######################################################################\n"
        "# END OF SUBMIT FILE\n"
        "######################################################################\n"
    )


def write_in(ctx: Ctx, node: Node) -> None:
    """A register job's stdin: the lfn/pfn list monitord turns into rc.pfn events.

    Transfer jobs also have JSON ``.in`` specs in a real run, but nothing reads
    them after the run; at ~100 us per file creation they are left out.
    """
    if node.kind != REGISTER:
        return
    text = "".join(f'{lfn} file://{ctx.output_dir}/{lfn} site="local"\n' for lfn, _ in node.inputs)
    ctx.sink(f"{ctx.submit_dir}/{node.subdir}/{node.name}.in", text)


def write_aux(ctx: Ctx) -> None:
    """Files the planner leaves beside the DAG (not read by monitord, there for realism)."""
    sd = ctx.submit_dir
    write_text(
        f"{sd}/{ctx.properties}",
        "#Pegasus USER PROPERTIES AT RUNTIME\n#ESCAPES IN VALUES ARE INTRODUCED\n"
        f"pegasus.home.sharedstatedir={ctx.sharedir}\n"
        "pegasus.catalog.replica.output=JDBCRC\n"
        f"pegasus.home.bindir={ctx.bindir}\n"
        "dagman.maxpre=1\n"
        "pegasus.catalog.replica.output.db.driver=sqlite\n"
        f"pegasus.catalog.replica.output.db.url=jdbc\\:sqlite\\:{sd}/{ctx.wf_name}.replicas.db\n"
        "pegasus.transfer.worker.package=true\n"
        "pegasus.transfer.arguments=-m 1\n",
    )
    write_text(f"{sd}/{ctx.wf_name}.notify", "")
    write_text(f"{sd}/{ctx.dag}.lib.err", "")
    write_text(
        f"{sd}/{ctx.dag}.condor.sub",
        f"# Filename: {ctx.dag}.condor.sub\n# Generated by condor_submit_dag {ctx.dag}\n"
        "universe\t= scheduler\nexecutable\t= /usr/bin/condor_dagman\ngetenv\t\t= True\n"
        f"output\t\t= {ctx.dag}.lib.out\nerror\t\t= {ctx.dag}.lib.err\n"
        f"log\t\t= {ctx.dag}.dagman.log\nremove_kill_sig\t= SIGUSR1\n"
        f'arguments\t= "-p 0 -f -l . -Lockfile {ctx.dag}.lock -AutoRescue 1 -DoRescueFrom 0 '
        f'-Dag {ctx.dag} -MaxPost 20 -Suppress_notification -Dagman /usr/bin/condor_dagman"\n'
        f'+pegasus_wf_uuid="{ctx.wf_uuid}"\n+pegasus_root_wf_uuid="{ctx.wf_uuid}"\n'
        f'+pegasus_wf_name="{ctx.wf_name}"\n+pegasus_wf_time="{ctx.wf_time}"\n'
        f'+pegasus_version="{PEGASUS_VERSION}"\n+pegasus_job_class=11\n'
        '+pegasus_cluster_size=1\n+pegasus_site="local"\n'
        '+pegasus_execution_sites="condorpool"\n+pegasus_wf_xformation="pegasus::dagman"\nqueue\n',
    )
