"""SONiC emulator wired to the response model: platform ``sonic-model``.

A :class:`~tests.emulators.sonic.SonicDevice` that (1) writes ``switch-<name>.json`` in the fabric
directory (``options["fabric_dir"]``) whenever its CONFIG_DB changes — the settings the host stubs
read when they simulate a run — and (2) answers ``show pfc counters``, ``show queue counters``,
``show queue wredcounters`` and ``show pfcwd stats`` from ``counters-<name>.json``, the totals the
stubs add to, in sonic-utilities' table shapes (thousands separators as ``pfcstat`` prints them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import server
from ..sonic import SonicDevice, SonicSession, pfc_counters_tables, pfcwd_stats_table
from . import model as m

PLATFORM = "sonic-model"
server._PLATFORM_CLASSES.setdefault(PLATFORM, ("verify_stubs.switch", "ModelSonicDevice"))


def _n(v: int) -> str:
    return f"{int(v):,}"


class ModelSonicDevice(SonicDevice):
    """Options: everything :class:`SonicDevice` takes plus ``fabric_dir`` (required)."""

    def __init__(self, spec, workdir):  # type: ignore[no-untyped-def]
        self.fabric_dir = Path(spec.options["fabric_dir"])
        self._db: dict[str, Any] = {}
        super().__init__(spec, workdir)

    @property  # type: ignore[override]
    def config_db(self) -> dict[str, Any]:
        return self._db

    @config_db.setter
    def config_db(self, db: dict[str, Any]) -> None:
        self._db = db
        with m.locked(self.fabric_dir):
            m.write_json(self.fabric_dir / f"switch-{self.spec.name}.json", m.switch_state_from_db(db))

    def counters(self) -> dict[str, dict[str, int]]:
        """Counter totals per port (what the stubs have added so far)."""
        return m.read_json(self.fabric_dir / f"counters-{self.spec.name}.json", {})

    def new_session(self, username: str, interactive: bool) -> ModelSonicSession:
        return ModelSonicSession(self, username, interactive)


class ModelSonicSession(SonicSession):
    device: ModelSonicDevice

    def _ports(self, args: list[str]) -> list[str]:
        named = [a for a in args if a.startswith("Ethernet")]
        return named or sorted(self.device.config_db.get("PORT", {}), key=lambda p: int(p[8:] or 0))

    def show(self, args: list[str]) -> tuple[str, int]:
        text = " ".join(args)
        c = self.device.counters()
        if text.startswith("pfc counters"):
            return pfc_counters_tables(self._ports(args[2:]),
                                       lambda port, d, p: c.get(port, {}).get(f"pfc_{d}_prio{p}", 0)), 0
        if text.startswith(("queue counters", "queue wredcounters")):
            wred = args[1] == "wredcounters"
            cols = (("wred_drop_pkts", "WredDrp/pkts"), ("wred_drop_bytes", "WredDrp/bytes"),
                    ("ecn_marked_pkts", "EcnMarked/pkts"), ("ecn_marked_bytes",
                                                            "EcnMarked/bytes")) if wred else \
                (("tx_pkts", "Counter/pkts"), ("tx_bytes", "Counter/bytes"), ("drop_pkts", "Drop/pkts"),
                 ("drop_bytes", "Drop/bytes"))
            out = ["     Port    TxQ  " + "  ".join(f"{h:>15}" for _, h in cols),
                   "---------  -----  " + "  ".join(["-" * 15] * len(cols))]
            for port in self._ports(args[2:]):
                for q in range(8):
                    pc = c.get(port, {})
                    out.append(f"{port:>9}    UC{q}  " + "  ".join(f"{_n(pc.get(f'q{q}_{k}', 0)):>15}" for k,
                                                                   _ in cols))
            return "\n".join(out) + "\n", 0
        if text.startswith("pfcwd stats"):
            def stats(port: str, q: str) -> dict[str, int]:
                pc = c.get(port, {})
                return {k: pc.get(f"q{q}_wd_{w}", 0) for k, w in (
                    ("detected", "storm_detected"), ("restored", "storm_restored"), ("tx_ok", "tx_ok"),
                    ("tx_drop", "tx_drop"), ("rx_ok", "rx_ok"), ("rx_drop", "rx_drop"))}
            empty = bool({"-e", "--empty"} & set(args))
            return pfcwd_stats_table(self.device.config_db, stats, empty), 0
        return super().show(args)
