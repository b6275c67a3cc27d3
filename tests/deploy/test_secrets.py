"""No credential, hash, key or community string of a device's running configuration reaches a log file
or restore point: per-platform secret patterns on real-looking config lines, and apply (dry run and
push) against loopback emulators seeded with such lines, scanning every file under the log directory."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import asyncssh
import pytest
from ruamel.yaml import YAML

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.credentials import Redactor
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import ApplyOptions, apply_targets
from roce_tune.platforms.base import MASK
from tests.emulators import EmulatorSpec, start_emulators
from tests.emulators import cumulus as emu_cumulus
from tests.emulators import eos as emu_eos
from tests.emulators import junos as emu_junos
from tests.emulators import nxos as emu_nxos

from .conftest import PASSWORD, REPO, USER, _sonic_db

#: per platform: running-config lines as the device prints them, and the secrets in them
SEEDED: dict[str, tuple[str, list[str]]] = {
    "eos": ("""\
username admin privilege 15 role network-admin secret sha512 $6$Rj3dE2kQ$eosHashValue0123456789abcdefABCDEF
enable password sha512 $6$EnAbLe1x$enableHashValue987zyx
tacacs-server host 10.10.10.1 key 7 070E234F1F5B4A0A
tacacs-server key 7 0822455D0A16544541
radius-server key 7 02050D480809EosRad
snmp-server community EosRoCommunity42 ro
snmp-server host 10.10.10.9 version 2c EosTrapCommunity43
snmp-server user ops network-admin v3 localized f5717f44fcb2c0d9 auth sha 0x1f2e3d4c5b6a79881726 priv aes \
0xa9b8c7d6e5f40312
ntp authentication-key 1 md5 7 0832585B1910EosNtp
router bgp 65001
   neighbor 10.0.0.1 password 7 Aq0Jt9Bgp4EosNbr
interface Vlan10
   ip ospf message-digest-key 1 sha256 7 EosOspfSha256Key14
   isis authentication key 7 EosIsisKey15
""", ["$6$Rj3dE2kQ$eosHashValue0123456789abcdefABCDEF", "$6$EnAbLe1x$enableHashValue987zyx",
      "070E234F1F5B4A0A",
      "0822455D0A16544541", "02050D480809EosRad", "EosRoCommunity42", "EosTrapCommunity43",
      "0x1f2e3d4c5b6a79881726",
      "0xa9b8c7d6e5f40312", "0832585B1910EosNtp", "Aq0Jt9Bgp4EosNbr", "EosOspfSha256Key14", "EosIsisKey15"]),
    "nxos": ("""\
username admin password 5 $5$KLMNOP$nxosHashValueAbCdEf0123456789 role network-admin
tacacs-server key 7 "NxTacKey77"
tacacs-server host 10.10.10.2 key 7 "NxTacHostKey8"
radius-server host 10.10.10.3 key 7 "NxRadKey99"
snmp-server user admin network-admin auth md5 0x5c3b0e9a0c4e5e6f7a8b priv 0x6d4c1f0b1d5f6f708b9c localizedkey
snmp-server community NxRoCommunity17 group network-operator
snmp-server host 10.10.10.9 traps version 2c NxTrapCommunity3
ntp authentication-key 42 md5 NxNtpKey5 7
router bgp 65002
  neighbor 10.0.0.2
    password 3 NxBgpPw3a9f
""", ["$5$KLMNOP$nxosHashValueAbCdEf0123456789", "NxTacKey77", "NxTacHostKey8", "NxRadKey99",
      "0x5c3b0e9a0c4e5e6f7a8b",
      "0x6d4c1f0b1d5f6f708b9c", "NxRoCommunity17", "NxTrapCommunity3", "NxNtpKey5", "NxBgpPw3a9f"]),
    "junos": ("""\
set system root-authentication encrypted-password "$6$JuRoot$junosRootHashValue0123"
set system login user ops authentication encrypted-password "$6$JuOps$junosOpsHashValue4567"
set system tacplus-server 10.10.10.4 secret "$9$JuTacSecretAbC"
set system radius-server 10.10.10.5 secret "$9$JuRadSecretDeF"
set system ntp authentication-key 7 type md5 value "$9$JuNtpValueGhI"
set snmp community JuRoCommunity88 authorization read-only
set snmp v3 usm local-engine user snmpops authentication-sha authentication-key "$9$JuSnmpAuthKeyJkL"
set snmp v3 usm local-engine user snmpops privacy-aes128 privacy-key "$9$JuSnmpPrivKeyMnO"
set protocols bgp group spines authentication-key "$9$JuBgpKeyPqR"
set protocols ospf area 0.0.0.0 interface et-0/0/1.0 authentication md5 1 key "$9$JuOspfMd5KeyStU"
""", ["$6$JuRoot$junosRootHashValue0123", "$6$JuOps$junosOpsHashValue4567", "$9$JuTacSecretAbC",
      "$9$JuRadSecretDeF",
      "$9$JuNtpValueGhI", "JuRoCommunity88", "$9$JuSnmpAuthKeyJkL", "$9$JuSnmpPrivKeyMnO", "$9$JuBgpKeyPqR",
      "$9$JuOspfMd5KeyStU"]),
    "cumulus": ("""\
nv set system aaa user cumulus hashed-password '$6$CuUser$cumulusHashValue0123'
nv set system aaa user ops password CuPlainPw55
nv set system aaa tacacs server 5 host 10.10.10.6
nv set system aaa tacacs server 5 secret CuTacSecret6
nv set system aaa radius server 10.10.10.7 secret CuRadSecret7
nv set service snmp-server readonly-community CuRoCommunity9 access any
nv set service snmp-server username snmpops auth-sha CuSnmpAuth10 encrypt-aes CuSnmpPriv11
nv set vrf default router bgp neighbor swp51 password CuBgpPw12
nv set interface swp51 router ospf authentication md5-key CuOspfMd5Key13
""", ["$6$CuUser$cumulusHashValue0123", "CuPlainPw55", "CuTacSecret6", "CuRadSecret7", "CuRoCommunity9",
      "CuSnmpAuth10",
      "CuSnmpPriv11", "CuBgpPw12", "CuOspfMd5Key13"]),
}
SONIC_TABLES = {
    "TACPLUS": {"global": {"auth_type": "pap", "passkey": "SoTacGlobalKey1", "timeout": "5"}},
    "TACPLUS_SERVER": {"10.10.10.8": {"passkey": "SoTacServerKey2", "priority": "1", "tcp_port": "49"}},
    "RADIUS": {"global": {"auth_type": "pap", "passkey": "SoRadGlobalKey3"}},
    "RADIUS_SERVER": {"10.10.10.9": {"passkey": "SoRadServerKey4", "priority": "1"}},
    "SNMP_COMMUNITY": {"SoRoCommunity5": {"TYPE": "RO"}, "SoRwCommunity6": {"TYPE": "RW"}},
    "SNMP_USER": {"snmpops": {"SNMP_USER_AUTH_PASSWORD": "SoSnmpAuth7", "SNMP_USER_AUTH_TYPE": "SHA",
                              "SNMP_USER_ENCRYPTION_PASSWORD": "SoSnmpPriv8",
                              "SNMP_USER_ENCRYPTION_TYPE": "AES",
                              "SNMP_USER_PERMISSION": "RO", "SNMP_USER_TYPE": "Priv"}},
    "NTP_KEY": {"1": {"trusted": "yes", "type": "md5", "value": "SoNtpKey9"}},
}
SONIC_SECRETS = ["SoTacGlobalKey1", "SoTacServerKey2", "SoRadGlobalKey3", "SoRadServerKey4", "SoRoCommunity5",
                 "SoRwCommunity6", "SoSnmpAuth7", "SoSnmpPriv8", "SoNtpKey9"]
FACTORY = {"eos": emu_eos.FACTORY, "nxos": emu_nxos.FACTORY, "junos": emu_junos.FACTORY,
           "cumulus": emu_cumulus.FACTORY}
#: what must survive masking, so a log still says which statement it was
KEPT = {"eos": ["secret sha512", "tacacs-server key 7", "snmp-server community", "auth sha", "priv aes",
                "message-digest-key 1 sha256 7", "isis authentication key 7"],
        "nxos": ["password 5", "role network-admin", "localizedkey", "ntp authentication-key 42 md5"],
        "junos": ["encrypted-password", "authentication-key 7 type md5 value", "authorization read-only",
                  "authentication md5 1 key"],
        "cumulus": ["hashed-password", "readonly-community", "access any", "encrypt-aes", "md5-key"]}


@pytest.mark.parametrize("platform", sorted(SEEDED))
def test_platform_patterns_mask_every_secret_form(platform: str) -> None:
    text, secrets = SEEDED[platform]
    masked = Redactor([], platform)(text)
    assert not [s for s in secrets if s in masked], masked
    assert masked.count(MASK) >= len(secrets) and len(masked.splitlines()) == len(text.splitlines())
    assert all(k in masked for k in KEPT[platform]), masked
    # nothing but secrets is touched: the masked text matches the original outside the masks
    assert masked.split(MASK)[0] == text[: len(masked.split(MASK)[0])]


def test_sonic_patterns_mask_config_db_as_printed_and_as_sonic_db_cli_prints_it() -> None:
    import json

    text = json.dumps(SONIC_TABLES, indent=4, sort_keys=True)
    masked = Redactor([], "sonic")(text)
    assert not [s for s in SONIC_SECRETS if s in masked], masked
    assert ('"TYPE": "RO"' in masked and '"auth_type": "pap"' in masked
            and '"SNMP_USER_AUTH_TYPE": "SHA"' in masked)
    assert json.loads(masked)["SNMP_USER"]["snmpops"]["SNMP_USER_AUTH_PASSWORD"] == MASK
    cli = ("{'auth_type': 'pap', 'passkey': 'SoTacGlobalKey1'}\nSNMP_COMMUNITY|SoRoCommunity5\n"
           "$ sonic-db-cli CONFIG_DB hgetall 'SNMP_COMMUNITY|SoRwCommunity6'\n")
    assert not [s for s in SONIC_SECRETS if s in Redactor([], "sonic")(cli)]


def test_the_session_password_and_generic_forms_are_masked_on_every_platform() -> None:
    for platform in (*SEEDED, "sonic", "host"):
        r = Redactor(["s3cret-Pa55"], platform)
        out = r("login s3cret-Pa55\npassphrase: hunter22\nsecret 0 plainsecret\n")
        assert "s3cret-Pa55" not in out and "hunter22" not in out and "plainsecret" not in out


def _seeded_fleet(tmp_path: Path):  # type: ignore[no-untyped-def]
    data = YAML(typ="safe").load((REPO / "inventories" / "mixed-vendor.yaml").read_text())
    data["hosts"] = []
    specs = []
    for sw in data["switches"]:
        if sw["platform"] == "sonic":
            init: object = {**_sonic_db(sw), **SONIC_TABLES}
        else:
            init = FACTORY[sw["platform"]].format(name=sw["name"], user=USER) + SEEDED[sw["platform"]][0]
        specs.append(EmulatorSpec(sw["platform"], sw["name"], username=USER, password=PASSWORD,
                                  initial_config=init))
    fleet = start_emulators(specs, workdir=tmp_path / "emu")
    for sw in data["switches"]:
        sw["mgmt"] = {"host": "127.0.0.1", "port": fleet.port(sw["name"])}
    inv = tmp_path / "mixed-vendor.yaml"
    with open(inv, "w") as fh:
        YAML().dump(data, fh)
    pub = asyncssh.read_private_key(str(fleet.host_key_path)).export_public_key().decode().split()
    known = tmp_path / "known_hosts"
    known.write_text("".join(f"[127.0.0.1]:{fleet.port(s.name)} {pub[0]} {pub[1]}\n" for s in specs))
    return fleet, inv, known


@pytest.mark.slow
def test_no_secret_of_the_running_configs_reaches_any_log_file(tmp_path: Path) -> None:
    fleet, inv, known = _seeded_fleet(tmp_path)
    old_umask = os.umask(0)  # logs must be private whatever the umask
    try:
        secrets = [s for _, found in SEEDED.values() for s in found] + SONIC_SECRETS + [PASSWORD]
        assert all(any(s in fleet[d.spec.name].running_config() for d in fleet) for s in secrets[:-1])
        targets, _ = load_source(inv)
        assert {t.platform for t in targets} == {"eos", "nxos", "junos", "cumulus", "sonic"}
        logs = tmp_path / "out" / "logs"
        one_each = ["leaf1", "spine1", "leaf3", "leaf5", "leaf7"]  # eos, nxos, junos, sonic, cumulus
        assert {t.platform for t in targets if t.name in one_each} == {"eos", "nxos", "junos", "cumulus",
                                                                       "sonic"}

        def opts(tag: str, **kw: object) -> ApplyOptions:
            return ApplyOptions(known_hosts=str(known), log_dir=logs, limit=one_each,
                                **kw,  # type: ignore[arg-type]
                                push=PushOptions(confirm_s=60, read_timeout_s=20, tag=tag))
        dry = apply_targets(targets, opts("rt_dry", dry_run=True))
        assert {r.state for r in dry} == {"would-change"}, [(r.name, r.state, r.error) for r in dry]
        pushed = apply_targets(targets, opts("rt_push", allow_disruptive=True))
        assert {r.state for r in pushed} == {"pushed"}, [(r.name, r.state,
                                                          r.error) for r in pushed if r.error]
        files = [p for p in logs.rglob("*") if p.is_file()]
        assert len([p for p in files if p.name.endswith(".before.txt")]) == 2 * len(one_each)
        assert len([p for p in files if p.suffix == ".log"]) == len(one_each)
        leaks = {str(p.relative_to(logs)): [s for s in secrets if s in p.read_text()] for p in files}
        assert not {k: v for k, v in leaks.items() if v}, leaks
        assert all(MASK in p.read_text() for p in files if p.name.endswith(".before.txt"))
        assert stat.S_IMODE(logs.stat().st_mode) == 0o700
        assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {"0o600"}
    finally:
        os.umask(old_umask)
        fleet.stop()
