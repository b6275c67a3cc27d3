#!/usr/bin/env bash
# roce-tune shared host script, version 3 (roce-tune 0.1.0) -- do not edit, re-render instead.
# The logic only: each host's values (RT_HOST, RT_NICS, RT_DSCP2PRIO, RT_ECN) are in its data file
# hosts/<name>.sh, which sources this file; `roce-tune apply` and playbooks/push.yml send both to the
# host as one script. Run the host's file, not this one.
# Idempotent: every step writes an absolute value, so a second run changes nothing.
# Runtime settings (mlnx_qos, ethtool -A, cma_roce_*, sysfs) are lost at reboot and driver reload, so a
# run that sets them also installs this host's script as /usr/local/lib/roce-tune/host.sh, the systemd unit roce-tune-host.service
# (enabled: runs it at boot) and a udev rule that re-runs the unit when an mlx5 netdev or RDMA device
# appears; --check reports any of them missing, stale or not enabled like a value that did not read back.
# Ends by reading back every value it set and exits 1 listing each mismatch. A NIC tool that fails, a
# sysfs value the driver refuses, or a netdev / RDMA device port that does not answer before anything is
# changed, stops it with exit 2; with --boot (the unit's run) such a NIC is named and left out, every other
# NIC is configured and read back, and the run ends with exit 4 (1 if a value did not read back).
# ROCE_TUNE_SYSROOT (tests) is prepended to every /sys path.
# Usage: bash SCRIPT [--check | --save FILE | --boot]
#   --check      change nothing, only read back and list mismatches
#   --save FILE  first write FILE, a script that puts back every value this one changes (restore point)
#   --boot       as without arguments, but a planned NIC that is missing or fails does not stop the others
set -euo pipefail

RT_CHECK=0
RT_SAVE=""
RT_BOOT=0
rt_usage() { echo "usage: $0 [--check | --save FILE | --boot]" >&2; exit 2; }
case "$#:${1:-}" in
    0:) ;;
    1:--check) RT_CHECK=1 ;;
    1:--boot) RT_BOOT=1 ;;
    2:--save) RT_SAVE="$2" ;;
    *) rt_usage ;;
esac
if (( $# == 2 )); then
    [[ -n "$RT_SAVE" && "$RT_SAVE" != -* ]] || rt_usage
    if [[ -d "$RT_SAVE" ]]; then
        echo "roce-tune: $RT_SAVE is a directory: give --save the name of a new file" >&2
        exit 2
    fi
    if [[ -s "$RT_SAVE" ]]; then  # a restore point from an earlier run would be overwritten by values set since
        echo "roce-tune: $RT_SAVE already holds a restore point; choose a new file" >&2
        exit 2
    fi
fi

if [[ "${RT_DATA_VERSION:-}" != 3 ]]; then
    echo "roce-tune: host data version '${RT_DATA_VERSION:-}' does not match shared host script version" \
        3": render both with the same roce-tune" >&2
    exit 2
fi
SYSROOT="${ROCE_TUNE_SYSROOT:-}"
MISMATCHES=()
# the planned NICs a --boot run found missing and left out (netdev (RDMA device port N))
RT_MISSING=()
# the NICs a --boot run left out after one of their steps failed (netdev (RDMA device port N))
RT_FAILED=()
# 1: each NIC's mlx5 global traffic class is set to its RoCE TOS; 0 (data file): unset, where NCCL asks for
# another TOS that the global value would override on every QP
RT_TCLASS_GLOBAL="${RT_TCLASS_GLOBAL:-1}"

# Root only: mlnx_qos writes, cma_roce_tos/cma_roce_mode (configfs) and the sysfs writes need it, and a user's PATH
# lacks /usr/sbin (mlnx_qos, ethtool). A run on a fake tree (ROCE_TUNE_SYSROOT, tests) is not checked.
if (( EUID != 0 )) && [[ -z "$SYSROOT" ]]; then
    echo "roce-tune: $RT_HOST: run it as root (sudo): mlnx_qos, cma_roce_tos, cma_roce_mode and the sysfs" \
        "writes need it; nothing was read or changed" >&2
    exit 2
fi
# every command the script needs, with what provides it: each missing one is named, then it stops, exit 2
rt_absent=0
for rt_t in 'mlnx_qos mlnx-tools: MLNX_OFED or DOCA-Host' 'cma_roce_tos mlnx-tools: MLNX_OFED or DOCA-Host' 'cma_roce_mode mlnx-tools: MLNX_OFED or DOCA-Host' 'ethtool ethtool' 'ip iproute2' 'awk gawk or mawk' 'sed sed' 'tail coreutils' 'sha256sum coreutils' 'systemctl systemd' 'udevadm udev' 'flock util-linux' ; do
    command -v "${rt_t%% *}" >/dev/null 2>&1 && continue
    echo "roce-tune: $RT_HOST: required command '${rt_t%% *}' not found (package ${rt_t#* })" >&2
    rt_absent=1
done
if (( rt_absent == 1 )); then
    echo "roce-tune: $RT_HOST: install them and run again; nothing was read or changed" >&2
    exit 2
fi

# One run at a time (a manual apply, the boot unit, the unit udev starts): each holds this lock until it exits;
# a run that finds it held stops here, exit 2, before it reads or changes anything.
RT_LOCK_FILE="${SYSROOT}"/run/lock/roce-tune-host.lock
if ! { mkdir -p -- "${RT_LOCK_FILE%/*}" && exec {RT_LOCK_FD}>>"$RT_LOCK_FILE"; } 2>/dev/null; then
    echo "roce-tune: $RT_HOST: cannot open the lock file $RT_LOCK_FILE; nothing was changed" >&2
    exit 2
fi
if ! flock -n "$RT_LOCK_FD"; then
    printf 'roce-tune: %s: another run of the roce-tune host script holds %s (a manual apply, or the boot %s)' \
        "$RT_HOST" "$RT_LOCK_FILE" "unit "roce-tune-host.service >&2
    echo "; nothing was read or changed: run it again when that one ends" >&2
    exit 2
fi

# rt_need PATH: a sysfs file the script writes must exist (a driver without the knob stops it: exit 2).
rt_need() {
    if [[ ! -e "$1" ]]; then
        echo "roce-tune: $1 does not exist (MLNX_OFED/DOCA driver needed; see the alternatives section)" >&2
        exit 2
    fi
}

# rt_write PATH VALUE: write one sysfs value; a missing file (driver without the knob) or a value the
# driver refuses stops the script: exit 2.
rt_write() {
    rt_need "$1"
    local err
    if ! err="$( { printf '%s\n' "$2" > "$1"; } 2>&1 )"; then  # the driver refused the value
        printf 'roce-tune: %s: writing %s to %s failed: %s\n' "$RT_HOST" "$2" "$1" "${err##*: }" >&2
        exit 2
    fi
}

# rt_run CMD...: run a NIC tool; its output goes to RT_OUT. On failure print the command and what the tool
# said (mlnx_qos and cma_roce_* print their errors on stdout) and stop: exit 2.
rt_run() {
    local rc=0
    RT_OUT="$("$@" 2>&1)" || rc=$?
    if (( rc != 0 )); then
        printf 'roce-tune: %s: %s failed (exit %d): %s\n' "$RT_HOST" "$*" "$rc" "${RT_OUT//$'\n'/ | }" >&2
        exit 2
    fi
}

# rt_read PATH: first line of a file ("" when empty), or <missing>.
rt_read() {
    local line=""
    if [[ -r "$1" ]]; then
        IFS= read -r line < "$1" || true
        printf '%s' "$line"
    else
        printf '<missing>'
    fi
}

# rt_ident PATH: rt_read PATH, but /etc/machine-id as a hash of it ("sha256:" and 16 hex digits):
# machine-id(5) asks that the id itself be kept confidential and hashed with an application's own key
rt_ident() {
    local v sum
    v="$(rt_read "$1")"
    if [[ "$1" == */etc/machine-id && "$v" != "<missing>" && -n "$v" ]]; then
        sum="$(printf 'roce-tune restore point %s' "$v" | sha256sum)"
        v="sha256:${sum:0:16}"
    fi
    printf '%s' "$v"
}

# rt_expect DEVICE WHAT EXPECTED ACTUAL: record a mismatch.
rt_expect() {
    if [[ "$3" != "$4" ]]; then
        MISMATCHES+=("$1 $2: expected '$3', read '$4'")
    fi
}

# rt_nic_absent RC OUTPUT: the read-back of a NIC that does not answer (its netdev gone, or mlnx_qos -i
# failing for it with exit RC and OUTPUT): one mismatch naming the NIC, what is missing and the tool's own
# message, instead of one empty value per setting; its values are not read.
rt_nic_absent() {
    local gone said="${2//$'\n'/ | }"
    gone="$(rt_netdev_gone)"
    gone="${gone:+$gone; }"
    rt_expect "$nic_dev" "NIC ($nic_rdma port $nic_port)" present \
        "${gone}mlnx_qos -i $nic_dev failed (exit $1): ${said:-no message}; not read back"
}

# rt_netdev_gone: "" while the NIC's netdev is in /sys/class/net; else that it is missing and, when its RDMA
# device's PCI function has a netdev now (device/net/: a rename), which one and what to do.
rt_netdev_gone() {
    [[ ! -e "${SYSROOT}/sys/class/net/$nic_dev" ]] || return 0
    local now=() d
    for d in "${SYSROOT}/sys/class/infiniband/$nic_rdma/device/net/"*; do
        [[ -e "$d" ]] && now+=("${d##*/}")
    done
    printf 'netdev %s missing (no /sys/class/net/%s)' "$nic_dev" "$nic_dev"
    if [[ -n "${now[*]-}" ]]; then
        printf '; RDMA device %s has netdev %s: renamed? set its netdev in the inventory and render again' \
            "$nic_rdma" "${now[*]}"
    fi
}

# rt_rdma_gone: "" while the NIC's RDMA device is in /sys/class/infiniband; else (its netdev answered) why it is
# gone and what to do: the RDMA device(s) the netdev's PCI function has now (device/infiniband/: a rename,
# `rdma dev set ... name`), or none (mlx5_ib not loaded, the function unbound from RDMA).
rt_rdma_gone() {
    [[ ! -e "${SYSROOT}/sys/class/infiniband/$nic_rdma" ]] || return 0
    local now=() d
    for d in "${SYSROOT}/sys/class/net/$nic_dev/device/infiniband/"*; do
        [[ -e "$d" ]] && now+=("${d##*/}")
    done
    printf 'RDMA device %s missing (no /sys/class/infiniband/%s) while netdev %s is present' \
        "$nic_rdma" "$nic_rdma" "$nic_dev"
    if [[ -n "${now[*]-}" ]]; then
        printf '; the PCI function of %s has RDMA device %s: renamed? set its rdma_device in the inventory and %s' \
            "$nic_dev" "${now[*]}" "render again"
    else
        printf ': no RDMA driver bound to it (mlx5_ib not loaded?): load it (modprobe mlx5_ib) and run again'
    fi
}

# Parsers of "mlnx_qos -i <netdev>" output (Mellanox/mlnx-tools python/mlnx_qos pretty_print).
rt_qos_trust() { sed -n 's/^Priority trust state: *//p' <<<"$1"; }
rt_qos_cable() { sed -n 's/^Cable len: *//p' <<<"$1"; }
rt_qos_pfc() {
    awk '/^PFC configuration:/ { f = 1; next }
         f && $1 == "enabled" { for (i = 2; i <= 9; i++) printf "%s%s", (i > 2 ? "," : ""), $i; exit }' <<<"$1"
}
# rt_qos_dscp2prio_all TEXT: every DSCP->priority entry the report lists, as "set,DSCP,PRIO" lines.
rt_qos_dscp2prio_all() {
    awk '/prio:[0-7] dscp:/ {
        p = $0; sub(/.*prio:/, "", p); sub(/ .*/, "", p)
        l = $0; sub(/.*dscp:/, "", l); n = split(l, v, ",")
        for (i = 1; i <= n; i++) if (v[i] != "") printf "set,%d,%s\n", v[i] + 0, p
    }' <<<"$1"
}
# rt_qos_map TEXT: the report's DSCP->priority entries into RT_MAP (index DSCP, value priority), read with
# one awk run; empty when it lists none (PCP trust). A DSCP it does not list has no RT_MAP entry.
RT_MAP=()
rt_qos_map() {
    local d p
    RT_MAP=()
    while IFS=, read -r _ d p; do RT_MAP[d]="$p"; done < <(rt_qos_dscp2prio_all "$1")
}
# What the read-back names as the running priority of a DSCP the report leaves out while it lists others: its
# app entry was deleted (mlnx_qos --dscp2prio del,...), and the mlx5 driver then maps it to priority 0
# (en_dcbnl.c mlx5e_dcbnl_ieee_delapp).
RT_DSCP_UNLISTED='0 (no dscp2prio entry)'
# ... and of every planned DSCP when the report lists no DSCP map at all (PCP trust: `mlnx_qos --trust pcp`, or
# the last entry deleted, which puts the NIC on PCP trust).
RT_DSCP_NO_MAP='none (the NIC lists no DSCP map: its dscp2prio entries were deleted or trust is pcp)'
# rt_dscp_entry ENTRY: one RT_DSCP2PRIO entry into rt_s dscp prio (value set, DSCP, priority).
rt_dscp_entry() { rt_s="${1%% *}"; dscp="${1#* }"; prio="${dscp#* }"; dscp="${dscp%% *}"; }
# Global (IEEE 802.3x) pause, from "ethtool -a <netdev>": ethtool prints "RX:" and "TX:" then on/off
# (netlink/pause.c; the "RX negotiated:" lines are only the autonegotiation result).
RT_PAUSE_OFF='rx off tx off'
RT_PAUSE_RE='^rx (on|off) tx (on|off)$'
# rt_pfc_on PFC_VECTOR: true when the port has PFC on a priority (global pause must then be off).
rt_pfc_on() { [[ ",$1," == *,1,* ]]; }
# rt_pause_parse TEXT: "rx on|off tx on|off" from ethtool -a output (<missing> for a line it lacks).
rt_pause_parse() {
    local rx tx
    rx="$(sed -n 's/^RX:[[:space:]]*//p' <<<"$1")"
    tx="$(sed -n 's/^TX:[[:space:]]*//p' <<<"$1")"
    printf 'rx %s tx %s' "${rx:-<missing>}" "${tx:-<missing>}"
}
# rt_pause_state NETDEV: its global pause as rt_pause_parse gives it, or <ethtool -a failed>.
rt_pause_state() {
    local out
    out="$(ethtool -a "$1" 2>/dev/null)" || { printf '<ethtool -a failed>'; return 0; }
    rt_pause_parse "$out"
}
rt_link_mtu() { ip -o link show dev "$1" | awk '{ for (i = 1; i < NF; i++) if ($i == "mtu") { print $(i + 1); exit } }'; }
# rt_tclass PATH: the mlx5 global traffic class, "" when unset (or negative), or <missing>. The driver prints
# "Global tclass=<n>" only while it is set, then one line per address rule ("dst_ip=A/len,tclass=<n>",
# "src_ip6=..."; MLNX_OFED mlx5_ib traffic_class_show): a rule line is never the global value.
rt_tclass() {
    local v
    v="$(rt_read "$1")"
    case "$v" in
        *_ip=* | *_ip6=* | -[0-9]*) ;;  # (a negative value is the driver's unset)
        *) printf '%s' "${v#Global tclass=}" ;;
    esac
}

# Boot persistence: where the push installs this host's script, the systemd unit and the udev rule.
RT_PERSIST_SCRIPT="${SYSROOT}"/usr/local/lib/roce-tune/host.sh
RT_UNIT_NAME=roce-tune-host.service
RT_UNIT_FILE="${SYSROOT}"/etc/systemd/system/roce-tune-host.service
RT_UDEV_FILE="${SYSROOT}"/etc/udev/rules.d/90-roce-tune-host.rules
RT_AS_PLANNED='as planned'
IFS= read -r -d '' RT_UNIT_TEXT <<'RT_UNIT_END' || true
# roce-tune: re-applies this host's NIC QoS after boot (roce-tune 0.1.0) -- do not edit, re-render instead.
# Installed as /etc/systemd/system/roce-tune-host.service by the host script itself
# (`roce-tune apply`, playbooks/push.yml), with /usr/local/lib/roce-tune/host.sh (this host's script)
# and /etc/udev/rules.d/90-roce-tune-host.rules.
[Unit]
Description=roce-tune: re-apply RoCE QoS (DSCP trust, PFC, cable length, RoCE TOS, DCQCN) to the NICs
Documentation=man:systemd.service(5)
# the MLNX_OFED/DOCA driver stack (openibd) loads first where it is a service; the NICs' netdevs may still
# appear later (udev loads drivers asynchronously): the udev rule re-runs this unit for each one
After=openibd.service systemd-modules-load.service
Before=network-online.target
ConditionPathExists=/usr/local/lib/roce-tune/host.sh

[Service]
Type=oneshot
RemainAfterExit=yes
# --boot: a planned NIC that is missing, or whose step fails, is named and left out; the others are
# configured and the run fails
ExecStart=/bin/bash /usr/local/lib/roce-tune/host.sh --boot
# a failure stays failed (no Restart=): `systemctl status roce-tune-host.service` shows the script's message
TimeoutStartSec=180

[Install]
WantedBy=multi-user.target
RT_UNIT_END
IFS= read -r -d '' RT_UDEV_TEXT <<'RT_UDEV_END' || true
# roce-tune (roce-tune 0.1.0) -- do not edit, re-render instead. Installed as /etc/udev/rules.d/90-roce-tune-host.rules.
# Driver reload, firmware reset, devlink reload and error recovery bring the NIC back with the driver's
# defaults: re-run roce-tune-host.service (this host's script) for each mlx5 netdev or RDMA device that appears.
ACTION=="add", SUBSYSTEM=="net", DRIVERS=="mlx5_core", TEST=="/etc/systemd/system/roce-tune-host.service", RUN+="/bin/systemctl --no-block restart roce-tune-host.service"
ACTION=="add", SUBSYSTEM=="infiniband", DRIVERS=="mlx5_core", TEST=="/etc/systemd/system/roce-tune-host.service", RUN+="/bin/systemctl --no-block restart roce-tune-host.service"
RT_UDEV_END

# rt_self: this host's whole script as one file, as `roce-tune apply` sends it: the running file itself,
# or (run as hosts/<name>.sh) the data file up to its shared-script line, then this file without its #! line.
rt_self() {
    local top="${BASH_SOURCE[-1]}" here="${BASH_SOURCE[0]}"
    if [[ ! -r "$top" || ! -r "$here" ]]; then
        echo "roce-tune: cannot read the running script ($top) to install it; run it from a file" >&2
        exit 2
    fi
    if [[ "$top" -ef "$here" ]]; then
        printf '%s' "$(< "$top")"
    else
        printf '%s\n%s' "$(sed -n '1,/^# ----- the shared host script -----$/p' "$top")" "$(tail -n +2 "$here")"
    fi
}

# rt_file_state PATH TEXT: 'as planned' when PATH holds TEXT, else missing or stale.
rt_file_state() {
    if [[ ! -e "$1" ]]; then
        printf 'missing'
    elif [[ "$(< "$1")" == "${2%$'\n'}" ]]; then
        printf '%s' "$RT_AS_PLANNED"
    else
        printf 'stale (differs from the plan)'
    fi
}

# rt_install PATH MODE TEXT: write TEXT to PATH unless it holds it already: a temp file in PATH's
# directory, then rename (never half-written); sets rt_changed=1. A failure stops the script: exit 2.
rt_install() {
    [[ "$(rt_file_state "$1" "$3")" != "$RT_AS_PLANNED" ]] || return 0
    local err
    if ! err="$( { mkdir -p -- "$(dirname -- "$1")" && t="$(mktemp "$(dirname -- "$1")/.roce-tune.XXXXXX")" &&
                   { { printf '%s' "$3" > "$t" && chmod "$2" "$t" && mv -f -- "$t" "$1"; } ||
                     { rm -f -- "$t"; false; }; }; } 2>&1 )"; then
        printf 'roce-tune: %s: installing %s failed: %s\n' "$RT_HOST" "$1" "${err//$'\n'/ | }" >&2
        exit 2
    fi
    rt_changed=1
}

# rt_unit_enabled: what `systemctl is-enabled` says of the unit (enabled, disabled, masked ...), or not-found.
rt_unit_enabled() {
    local state
    state="$(systemctl is-enabled "$RT_UNIT_NAME" 2>/dev/null)" || true
    printf '%s' "${state:-not-found}"
}

# rt_nic LINE: one RT_NICS entry into nic_dev nic_rdma nic_port nic_trust nic_pfc nic_cable nic_mtu
# nic_tos nic_set (netdev, RDMA device and port, trust, PFC vector, cable metres, MTU, TOS, value set).
rt_nic() { read -r nic_dev nic_rdma nic_port nic_trust nic_pfc nic_cable nic_mtu nic_tos nic_set <<<"$1"; }

# rt_save ARG...: append one command (every argument shell-quoted) to the restore point. A file that
# does not exist is noted only (rt_write never creates one); a value that could not be read (empty)
# makes an rt_lost line instead (not restorable; FILE then exits 3).
rt_save() {
    local a
    for a in "$@"; do
        if [[ "$a" == "<missing>" ]]; then
            printf '# absent before the change, so never written: %s\n' "${*//$'\n'/ }" >> "$RT_SAVE"
            return 0
        fi
        if [[ -z "$a" ]]; then
            printf 'rt_lost %q\n' "$*" >> "$RT_SAVE"
            return 0
        fi
    done
    printf '%q ' "$@" >> "$RT_SAVE"
    printf '\n' >> "$RT_SAVE"
}

# rt_nic_ready LINE: before anything changes, one NIC's netdev must answer mlnx_qos (and, with PFC,
# ethtool -a), its RDMA device port must give its RDMA-CM ToS, and its MLNX_OFED/DOCA sysfs
# (tc/<port>/traffic_class, the ecn/ directory) must exist; else it names what failed and exits 2.
rt_nic_ready() {
    rt_nic "$1"
    local gone rc=0
    RT_OUT="$(mlnx_qos -i "$nic_dev" 2>&1)" || rc=$?
    if (( rc != 0 )); then  # (a netdev that is gone: said so, and its new name when it was renamed)
        gone="$(rt_netdev_gone)"
        printf 'roce-tune: %s: mlnx_qos -i %s failed (exit %d): %s%s\n' "$RT_HOST" "$nic_dev" "$rc" \
            "${RT_OUT//$'\n'/ | }" "${gone:+; $gone}" >&2
        exit 2
    fi
    gone="$(rt_rdma_gone)"
    if [[ -n "$gone" ]]; then
        printf 'roce-tune: %s: cma_roce_tos -d %s -p %s: %s\n' "$RT_HOST" "$nic_rdma" "$nic_port" "$gone" >&2
        exit 2
    fi
    rt_run cma_roce_tos -d "$nic_rdma" -p "$nic_port"
    if [[ ! "${RT_OUT##*$'\n'}" =~ ^[0-9]+$ ]]; then
        printf 'roce-tune: %s: cma_roce_tos -d %s -p %s (netdev %s) gives no ToS: %s\n' \
            "$RT_HOST" "$nic_rdma" "$nic_port" "$nic_dev" "${RT_OUT//$'\n'/ | }" >&2
        exit 2
    fi
    rt_need "${SYSROOT}/sys/class/infiniband/$nic_rdma/tc/$nic_port/traffic_class"
    rt_need "${SYSROOT}/sys/class/net/$nic_dev/ecn"
    if rt_pfc_on "$nic_pfc"; then
        rt_run ethtool -a "$nic_dev"
        if [[ ! "$(rt_pause_parse "$RT_OUT")" =~ $RT_PAUSE_RE ]]; then
            printf 'roce-tune: %s: ethtool -a %s gives no RX/TX pause state: %s\n' \
                "$RT_HOST" "$nic_dev" "${RT_OUT//$'\n'/ | }" >&2
            exit 2
        fi
    fi
}

# Every NIC is checked (rt_nic_ready) before anything changes. A device this host lacks (a dead NIC, a wrong
# rdma_device/rdma_port) or the inbox mlx5 driver (which has neither sysfs) stops the run here, exit 2,
# instead of half-way through: a push rolls back and says so. (A single ECN knob a driver version lacks
# still stops the script at its write, exit 2.) At boot (--boot, the systemd unit: no one watches and no
# rollback follows) such a NIC is named and left out and every other NIC is configured: else one dead NIC
# leaves the healthy ones on PCP trust with PFC off, lossy RoCE into a lossless fabric. The run then ends
# with exit 4, so `systemctl status` shows the unit failed; the udev rule re-runs it when the NIC appears.
if (( RT_CHECK == 0 )); then
rt_ready=()
for rt_n in "${RT_NICS[@]}"; do
    rt_rc=0
    ( rt_nic_ready "$rt_n" ) || rt_rc=$?  # (a subshell: its exit 2 ends only this NIC's check)
    if (( rt_rc == 0 )); then
        rt_ready+=("$rt_n")
        continue
    fi
    (( RT_BOOT == 1 )) || exit "$rt_rc"
    rt_nic "$rt_n"
    RT_MISSING+=("$nic_dev ($nic_rdma port $nic_port)")
    printf 'roce-tune: %s: boot run: NIC %s (%s port %s) is missing or not ready: not configured\n' \
        "$RT_HOST" "$nic_dev" "$nic_rdma" "$nic_port" >&2
done
if (( RT_BOOT == 1 && ${#rt_ready[@]} == 0 )); then
    printf 'roce-tune: %s: boot run: none of the %d planned NICs is ready; nothing was changed\n' \
        "$RT_HOST" "${#RT_NICS[@]}" >&2
    exit 4
fi
RT_NICS=("${rt_ready[@]}")
fi

# ===== snapshot =====
if [[ -n "$RT_SAVE" ]]; then
# Values that cannot be read (empty or missing) become rt_lost lines in FILE: not restorable, exit 3.
# FILE is written whole or not at all: a temp file beside it, renamed once complete. A run stopped before
# then (a signal, a full disk, a tool that fails) removes it and exits 2; nothing was changed yet.

RT_SAVE_FILE="$RT_SAVE"
if ! RT_SAVE="$(mktemp "$(dirname -- "$RT_SAVE_FILE")/.roce-tune-restore.XXXXXX" 2>&1)"; then
    printf 'roce-tune: %s: cannot write the restore point %s: %s; nothing was changed\n' \
        "$RT_HOST" "$RT_SAVE_FILE" "${RT_SAVE##*: }" >&2
    exit 2
fi
# line 3 of FILE: the sha256 of the rest, which FILE checks before it puts anything back (a copy cut short
# or changed by hand stops it, exit 2)
RT_SUM_LINE='# sha256 of line 4 to the end: PENDING'
# rt_save_stopped: the EXIT trap while FILE is being written: exit 2 (130, 143, 129 after a signal)
rt_save_stopped() {
    local rc=$?
    rm -f -- "$RT_SAVE"
    printf 'roce-tune: %s: writing the restore point %s stopped (exit %d); nothing was changed\n' \
        "$RT_HOST" "$RT_SAVE_FILE" "$rc" >&2
    exit $(( rc > 128 ? rc : 2 ))
}
trap rt_save_stopped EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
{
    printf '#!/usr/bin/env bash\n# roce-tune restore point for %s, taken %s before applying the plan\n' \
        "$RT_HOST" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    printf '%s\n' "$RT_SUM_LINE"
    cat <<'RT_RESTORE_HEAD'
[[ ! -f "${BASH_SOURCE[0]-}" ]] || [[ "$(tail -n +4 -- "${BASH_SOURCE[0]}" | sha256sum)" == "$(sed -n '3s/^# sha256 of line 4 to the end: \([0-9a-f]\{64\}\)$/\1  -/p' -- "${BASH_SOURCE[0]}")" ]] || { echo "roce-tune restore: ${BASH_SOURCE[0]} is not the whole restore point roce-tune wrote (cut short or changed: its sha256 differs); nothing was put back" >&2; exit 2; }
# The rest is one block: bash reads it whole before it runs any of it, so a file cut short runs nothing.
{
# Runs every line even if one fails. Exit 0: every value put back; 1: a command failed;
# 3: values that could not be read before the change (rt_lost lines) were left as the plan set them.
set -uo pipefail
RT_FAIL=0
RT_LOST=0
rt_do() { "$@" >/dev/null || { echo "roce-tune restore: failed: $*" >&2; RT_FAIL=1; }; }
rt_put() { printf '%s\n' "$2" > "$1" || { echo "roce-tune restore: failed: $1" >&2; RT_FAIL=1; }; }
rt_lost() { echo "roce-tune restore: not restorable: $*" >&2; RT_LOST=$((RT_LOST + 1)); }
# rt_file PATH MODE TEXT: put a file back as it was (temp file, then rename)
rt_file() {
    local t
    t="$(mktemp "$(dirname -- "$1")/.roce-tune.XXXXXX")" && printf '%s\n' "$3" > "$t" && chmod "$2" "$t" &&
        mv -f -- "$t" "$1" || { rm -f -- "${t:-}"; echo "roce-tune restore: failed: $1" >&2; RT_FAIL=1; }
}
# rt_unit_gone UNIT PATH: the unit did not exist before: disable it and remove its file
rt_unit_gone() {
    if [[ -e "$2" ]]; then rt_do systemctl disable "$1"; rt_do rm -f -- "$2"; fi
}
# rt_pause NETDEV RX TX: put global pause back; ethtool -A only when it differs (exit 78 otherwise)
rt_pause() {
    [[ "$(rt_pause_state "$1")" == "rx $2 tx $3" ]] || rt_do ethtool -A "$1" rx "$2" tx "$3"
}
# rt_dscp_gone NETDEV DSCP PRIO: DSCP had no entry (the NIC mapped it to priority 0): delete the entry the
# run set, DSCP -> PRIO, when the NIC lists it (the driver deletes only an entry that holds PRIO)
rt_dscp_gone() {
    local qos
    qos="$(mlnx_qos -i "$1")" || { echo "roce-tune restore: failed: mlnx_qos -i $1" >&2; RT_FAIL=1; return; }
    if grep -qx "set,$2,$3" < <(rt_qos_dscp2prio_all "$qos"); then
        rt_do mlnx_qos -i "$1" --dscp2prio "del,$2,$3"
    fi
}
# rt_here PATH WAS: PATH (this machine's id, hashed: rt_ident; a NIC's MAC address) read WAS when the restore
# point was taken
RT_OTHER=()
rt_here() {
    local now
    now="$(rt_ident "$1")"
    [[ "$now" == "<missing>" || "$now" == "$2" ]] || RT_OTHER+=("$1 was '$2', is '$now'")
}
RT_RESTORE_HEAD
    declare -f rt_read rt_ident
    # the machine and every NIC it was taken on (a value that cannot be read then or now is not compared)
    for rt_id in "${SYSROOT}/etc/machine-id" "${RT_NICS[@]}"; do
        [[ "$rt_id" == /* ]] || { rt_nic "$rt_id"; rt_id="${SYSROOT}/sys/class/net/$nic_dev/address"; }
        rt_was="$(rt_ident "$rt_id")"
        [[ -z "$rt_was" || "$rt_was" == "<missing>" ]] || printf 'rt_here %q %q\n' "$rt_id" "$rt_was"
    done
    cat <<'RT_RESTORE_OTHER'
if [[ -n "${RT_OTHER[*]-}" ]]; then
    printf -v RT_OTHER_TEXT '%s; ' "${RT_OTHER[@]}"
    echo "roce-tune restore: taken on another machine or NIC: ${RT_OTHER_TEXT%; }; nothing was put back" >&2
    exit 2
fi
RT_RESTORE_OTHER
    printf 'RT_LOCK_FILE=%q\n' "$RT_LOCK_FILE"
    cat <<'RT_RESTORE_LOCK'
# One run at a time: take the lock every run of the host script holds (else the boot unit, which udev starts
# when a NIC comes back, could write the NIC alongside). Wait for it up to 180 s, the unit's time limit;
# then stop before putting anything back: exit 2, run this file again when that run ends.
if ! { mkdir -p -- "${RT_LOCK_FILE%/*}" && exec {RT_LOCK_FD}>>"$RT_LOCK_FILE"; } 2>/dev/null ||
    ! flock -w 180 "$RT_LOCK_FD"; then
    echo "roce-tune restore: another run of the roce-tune host script holds $RT_LOCK_FILE (or it cannot be" \
        "opened); nothing was put back: run this file again when that run ends" >&2
    exit 2
fi
RT_RESTORE_LOCK
    declare -f rt_pause_parse rt_pause_state rt_qos_dscp2prio_all
} > "$RT_SAVE"
for rt_n in "${RT_NICS[@]}"; do
    rt_nic "$rt_n"
    qos="$(mlnx_qos -i "$nic_dev")"
    trust="$(rt_qos_trust "$qos")"
    # DSCP map entries, put back before the trust below. Found on DSCP trust: each entry the apply will change
    # (it sets only those that differ), in one call. Found on PCP trust: no DSCP entry is in use, and putting pcp trust
    # back takes every one the run set out of use (mlnx_qos over dcbnl deletes them; with the older
    # qos/trust sysfs they stay, unused), so there is nothing to save.
    rt_qos_map "$qos"
    noted=0
    rt_was=()
    for rt_e in ${RT_DSCP2PRIO[@]+"${RT_DSCP2PRIO[@]}"}; do
        rt_dscp_entry "$rt_e"
        [[ "$rt_s" == "$nic_set" ]] || continue
        was="${RT_MAP[dscp]-}"
        if [[ "$trust" == pcp ]]; then
            (( noted )) || printf '# %s: trust pcp before the change, no DSCP map in use: the pcp trust put %s\n' \
                "$nic_dev" "back below takes the DSCP entries the run set out of use" \
                >> "$RT_SAVE"
            noted=1
        elif [[ "$trust" == dscp && -z "$was" && -n "${RT_MAP[*]-}" ]]; then
            # DSCP trust, the report lists other entries but not this one: it was deleted, and the NIC maps it
            # to priority 0 (mlx5e_dcbnl_ieee_delapp); the apply sets it, the restore deletes it again
            rt_save rt_dscp_gone "$nic_dev" "$dscp" "$prio"
        elif [[ "$trust" != dscp || -z "$was" ]]; then  # (an unreadable trust, or DSCP trust without any entry)
            rt_save rt_lost "$nic_dev" dscp2prio "$dscp" "(trust was '$trust')"
        elif [[ "$was" != "$prio" ]]; then
            rt_was+=(--dscp2prio "set,$dscp,$was")
        fi
    done
    if [[ -n "${rt_was[*]-}" ]]; then  # every entry the apply changes, put back in one call
        rt_save rt_do mlnx_qos -i "$nic_dev" "${rt_was[@]}"
    fi
    if [[ "$trust" == dscp && "$nic_trust" != dscp ]]; then
        # the plan's trust drops the whole DSCP map found (over dcbnl mlnx_qos --trust pcp deletes every entry,
        # and --trust dscp alone brings back only the default one): put back every entry found, in one call
        rt_map=()
        while IFS= read -r rt_m; do rt_map+=(--dscp2prio "$rt_m"); done < <(rt_qos_dscp2prio_all "$qos")
        if [[ -n "${rt_map[*]-}" ]]; then rt_save rt_do mlnx_qos -i "$nic_dev" "${rt_map[@]}"; fi
    fi
    rt_save rt_do mlnx_qos -i "$nic_dev" --pfc "$(rt_qos_pfc "$qos")" --cable_len "$(rt_qos_cable "$qos")"
    if rt_pfc_on "$nic_pfc"; then  # (after PFC: the restore turns PFC back first, then global pause)
        read -r _ rx _ tx <<<"$(rt_pause_state "$nic_dev")"
        rt_save rt_pause "$nic_dev" "$rx" "$tx"
    fi
    rt_save rt_do mlnx_qos -i "$nic_dev" --trust "$trust"
    rt_save rt_do ip link set dev "$nic_dev" mtu "$(rt_link_mtu "$nic_dev")"
    rt_save rt_do cma_roce_tos -d "$nic_rdma" -p "$nic_port" -t "$(cma_roce_tos -d "$nic_rdma" -p "$nic_port" | tail -n 1)"
    # an unset global traffic class reads back empty; the mlx5 driver takes -1 to unset it again
    tclass_file="${SYSROOT}/sys/class/infiniband/$nic_rdma/tc/$nic_port/traffic_class"
    tclass="$(rt_tclass "$tclass_file")"
    rt_save rt_put "$tclass_file" "${tclass:--1}"
    case "$(cma_roce_mode -d "$nic_rdma" -p "$nic_port" | tail -n 1)" in
        'IB/RoCE v1'*) rt_save rt_do cma_roce_mode -d "$nic_rdma" -p "$nic_port" -m 1 ;;
        'RoCE v2'*) rt_save rt_do cma_roce_mode -d "$nic_rdma" -p "$nic_port" -m 2 ;;
        *) rt_save rt_lost "$nic_rdma" roce_mode "(unknown mode)" ;;
    esac
    for rt_w in "${RT_ECN[@]}"; do
        read -r rt_s file value <<<"$rt_w"
        [[ "$rt_s" == "$nic_set" ]] || continue
        ecn_file="${SYSROOT}/sys/class/net/$nic_dev/ecn/$file"
        rt_save rt_put "$ecn_file" "$(rt_read "$ecn_file")"
    done
done
# the boot files and the unit's enable state as found (a file that did not exist is removed again; a
# symbolic link, such as the /dev/null of `systemctl mask`, is put back as the link)
rt_save_file() {
    if [[ -L "$1" ]]; then
        rt_save rt_do ln -sfn -- "$(readlink -- "$1")" "$1"
    elif [[ -e "$1" ]]; then
        printf 'rt_file %q %q %q\n' "$1" "$(stat -c %a -- "$1")" "$(< "$1")" >> "$RT_SAVE"
    else
        rt_save rt_do rm -f -- "$1"
    fi
}
if [[ -L "$RT_UNIT_FILE" && "$(readlink -- "$RT_UNIT_FILE")" == /dev/null ]]; then
    # masked: the push installs and enables the unit; disable it (while its file is the push's), then mask again
    rt_save rt_do systemctl disable "$RT_UNIT_NAME"
    rt_save_file "$RT_UNIT_FILE"
elif [[ -e "$RT_UNIT_FILE" ]]; then
    rt_save_file "$RT_UNIT_FILE"
    if [[ "$(rt_unit_enabled)" == enabled ]]; then
        rt_save rt_do systemctl enable "$RT_UNIT_NAME"
    else
        rt_save rt_do systemctl disable "$RT_UNIT_NAME"
    fi
else
    rt_save rt_unit_gone "$RT_UNIT_NAME" "$RT_UNIT_FILE"
fi
rt_save_file "$RT_PERSIST_SCRIPT"
rt_save_file "$RT_UDEV_FILE"
rt_save rt_do systemctl daemon-reload
rt_save rt_do udevadm control --reload

cat >> "$RT_SAVE" <<'RT_RESTORE_TAIL'
if (( RT_FAIL == 0 && RT_LOST > 0 )); then exit 3; fi
exit "$RT_FAIL"
}
RT_RESTORE_TAIL
rt_sum="$(tail -n +4 -- "$RT_SAVE" | sha256sum)"
sed -i "3s/.*/${RT_SUM_LINE%PENDING}${rt_sum%% *}/" -- "$RT_SAVE"
mv -f -- "$RT_SAVE" "$RT_SAVE_FILE"
trap - EXIT INT TERM HUP
RT_SAVE="$RT_SAVE_FILE"
fi

# rt_nic_steps: the per-NIC sections (pause, qos, mtu, tos, dcqcn), each over every NIC in RT_NICS.
rt_nic_steps() {

# ===== pause =====
if (( RT_CHECK == 0 )); then
# A port with PFC has global pause off in both directions: a global pause frame stops every priority,
# lossy ones too, and ConnectX ports start with it on (NVIDIA "Flow Control", ConnectX-4 and above:
# disable global pause, then enable PFC). ethtool -A only when it differs: ethtool's ioctl path
# refuses a request that changes nothing (exit 78); mlx5 refuses pause autonegotiation, never asked for.
for rt_n in "${RT_NICS[@]}"; do
    rt_nic "$rt_n"
    rt_pfc_on "$nic_pfc" || continue
    [[ "$(rt_pause_state "$nic_dev")" == "$RT_PAUSE_OFF" ]] || rt_run ethtool -A "$nic_dev" rx off tx off
done
fi

# ===== qos =====
if (( RT_CHECK == 0 )); then
# --pfc and --cable_len in one call: mlnx_qos sends both in one PFC update and zeroes the one left out.
# The mlx5 driver sizes the receive-buffer xoff from the cable length only in manual buffer mode (after a
# --buffer_size/--prio2buffer change); in its default mode the firmware's own buffer sizes apply and the
# cable length is only kept. A change of the PFC vector toggles the port link (mlx5 en_dcbnl.c).
for rt_n in "${RT_NICS[@]}"; do
    rt_nic "$rt_n"
    rt_run mlnx_qos -i "$nic_dev" --trust "$nic_trust"
    rt_run mlnx_qos -i "$nic_dev" --pfc "$nic_pfc" --cable_len "$nic_cable"
    rt_qos_map "$RT_OUT"  # its report shows the DSCP map as the trust above left it
    # only the entries that differ (the restore point saved exactly those: snapshot section), all in one call
    rt_set=()
    for rt_e in ${RT_DSCP2PRIO[@]+"${RT_DSCP2PRIO[@]}"}; do
        rt_dscp_entry "$rt_e"
        if [[ "$rt_s" == "$nic_set" && "${RT_MAP[dscp]-}" != "$prio" ]]; then
            rt_set+=(--dscp2prio "set,$dscp,$prio")
        fi
    done
    if [[ -n "${rt_set[*]-}" ]]; then
        rt_run mlnx_qos -i "$nic_dev" "${rt_set[@]}"
    fi
done
fi

# ===== mtu =====
if (( RT_CHECK == 0 )); then
for rt_n in "${RT_NICS[@]}"; do
    rt_nic "$rt_n"
    rt_run ip link set dev "$nic_dev" mtu "$nic_mtu"
done
fi

# ===== tos =====
if (( RT_CHECK == 0 )); then
# TOS = DSCP << 2 | ECT(0); RDMA-CM uses RoCE v2 (cma_roce_mode -m 2).
for rt_n in "${RT_NICS[@]}"; do
    rt_nic "$rt_n"
    rt_run cma_roce_tos -d "$nic_rdma" -p "$nic_port" -t "$nic_tos"
    tclass="$nic_tos"
    (( RT_TCLASS_GLOBAL )) || tclass=-1
    rt_write "${SYSROOT}/sys/class/infiniband/$nic_rdma/tc/$nic_port/traffic_class" "$tclass"
    rt_run cma_roce_mode -d "$nic_rdma" -p "$nic_port" -m 2
done
fi

# ===== dcqcn =====
if (( RT_CHECK == 0 )); then
for rt_n in "${RT_NICS[@]}"; do
    rt_nic "$rt_n"
    for rt_w in "${RT_ECN[@]}"; do
        read -r rt_s file value <<<"$rt_w"
        [[ "$rt_s" == "$nic_set" ]] || continue
        rt_write "${SYSROOT}/sys/class/net/$nic_dev/ecn/$file" "$value"
    done
done
fi
}

# A run takes the per-NIC sections over every NIC and stops at the first step that fails, exit 2 (a push rolls
# back). --boot takes each NIC through them on its own, in a subshell: a NIC whose step fails (a tool that
# refuses, a sysfs value the driver refuses) is named and left out, every other NIC is still configured, and
# the run ends with exit 4 (1 if a value did not read back) naming each NIC that failed.
if (( RT_CHECK == 0 )); then
if (( RT_BOOT == 1 )); then
    rt_done=()
    for rt_n in "${RT_NICS[@]}"; do
        set +e
        ( set -e; RT_NICS=("$rt_n"); rt_nic_steps )  # (not in a || list: set -e holds in the subshell)
        rt_rc=$?
        set -e
        if (( rt_rc == 0 )); then
            rt_done+=("$rt_n")
            continue
        fi
        rt_nic "$rt_n"
        RT_FAILED+=("$nic_dev ($nic_rdma port $nic_port)")
        printf 'roce-tune: %s: boot run: NIC %s (%s port %s) failed part-way (exit %d, above): left out\n' \
            "$RT_HOST" "$nic_dev" "$nic_rdma" "$nic_port" "$rt_rc" >&2
    done
    RT_NICS=(${rt_done[@]+"${rt_done[@]}"})
else
    rt_nic_steps
fi
fi

# ===== persist =====
if (( RT_CHECK == 0 )); then
# Each file is written only when it differs from the plan (temp file in its directory, then rename);
# systemd and udev re-read their files only after a change; the unit is enabled, not started (this run
# has just set the values). A refused step stops the script: exit 2 (a push then rolls back, files included).
rt_changed=0
rt_install "$RT_PERSIST_SCRIPT" 0755 "$(rt_self)"$'\n'
rt_install "$RT_UNIT_FILE" 0644 "$RT_UNIT_TEXT"
rt_install "$RT_UDEV_FILE" 0644 "$RT_UDEV_TEXT"
if (( rt_changed == 1 )); then
    rt_run systemctl daemon-reload
    rt_run udevadm control --reload
fi
if [[ "$(rt_unit_enabled)" != enabled ]]; then
    rt_run systemctl enable "$RT_UNIT_NAME"
fi
fi

# ===== alternatives =====
# Alternatives to the ECN sysfs above (not run by this script), with the values of RT_ECN:
# * inbox kernel driver (no /sys/class/net/<if>/ecn): debugfs, runtime, per PCI function (each NIC's PCI
#   address is in the data file): echo VALUE > /sys/kernel/debug/mlx5/<pci>/cc_params/<debugfs name>
#   (names from drivers/infiniband/hw/mlx5/cong.c).
# * firmware NV config: persistent, takes effect after a firmware reset (mlxfwreset) or reboot:
#   mlxconfig -d <pci> -y set <key>_P<rdma port>=VALUE ... (the data file lists each NIC's keys).
# ecn/<file>                         debugfs cc_params       mlxconfig key
# roce_rp/rpg_time_reset             rp_time_reset           RPG_TIME_RESET
# roce_rp/rpg_byte_reset             rp_byte_reset           RPG_BYTE_RESET
# roce_rp/rpg_threshold              rp_threshold            RPG_THRESHOLD
# roce_rp/rpg_max_rate               rp_max_rate             RPG_MAX_RATE
# roce_rp/rpg_ai_rate                rp_ai_rate              RPG_AI_RATE
# roce_rp/rpg_hai_rate               rp_hai_rate             RPG_HAI_RATE
# roce_rp/rpg_gd                     rp_gd                   RPG_GD
# roce_rp/rpg_min_dec_fac            rp_min_dec_fac          RPG_MIN_DEC_FAC
# roce_rp/rpg_min_rate               rp_min_rate             RPG_MIN_RATE
# roce_rp/rate_to_set_on_first_cnp   rp_rate_to_set_on_first_cnp RATE_TO_SET_ON_FIRST_CNP
# roce_rp/dce_tcp_g                  rp_dce_tcp_g            DCE_TCP_G
# roce_rp/dce_tcp_rtt                rp_dce_tcp_rtt          DCE_TCP_RTT
# roce_rp/rate_reduce_monitor_period rp_rate_reduce_monitor_period RATE_REDUCE_MONITOR_PERIOD
# roce_rp/initial_alpha_value        rp_initial_alpha_value  INITIAL_ALPHA_VALUE
# roce_rp/clamp_tgt_rate             rp_clamp_tgt_rate       CLAMP_TGT_RATE
# roce_rp/clamp_tgt_rate_after_time_inc rp_clamp_tgt_rate_ati   CLAMP_TGT_RATE_AFTER_TIME_INC
# roce_np/min_time_between_cnps      np_min_time_between_cnps MIN_TIME_BETWEEN_CNPS
# roce_np/cnp_dscp                   np_cnp_dscp             CNP_DSCP
# roce_np/cnp_802p_prio              np_cnp_prio             CNP_802P_PRIO
# roce_np|roce_rp/enable/<prio>      -                       ROCE_CC_PRIO_MASK (bit per prio)

# ===== readback =====
for rt_n in "${RT_NICS[@]}"; do
    rt_nic "$rt_n"
    # a NIC that is gone or whose mlnx_qos fails is named once, with the tool's message (rt_nic_absent)
    rt_rc=0
    qos="$(mlnx_qos -i "$nic_dev" 2>&1)" || rt_rc=$?
    if (( rt_rc != 0 )); then
        rt_nic_absent "$rt_rc" "$qos"
        continue
    fi
    rt_expect "$nic_dev" trust "$nic_trust" "$(rt_qos_trust "$qos")"
    rt_expect "$nic_dev" pfc "$nic_pfc" "$(rt_qos_pfc "$qos")"
    rt_expect "$nic_dev" cable_len "$nic_cable" "$(rt_qos_cable "$qos")"
    if rt_pfc_on "$nic_pfc"; then
        rt_expect "$nic_dev" global_pause "$RT_PAUSE_OFF" "$(rt_pause_state "$nic_dev")"
    fi
    # the whole DSCP map: one line per entry that differs; when the NIC lists no map at all, one line per
    # planned priority naming its DSCPs (dscp2prio/0-25,27-47: expected '0', ...)
    rt_qos_map "$qos"
    if [[ -z "${RT_MAP[*]-}" ]]; then
        for rt_e in ${RT_DSCP_RUNS[@]+"${RT_DSCP_RUNS[@]}"}; do
            read -r rt_s prio dscp <<< "$rt_e"
            [[ "$rt_s" == "$nic_set" ]] || continue
            rt_expect "$nic_dev" "dscp2prio/$dscp" "$prio" "$RT_DSCP_NO_MAP"
        done
    else
        for rt_e in ${RT_DSCP2PRIO[@]+"${RT_DSCP2PRIO[@]}"}; do
            rt_dscp_entry "$rt_e"
            [[ "$rt_s" == "$nic_set" ]] || continue
            rt_expect "$nic_dev" "dscp2prio/$dscp" "$prio" "${RT_MAP[dscp]-$RT_DSCP_UNLISTED}"
        done
    fi
    rt_expect "$nic_dev" mtu "$nic_mtu" "$(rt_link_mtu "$nic_dev")"
    # an RDMA device that is gone while its netdev answers: one line naming why (rt_rdma_gone)
    rt_gone="$(rt_rdma_gone)"
    if [[ -n "$rt_gone" ]]; then
        rt_expect "$nic_dev" "NIC ($nic_rdma port $nic_port)" present "$rt_gone; its RoCE values not read back"
    else
        rt_expect "$nic_rdma" roce_tos "$nic_tos" "$(cma_roce_tos -d "$nic_rdma" -p "$nic_port" | tail -n 1)"
        tclass="$nic_tos"
        (( RT_TCLASS_GLOBAL )) || tclass='unset'
        tclass_now="$(rt_tclass "${SYSROOT}/sys/class/infiniband/$nic_rdma/tc/$nic_port/traffic_class")"
        rt_expect "$nic_rdma" traffic_class "$tclass" "${tclass_now:-unset}"
        rt_expect "$nic_rdma" roce_mode 'RoCE v2' "$(cma_roce_mode -d "$nic_rdma" -p "$nic_port" | tail -n 1)"
    fi
    for rt_w in "${RT_ECN[@]}"; do
        read -r rt_s file value <<<"$rt_w"
        [[ "$rt_s" == "$nic_set" ]] || continue
        rt_expect "$nic_dev" "ecn/$file" "$value" "$(rt_read "${SYSROOT}/sys/class/net/$nic_dev/ecn/$file")"
    done
done
# what re-applies the values at boot and on driver reload: installed as planned, the unit enabled
rt_expect "$RT_HOST" "boot script $RT_PERSIST_SCRIPT" "$RT_AS_PLANNED" \
    "$(rt_file_state "$RT_PERSIST_SCRIPT" "$(rt_self)"$'\n')"
rt_expect "$RT_HOST" "systemd unit $RT_UNIT_FILE" "$RT_AS_PLANNED" "$(rt_file_state "$RT_UNIT_FILE" "$RT_UNIT_TEXT")"
rt_expect "$RT_HOST" "udev rule $RT_UDEV_FILE" "$RT_AS_PLANNED" "$(rt_file_state "$RT_UDEV_FILE" "$RT_UDEV_TEXT")"
rt_expect "$RT_HOST" "systemctl is-enabled $RT_UNIT_NAME" enabled "$(rt_unit_enabled)"

# a --boot run that left out missing NICs or NICs whose step failed names them again last (the lines
# `systemctl status` shows) and fails: exit 4, or 1 when a value of a configured NIC did not read back either
rt_planned=$(( ${#RT_MISSING[@]} + ${#RT_FAILED[@]} + ${#RT_NICS[@]} ))
if (( ${#RT_MISSING[@]} > 0 )); then
    rt_list="$(printf '%s, ' "${RT_MISSING[@]}")"
    printf 'roce-tune: %s: boot run: %d of %d planned NIC(s) missing, not configured: %s\n' "$RT_HOST" \
        "${#RT_MISSING[@]}" "$rt_planned" "${rt_list%, }" >&2
fi
if (( ${#RT_FAILED[@]} > 0 )); then
    rt_list="$(printf '%s, ' "${RT_FAILED[@]}")"
    printf 'roce-tune: %s: boot run: %d of %d planned NIC(s) failed part-way, not read back: %s\n' "$RT_HOST" \
        "${#RT_FAILED[@]}" "$rt_planned" "${rt_list%, }" >&2
fi
if (( ${#MISMATCHES[@]} > 0 )); then
    printf 'roce-tune: %s: %d value(s) did not read back as set:\n' "$RT_HOST" "${#MISMATCHES[@]}" >&2
    printf '  MISMATCH %s\n' "${MISMATCHES[@]}" >&2
    exit 1
fi
if (( ${#RT_MISSING[@]} + ${#RT_FAILED[@]} > 0 )); then
    if (( ${#RT_NICS[@]} > 0 )); then
        printf 'roce-tune: %s: boot run: every other NIC set and read back\n' "$RT_HOST" >&2
    else
        printf 'roce-tune: %s: boot run: no NIC was configured in full\n' "$RT_HOST" >&2
    fi
    exit 4
fi
if (( RT_CHECK == 1 )); then
    printf 'roce-tune: %s: every value already as planned\n' "$RT_HOST"
else
    printf 'roce-tune: %s: all values set and read back\n' "$RT_HOST"
fi
