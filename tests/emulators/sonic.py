"""Community SONiC emulator: CONFIG_DB JSON, Generic Config Updater commands.

Prompt ``admin@<hostname>:~$ `` (netmiko ``linux`` driver).  ``sudo config apply-patch``
applies an RFC 6902 patch with the ``jsonpatch`` package; like GCU it refuses a patch that
leaves an empty table, and an optional ``options["validate"]`` callable (CONFIG_DB dict →
list of error strings, e.g. a YANG check) can reject it.  Checkpoints are JSON files in
the sandbox under ``/etc/sonic/checkpoints/<name>.cp.json``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

import jsonpatch

from .minishell import LinuxDevice, LinuxSession


def factory_db(hostname: str, ports: int = 4) -> dict[str, Any]:
    """A small Mellanox SN2700-like CONFIG_DB (traditional buffer model)."""
    port_tbl = {
        f"Ethernet{4 * i}": {"admin_status": "up", "alias": f"etp{i + 1}", "lanes": ",".join(
            str(4 * i + k) for k in range(4)), "mtu": "9100", "speed": "100000", "index": str(i + 1)}
        for i in range(ports)
    }
    return {
        "DEVICE_METADATA": {"localhost": {
            "hostname": hostname, "hwsku": "ACS-MSN2700", "platform": "x86_64-mlnx_msn2700-r0",
            "mac": "00:00:5e:00:53:01", "type": "LeafRouter", "buffer_model": "traditional"}},
        "PORT": port_tbl,
        "BUFFER_POOL": {
            "ingress_lossless_pool": {"mode": "dynamic", "size": "12766208", "type": "ingress"},
            "egress_lossless_pool": {"mode": "dynamic", "size": "13945824", "type": "egress"},
            "egress_lossy_pool": {"mode": "dynamic", "size": "7326924", "type": "egress"}},
        "FLEX_COUNTER_TABLE": {"PFCWD": {"FLEX_COUNTER_STATUS": "enable"},
                               "QUEUE": {"FLEX_COUNTER_STATUS": "enable"}},
    }


#: sonic-net/sonic-utilities ``generic_config_updater/gcu_field_operation_validators.conf.json`` (the
#: ``rdma_config_update_validator`` scenarios): table -> [(fields, operations, ASIC -> first branch)]. A
#: patch op on one of these tables passes only when every field it touches is in one scenario that allows
#: the op on the switch's ASIC from that branch on.
_BRCM_TH3_ON = {"td2": "20181100", "th": "20181100", "th2": "20181100", "th3": "20240500", "th4": "20240500",
                "th5": "20240500", "td3": "20201200", "spc1": "20181100", "spc2": "20191100",
                "spc3": "20220500", "spc4": "20221100", "j2c+": "20220500", "cisco-8000": "20201200"}
_SIZE_ON = {**_BRCM_TH3_ON, "td2": "", "th": "20221100", "th2": "20221100", "td3": "20221100",
            "spc1": "20191100"}
GCU_RDMA_SCENARIOS: dict[str, list[tuple[tuple[str, ...], tuple[str, ...], dict[str, str]]]] = {
    "PFC_WD": [(("restoration_time", "detection_time", "action", "global/poll_interval", ""),
                ("remove", "add", "replace"), _BRCM_TH3_ON)],
    "BUFFER_POOL": [(("ingress_lossless_pool/xoff", "ingress_lossless_pool/size", "egress_lossy_pool/size"),
                     ("replace",), _SIZE_ON)],
    "BUFFER_PROFILE": [(("dynamic_th",), ("replace",), _BRCM_TH3_ON), (("xoff",), ("replace",), _SIZE_ON)],
    "WRED_PROFILE": [(("azure_lossless/green_min_threshold", "azure_lossless/green_max_threshold",
                       "azure_lossless/green_drop_probability"), ("replace",), _BRCM_TH3_ON)],
}


PFCWD_STATS_HEADER = (
    "      QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST OK/DROP    "
    "RX LAST OK/DROP",
    "-----------  -----------  -------------------------  ------------  ------------  -----------------  "
    "-----------------",
)
#: the counter pairs of a ``show pfcwd stats`` row, in the header's order
PFCWD_STATS_PAIRS = (("detected", "restored"), ("tx_ok", "tx_drop"), ("rx_ok", "rx_drop"),
                     ("tx_last_ok", "tx_last_drop"), ("rx_last_ok", "rx_last_drop"))


#: PORT ``role`` values of the ports a multi-ASIC box keeps to itself (backplane, inband, recirculation):
#: ``show`` commands leave them out unless asked for every port (sonic_py_common.multi_asic.is_port_internal)
INTERNAL_PORT_ROLES = frozenset({"Int", "Inb", "Rec", "Dpc"})


def front_panel_ports(db: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(port, its PORT_QOS_MAP row) of every front-panel port, in port order: CONFIG_DB's own, or on a
    multi-ASIC box (``localhost``/``asicN`` namespaces) every namespace's, internal ports left out."""
    spaces = [db[k] for k in sorted(db) if re.fullmatch(r"asic\d+", k)] if "asic0" in db else [db]
    out = [(port, ns.get("PORT_QOS_MAP", {}).get(port, {})) for ns in spaces
           for port, row in ns.get("PORT", {}).items() if row.get("role") not in INTERNAL_PORT_ROLES]
    return sorted(out, key=lambda pq: int(re.sub(r"\D", "", pq[0]) or 0))


def pfcwd_stats_table(db: dict[str, Any], stats: Callable[[str, str], dict[str, int]], empty: bool) -> str:
    """``show pfcwd stats [--empty]`` as sonic-utilities pfcwd/main.py ``show_stats`` prints it: a row per
    queue (``port:index``) whose counter pairs are not all ``0/0`` — every queue of every port with
    ``--empty``/``-e``, STATUS ``N/A`` where the watchdog does not run (``pfcwd_sw_enable``); the ports of
    :func:`front_panel_ports`;
    ``stats(port, queue)`` gives the queue's counters (keys of :data:`PFCWD_STATS_PAIRS`)."""
    lines = list(PFCWD_STATS_HEADER)
    for port, qos in front_panel_ports(db):
        on = {q for q in str(qos.get("pfcwd_sw_enable", "")).split(",") if q}
        for q in (str(i) for i in range(8)):
            s = stats(port, q) if q in on else {}
            pairs = [f"{s.get(a, 0)}/{s.get(b, 0)}" for a, b in PFCWD_STATS_PAIRS]
            if empty or any(p != "0/0" for p in pairs):
                status = ("stormed" if s.get("detected", 0) > s.get("restored", 0) else "operational") \
                    if q in on else "N/A"
                lines.append(f"{port + ':' + q:>11}  {status:>11}  {pairs[0]:>25}  {pairs[1]:>12}  "
                             f"{pairs[2]:>12}  {pairs[3]:>17}  {pairs[4]:>17}")
    return "\n".join(lines) + "\n"


def pfc_counters_tables(ports: list[str], frames: Callable[[str, str, int], int]) -> str:
    """``show pfc counters`` as sonic-utilities scripts/pfcstat prints it: a ``Port Rx`` then a ``Port Tx``
    table (tabulate ``simple``, right-aligned, thousands separators), every port; ``frames(port, "rx"|"tx",
    priority)`` gives the PFC frames."""
    out = []
    for d in ("Rx", "Tx"):
        width = max([len(f"Port {d}")] + [len(p) for p in ports])
        out.append(f"{'Port ' + d:>{width}}  " + "  ".join(f"PFC{p}" for p in range(8)))
        out.append("-" * width + "  " + "  ".join(["------"] * 8))
        for port in ports:
            cells = (f"{frames(port, d.lower(), p):>6,}" for p in range(8))
            out.append(f"{port:>{width}}  " + "  ".join(cells))
        out.append("")
    return "\n".join(out) + "\n"


def gcu_field_operation_errors(old: dict[str, Any], target: dict[str, Any], asic: str,
                               branch: str | None = None) -> list[str]:
    """What ``config apply-patch`` / ``replace`` / ``rollback`` refuse before changing anything: GCU's
    ``ConfigWrapper.validate_field_operation`` diffs the whole running and target CONFIG_DB and runs
    ``field_operation_validators.rdma_config_update_validator`` on every op of the tables in
    :data:`GCU_RDMA_SCENARIOS` (sonic-net/sonic-utilities ``generic_config_updater/gu_common.py`` and
    ``field_operation_validators.py``): path elements holding a digit (port and profile names) are dropped,
    an op whose value is an object checks each of its keys, ``asic`` is GCU's name for the switch's ASIC
    (``unknown`` for a HwSKU it does not list, which refuses everything), ``branch`` the 8-digit release.
    Use as ``device.validate = lambda t: gcu_field_operation_errors(device.config_db, t, "spc3")``."""
    errors = []
    for op in jsonpatch.make_patch(old, target).patch:
        parts = jsonpatch.JsonPointer(op["path"]).parts
        if parts[0] in GCU_RDMA_SCENARIOS and not _rdma_allowed(op, parts, asic, branch):
            errors.append(f"Modification of {parts[0]} table is illegal- validating function "
                          "generic_config_updater.field_operation_validators.rdma_config_update_validator "
                          "returned False")
    return errors[:1]


def _rdma_allowed(op: dict[str, Any], parts: list[str], asic: str, branch: str | None) -> bool:
    if asic == "unknown":
        return False
    field = "/".join(e for e in parts[1:] if not any(c.isdigit() for c in e)).lower()
    value = op.get("value")
    fields = ([f"{field}/{k}" if field else k for k in value] if isinstance(value, dict) else [field])
    for f in fields:
        scenario = next((sc for sc in GCU_RDMA_SCENARIOS[parts[0]] if f in sc[0]), None)
        if scenario is None or not scenario[2].get(asic) or op["op"] not in scenario[1]:
            return False
        if branch is not None and branch < scenario[2][asic]:
            return False
    return True


#: what sonic-cfggen / sonic-db-cli print when redis does not answer (the ``fail_db_write`` fault)
_REDIS_DOWN = ("Traceback (most recent call last):\nredis.exceptions.ConnectionError: Error 111 "
               "connecting to unix socket: /var/run/redis/redis.sock. Connection refused.\n")


#: ``config`` subcommands of the Generic Config Updater (sonic-net/sonic-utilities ``config/main.py``; design
#: sonic-net/SONiC PR #736, March 2021): a 202012 image has none of them
GCU_COMMANDS = frozenset({"apply-patch", "replace", "checkpoint", "rollback", "list-checkpoints",
                          "delete-checkpoint"})
#: first release branch the emulator gives the GCU commands (the 202012 branch predates them)
GCU_SINCE = 202106


def _deep_update(dst: dict[str, Any], src: dict[str, Any]) -> None:
    """sonic-cfggen ``deep_update``: nested dicts merged, other values replaced."""
    for key, value in src.items():
        if isinstance(value, dict):
            node = dst.setdefault(key, {})
            _deep_update(node, value)
        else:
            dst[key] = value


class SonicDevice(LinuxDevice):
    """SONiC switch driven through bash (``netmiko`` device_type ``linux``).

    Options: ``ports`` (4), ``sudo_nopasswd`` (True, as on most SONiC images),
    ``validate`` (callable: CONFIG_DB dict → list[str] errors; GCU commands only: ``apply-patch``,
    ``replace``, ``rollback``), ``on_write`` (callable: (CONFIG_DB before, after) of a ``sonic-cfggen
    --write-to-db``; may change ``after`` as a daemon would).
    """

    platform = "sonic"
    netmiko_device_type = "linux"

    def __init__(self, spec, workdir):  # type: ignore[no-untyped-def]
        super().__init__(spec, workdir)
        self.sudo_nopasswd = bool(spec.options.get("sudo_nopasswd", True))
        init = spec.initial_config
        if init is None:
            db = factory_db(spec.name, int(spec.options.get("ports", 4)))
        elif isinstance(init, str):
            db = json.loads(init)
        else:
            db = copy.deepcopy(init)
        self.config_db: dict[str, Any] = db
        self.validate: Callable[[dict[str, Any]], list[str]] | None = spec.options.get("validate")
        #: (CONFIG_DB before, after) of a ``sonic-cfggen --write-to-db``, called after it; may change
        #: ``after`` as a daemon reacting to the write would (buffermgrd re-creating a PG row)
        self.on_write: Callable[[dict[str, Any], dict[str, Any]], None] | None = spec.options.get("on_write")
        #: the image's release (``show version``: ``SONiC.<release>``)
        self.release = str(spec.options.get("release", "202305"))
        #: the image has the Generic Config Updater commands (:data:`GCU_COMMANDS`): not before 202106
        self.has_gcu = bool(spec.options.get("gcu", int(self.release[:6]) >= GCU_SINCE))
        self.cp_dir = self.vpath("/etc/sonic/checkpoints")
        self.cp_dir.mkdir(parents=True, exist_ok=True)
        self.save()
        namespaces = [k for k in db if re.fullmatch(r"asic\d+", k)]
        #: ``show platform summary``'s ``ASIC Count`` (sonic_py_common.multi_asic.get_num_asics: asic.conf
        #: NUM_ASIC); None: the line is missing (an image that does not print it)
        self.asic_count: int | None = spec.options.get("asic_count", len(namespaces) or 1)
        self.pfcwd_stats: dict[str, dict[str, int]] = {}
        self.queue_counters: dict[tuple[str, int], dict[str, int]] = {}
        #: PFC frames per (port, "rx"/"tx", priority) for ``show pfc counters`` (absent: 0)
        self.pfc_counters: dict[tuple[str, str, int], int] = {}

    @property
    def hostname(self) -> str:
        """DEVICE_METADATA's hostname; on a multi-ASIC box (``config_db`` one CONFIG_DB per namespace,
        ``localhost``/``asicN``, as ``show runningconfiguration all`` prints it there) the host's."""
        db = self.config_db.get("localhost", {}) if "asic0" in self.config_db else self.config_db
        return str(db.get("DEVICE_METADATA", {}).get("localhost", {}).get("hostname", "sonic"))

    def dump(self, db: dict[str, Any] | None = None) -> str:
        return json.dumps(self.config_db if db is None else db, indent=4, sort_keys=True) + "\n"

    def running_config(self) -> str:
        """CONFIG_DB as ``show runningconfiguration all`` prints it (sorted JSON)."""
        with self.lock:
            return self.dump()

    def save(self) -> None:
        self.vpath("/etc/sonic/config_db.json").write_text(self.dump())

    @property
    def checkpoints(self) -> dict[str, Any]:  # type: ignore[override]
        return {p.name[: -len(".cp.json")]: json.loads(p.read_text())
                for p in sorted(self.cp_dir.glob("*.cp.json"))}

    @checkpoints.setter
    def checkpoints(self, value: dict[str, Any]) -> None:
        pass

    def new_session(self, username: str, interactive: bool) -> SonicSession:
        return SonicSession(self, username, interactive)


class SonicSession(LinuxSession):
    device: SonicDevice

    def banner(self) -> str:
        return ("Linux sonic 5.10.0-23-2-amd64 x86_64\nYou are on\n  SONiC Software Version: "
                f"SONiC.{self.device.release}\n\n")

    def hostname(self) -> str:
        return self.device.hostname

    def platform_command(self, argv: list[str], stdin: str | None) -> tuple[str, int] | None:
        dev = self.device
        name = argv[0]
        cmd = " ".join(argv)
        if name not in ("config", "show", "sonic-cfggen", "sonic-db-cli", "counterpoll", "pfcstat"):
            return None
        if dev.rejects(cmd):
            return f"Error: {cmd}: rejected\n", 1
        if name == "config":
            if not self.is_root:
                return "Root privileges are required for this operation\n", 1
            return self.config(argv[1:])
        if name == "show":
            return self.show(argv[1:])
        if name == "sonic-cfggen":
            if "-d" in argv and "--print-data" in argv:
                return dev.dump(), 0
            if "-w" in argv or "--write-to-db" in argv:
                return self.cfggen_write(argv[1:])
            return "Usage: sonic-cfggen [OPTIONS]\n", 1
        if name == "sonic-db-cli":
            return self.db_cli(argv[1:])
        return "", 0

    # ------------------------------------------------------------- config
    def config(self, args: list[str]) -> tuple[str, int]:
        dev = self.device
        sub = args[0] if args else ""
        flags = {a for a in args[1:] if a.startswith("-")}
        pos = [a for a in args[1:] if not a.startswith("-")]
        dry = bool(flags & {"-d", "--dry-run"})
        if sub in GCU_COMMANDS and not dev.has_gcu:  # click's answer to an unknown subcommand
            return ('Usage: config [OPTIONS] COMMAND [ARGS]...\nTry "config -h" for help.\n\n'
                    f'Error: No such command "{sub}".\n'), 2
        if "--help" in flags:
            return f"Usage: config {sub} [OPTIONS] [ARGS]...\n", 0
        if sub in ("apply-patch", "replace"):
            if not pos:
                return ("Error: Missing argument "
                        f"'{'PATCH_FILE_PATH' if sub == 'apply-patch' else 'TARGET_FILE_PATH'}'.\n"), 2
            text = self.read_file(pos[-1])
            if text is None:
                return f"Error: Invalid value: Path '{pos[-1]}' does not exist.\n", 2
            dev.count_config_line()
            try:
                doc = json.loads(text)
            except json.JSONDecodeError as exc:
                return f"Error: {exc}\n", 1
            if sub == "replace":
                if not isinstance(doc, dict):
                    return "Error: target config must be a JSON object\n", 1
                return self.commit_db(doc, dry, "Config Replacer", "Config replaced successfully.")
            if not isinstance(doc, list):
                return "Error: patch must be a JSON array of operations\n", 1
            for op in doc:
                if dev.rejects(json.dumps(op, sort_keys=True)):
                    return (f"Error: Given patch will produce invalid config. Error: "
                            "Data validation failed for "
                            f"{op.get('path', '?') if isinstance(op, dict) else op}\n"), 1
            try:
                target = jsonpatch.JsonPatch(doc).apply(dev.config_db, in_place=False)
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError, KeyError) as exc:
                return f"Error: {type(exc).__name__}: {exc}\n", 1
            head = ("Patch Applier: localhost: Patch application starting.\n"
                    f"Patch Applier: localhost: Patch: {json.dumps(doc)}\n"
                    "Patch Applier: localhost: Getting current config db.\n"
                    "Patch Applier: localhost: Simulating the target full config after applying the patch.\n")
            out, status = self.commit_db(target, dry, "Patch Applier", "Patch applied successfully.")
            return head + out, status
        if sub == "checkpoint":
            if not pos:
                return "Error: Missing argument 'CHECKPOINT_NAME'.\n", 2
            (dev.cp_dir / f"{pos[0]}.cp.json").write_text(dev.dump())
            return ("Config Rollbacker: Config checkpoint starting.\n"
                    f"Config Rollbacker: Checkpoint name: {pos[0]}.\n"
                    "Config Rollbacker: Getting current config db.\n"
                    "Config Rollbacker: Checking if checkpoint exists.\n"
                    "Config Rollbacker: Saving config db content to /etc/sonic/checkpoints/"
                    f"{pos[0]}.cp.json.\nConfig Rollbacker: Config checkpoint completed.\n"
                    "Checkpoint created successfully.\n"), 0
        if sub == "rollback":
            if not pos:
                return "Error: Missing argument 'CHECKPOINT_NAME'.\n", 2
            path = dev.cp_dir / f"{pos[0]}.cp.json"
            if not path.is_file():
                return f"Error: Checkpoint '{pos[0]}' does not exist.\n", 1
            out, status = self.commit_db(json.loads(path.read_text()), dry, "Config Rollbacker",
                                         "Config rolled back successfully.")
            return out, status
        if sub == "list-checkpoints":
            return json.dumps(sorted(dev.checkpoints), indent=4) + "\n", 0
        if sub == "delete-checkpoint":
            path = dev.cp_dir / f"{pos[0]}.cp.json" if pos else None
            if path is None or not path.is_file():
                return "Error: Checkpoint does not exist.\n", 1
            path.unlink()
            return "Checkpoint deleted successfully.\n", 0
        if sub == "save":
            if dev.faults.fail_save and ("-y" in flags or "--yes" in flags or not self.interactive):
                return ("Running command: /usr/local/bin/sonic-cfggen -d --print-data > "
                        "/etc/sonic/config_db.json\n/bin/sh: 1: cannot create /etc/sonic/config_db.json: No "
                        "space left on device\n"), 1
            def do_save(answer: str = "y") -> str:
                if answer.lower() not in ("y", "yes"):
                    return "Aborted!\n"
                dev.save()
                return ("Running command: /usr/local/bin/sonic-cfggen -d --print-data > "
                        "/etc/sonic/config_db.json\n")
            if "-y" in flags or "--yes" in flags or not self.interactive:
                return do_save(), 0
            self.ask("Existing files will be overwritten, continue? [y/N]: ", do_save)
            return "", 0
        if sub == "reload":
            saved = self.read_file("/etc/sonic/config_db.json")
            if saved is not None:
                dev.config_db = json.loads(saved)
            return "Running command: rm -rf /tmp/dropstat-*\nReloading Monit configuration ...\n", 0
        return f"Usage: config [OPTIONS] COMMAND [ARGS]...\nError: No such command '{sub}'.\n", 2

    def commit_db(self, target: dict[str, Any], dry: bool, who: str, done: str) -> tuple[str, int]:
        dev = self.device
        empty = sorted(k for k, v in target.items() if isinstance(v, dict) and not v)
        if empty:
            return (f"Error: Given patch is not valid because it will result in empty tables "
                    f"which is not allowed in ConfigDb. Table{'s' if len(empty) > 1 else ''}: "
                    f"{', '.join(empty)}\n"), 1
        if dev.validate is not None:
            errors = dev.validate(target)
            if errors:
                return f"Error: Given patch will produce invalid config. Error: {errors[0]}\n", 1
        if not dry:
            dev.config_db = target
        return f"{who}: localhost: Validating target config.\n{who}: localhost: completed.\n{done}\n", 0

    # --------------------------------------------------------------- show
    def show(self, args: list[str]) -> tuple[str, int]:
        dev = self.device
        text = " ".join(args)
        if text in ("runningconfiguration all", "runningconfig all"):
            return dev.dump(), 0
        if text == "version":
            return self.version(), 0
        if text == "platform summary":
            return self.platform_summary(), 0
        if text.startswith("pfcwd stats"):
            return pfcwd_stats_table(dev.config_db, lambda port, q: dev.pfcwd_stats.get(f"{port}:{q}", {}),
                                     empty=bool({"-e", "--empty"} & set(args))), 0
        if text.startswith("queue counters"):
            ports = args[2:] or [p for p, _ in front_panel_ports(dev.config_db)]
            lines = ["     Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes",
                     "---------  -----  --------------  ---------------  -----------  ------------"]
            for port in ports:
                for q in range(8):
                    c = dev.queue_counters.get((port, q), {})
                    lines.append(f"{port:>9}    UC{q}  {c.get('pkts', 0):>14}  {c.get('bytes', 0):>15}  "
                                 f"{c.get('drop_pkts', 0):>11}  {c.get('drop_bytes', 0):>12}")
            return "\n".join(lines) + "\n", 0
        if text.startswith("pfc counters"):
            return pfc_counters_tables([p for p, _ in front_panel_ports(dev.config_db)],
                                       lambda port, d, p: dev.pfc_counters.get((port, d, p), 0)), 0
        if text.startswith(("pfc priority", "pfcwd config", "queue wredcounters",
                            "buffer", "ecn")):
            return "", 0
        return ("Usage: show [OPTIONS] COMMAND [ARGS]...\nError: No such command "
                f"'{args[0] if args else ''}'.\n"), 2

    def version(self) -> str:
        """``show version`` as sonic-utilities show/main.py prints it: a blank line, the build lines, the
        platform summary (Platform, HwSKU, ASIC, ASIC Count, Serial/Model Number, Hardware Revision),
        Uptime and Date, then the docker images table (abridged here to its header and one image)."""
        dev = self.device
        return (f"\nSONiC Software Version: SONiC.{dev.release}\nSONiC OS Version: 11\n"
                "Distribution: Debian 11.7\nKernel: 5.10.0-23-2-amd64\nBuild commit: 0a1b2c3d4\n"
                "Build date: Mon Jun  5 10:00:00 UTC 2023\nBuilt by: sonicbld@build\n\n"
                + self.platform_summary()
                + "Uptime: 10:00:00 up 12 days,  1 user,  load average: 0.52, 0.48, 0.45\n"
                "Date: Mon 19 Jun 2023 10:00:00\n\nDocker images:\n"
                "REPOSITORY                 TAG        IMAGE ID       SIZE\n"
                f"docker-lldp                {dev.release}     0a1b2c3d4e5f   305MB\n")

    def platform_summary(self) -> str:
        """``show platform summary`` as sonic-utilities show/platform.py prints it (``ASIC Count`` from
        sonic_py_common.multi_asic.get_num_asics, i.e. asic.conf NUM_ASIC; 1 without an asic.conf)."""
        dev = self.device
        host = dev.config_db.get("localhost", {}) if "asic0" in dev.config_db else dev.config_db
        meta = host.get("DEVICE_METADATA", {}).get("localhost", {})
        lines = [f"Platform: {meta.get('platform', 'x86_64-mlnx_msn4700-r0')}",
                 f"HwSKU: {meta.get('hwsku', '')}", "ASIC: mellanox"]
        if dev.asic_count is not None:
            lines.append(f"ASIC Count: {dev.asic_count}")
        # the model number is the platform's (x86_64-mlnx_msn2700-r0: MSN2700-…), not another model's
        m = re.search(r"mlnx_(msn\w+?)-r\d", meta.get("platform", "x86_64-mlnx_msn4700-r0"))
        number = f"{m.group(1).upper()}-WS2FO" if m else "N/A"
        lines += ["Serial Number: MT2231X09876", f"Model Number: {number}", "Hardware Revision: A1"]
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------ CONFIG_DB writes
    def db_write_fails(self) -> bool:
        """Count one CONFIG_DB write; True when the ``fail_db_write`` fault makes it fail."""
        dev = self.device
        dev.db_writes_seen += 1
        first = dev.faults.fail_db_write
        if first is not None and first <= dev.db_writes_seen < first + dev.faults.fail_db_write_count:
            dev.events.append(f"fault: CONFIG_DB write {dev.db_writes_seen} failed")
            return True
        return False

    def cfggen_write(self, args: list[str]) -> tuple[str, int]:
        """``sonic-cfggen -j FILE [-j FILE …] --write-to-db`` (sonic-buildimage ``src/sonic-config-engine/
        sonic-cfggen``): the files are deep-merged in order, then written with ``ConfigDBPipeConnector.
        mod_config`` in one MULTI/EXEC transaction: a table given as ``{}`` is deleted whole, a row given as
        ``{}`` is deleted, any other row's fields are set with HMSET (fields not in the file are kept, missing
        rows are created)."""
        dev = self.device
        files = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-j", "--json")]
        data: dict[str, Any] = {}
        for path in files:
            text = self.read_file(path)
            if text is None:
                return (f"Traceback (most recent call last):\nFileNotFoundError: [Errno 2] No such file or "
                        f"directory: '{path}'\n"), 1
            try:
                doc = json.loads(text)
            except json.JSONDecodeError as exc:
                return f"Traceback (most recent call last):\njson.decoder.JSONDecodeError: {exc}\n", 1
            _deep_update(data, doc)
        if not self.is_root:
            return ("Traceback (most recent call last):\nPermissionError: [Errno 13] Permission denied: "
                    "'/var/run/redis/redis.sock'\n"), 1
        for table, rows in data.items():
            for key, row in (rows.items() if isinstance(rows, dict) else []):
                if dev.rejects(json.dumps({table: {key: row}}, sort_keys=True)):
                    return ("Traceback (most recent call last):\nredis.exceptions.ResponseError: "
                            f"rejected {table}|{key}\n"), 1
        if self.db_write_fails():
            return _REDIS_DOWN, 1
        old = copy.deepcopy(dev.config_db)
        db = dev.config_db
        for table, rows in data.items():
            if not rows:
                db.pop(table, None)
                continue
            for key, row in rows.items():
                if not row:
                    db.get(table, {}).pop(key, None)
                else:
                    db.setdefault(table, {}).setdefault(key, {}).update(copy.deepcopy(row))
            if not db.get(table, True):
                db.pop(table, None)
        if dev.on_write is not None:
            dev.on_write(old, db)
        dev.config_db = db  # assigned, as apply-patch does: a subclass may watch CONFIG_DB (verify stubs)
        return "", 0

    def db_cli(self, args: list[str]) -> tuple[str, int]:
        dev = self.device
        if len(args) < 2 or args[0] != "CONFIG_DB":
            return "", 0
        op = args[1].lower()
        key = args[2] if len(args) > 2 else ""
        table, _, entry = key.partition("|")
        if op in ("del", "hdel"):
            return self.db_cli_delete(op, args[2:])
        if op == "hgetall":
            return repr(dev.config_db.get(table, {}).get(entry, {})) + "\n", 0
        if op == "hget" and len(args) > 3:
            value = dev.config_db.get(table, {}).get(entry, {}).get(args[3])
            return (f"{value}\n" if value is not None else "\n"), 0
        if op == "keys":
            import fnmatch
            keys = [f"{t}|{k}" for t, rows in dev.config_db.items() if isinstance(rows, dict) for k in rows]
            return "".join(k + "\n" for k in sorted(keys) if fnmatch.fnmatchcase(k, key or "*")), 0
        if op == "exists":
            return ("1\n" if entry in dev.config_db.get(table, {}) else "0\n"), 0
        return "", 0

    def db_cli_delete(self, op: str, args: list[str]) -> tuple[str, int]:
        """``sonic-db-cli CONFIG_DB DEL KEY [KEY …]`` / ``HDEL KEY FIELD [FIELD …]`` (sonic-swss-common
        ``sonic-db-cli``: the redis command as given, its integer reply printed as redis-cli does; a hash
        whose last field is removed is gone, as in redis)."""
        dev = self.device
        if not args or (op == "hdel" and len(args) < 2):
            return f"(error) ERR wrong number of arguments for '{op}' command\n", 1
        if self.db_write_fails():
            return _REDIS_DOWN, 1
        db = dev.config_db
        count = 0
        for key in (args if op == "del" else args[:1]):
            table, _, entry = key.partition("|")
            rows = db.get(table, {})
            if op == "del":
                count += rows.pop(entry, None) is not None
            else:
                row = rows.get(entry, {})
                count += sum(row.pop(f, None) is not None for f in args[1:])
                if entry in rows and not row:
                    rows.pop(entry)
            if table in db and not db[table]:
                db.pop(table)
        dev.config_db = db  # assigned, as apply-patch does: a subclass may watch CONFIG_DB (verify stubs)
        return f"{count}\n", 0
