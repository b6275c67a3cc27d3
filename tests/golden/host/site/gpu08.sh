#!/usr/bin/env bash
# roce-tune host script for gpu08 | site site-a | roce-tune 0.1.0 | plan schema 1.2
# inventory inventories/site.yaml sha256 fd3f7e06b656fbdf8beb377e706d261ba4bda4613df94ff26ddc5321741807c4 -- do not edit, re-render instead.
# Idempotent: every step writes an absolute value, so a second run changes nothing.
# Runtime settings (mlnx_qos, cma_roce_*, sysfs) are lost at reboot: run this from a systemd oneshot.
# Ends by reading back every value it set and exits 1 listing each mismatch.
# ROCE_TUNE_SYSROOT (tests) is prepended to every /sys path.
# Usage: bash SCRIPT [--check | --save FILE]
#   --check      change nothing, only read back and list mismatches
#   --save FILE  first write FILE, a script that puts back every value this one changes (restore point)
set -euo pipefail

RT_CHECK=0
RT_SAVE=""
rt_usage() { echo "usage: $0 [--check | --save FILE]" >&2; exit 2; }
case "$#:${1:-}" in
    0:) ;;
    1:--check) RT_CHECK=1 ;;
    2:--save) RT_SAVE="$2" ;;
    *) rt_usage ;;
esac
if (( $# == 2 )); then
    [[ -n "$RT_SAVE" && "$RT_SAVE" != -* ]] || rt_usage
    if [[ -s "$RT_SAVE" ]]; then  # a restore point from an earlier run would be overwritten by values set since
        echo "roce-tune: $RT_SAVE already holds a restore point; choose a new file" >&2
        exit 2
    fi
fi

RT_HOST=gpu08
SYSROOT="${ROCE_TUNE_SYSROOT:-}"
MISMATCHES=()

for tool in mlnx_qos cma_roce_tos cma_roce_mode ip awk sed tail ; do
    command -v "$tool" >/dev/null 2>&1 || { echo "roce-tune: required command '$tool' not found" >&2; exit 2; }
done

# rt_write PATH VALUE: write one sysfs value; a missing file stops the script (driver without the knob).
rt_write() {
    if [[ ! -e "$1" ]]; then
        echo "roce-tune: $1 does not exist (MLNX_OFED/DOCA driver needed; see the alternatives section)" >&2
        exit 2
    fi
    printf '%s\n' "$2" > "$1"
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

# rt_expect DEVICE WHAT EXPECTED ACTUAL: record a mismatch.
rt_expect() {
    if [[ "$3" != "$4" ]]; then
        MISMATCHES+=("$1 $2: expected '$3', read '$4'")
    fi
}

# Parsers of "mlnx_qos -i <netdev>" output (Mellanox/mlnx-tools python/mlnx_qos pretty_print).
rt_qos_trust() { sed -n 's/^Priority trust state: *//p' <<<"$1"; }
rt_qos_cable() { sed -n 's/^Cable len: *//p' <<<"$1"; }
rt_qos_pfc() {
    awk '/^PFC configuration:/ { f = 1; next }
         f && $1 == "enabled" { for (i = 2; i <= 9; i++) printf "%s%s", (i > 2 ? "," : ""), $i; exit }' <<<"$1"
}
rt_qos_dscp2prio() {
    awk -v d="$2" '/prio:[0-7] dscp:/ {
        p = $0; sub(/.*prio:/, "", p); sub(/ .*/, "", p)
        l = $0; sub(/.*dscp:/, "", l); n = split(l, v, ",")
        for (i = 1; i <= n; i++) if (v[i] != "" && v[i] + 0 == d) { print p; exit }
    }' <<<"$1"
}
rt_link_mtu() { ip -o link show dev "$1" | awk '{ for (i = 1; i < NF; i++) if ($i == "mtu") { print $(i + 1); exit } }'; }
rt_tclass() { local v; v="$(rt_read "$1")"; printf '%s' "${v#Global tclass=}"; }

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

# ===== snapshot =====
if [[ -n "$RT_SAVE" ]]; then
# Values that cannot be read (empty or missing) become rt_lost lines in FILE: not restorable, exit 3.

{
    printf '#!/usr/bin/env bash\n# roce-tune restore point for %s, taken %s before applying the plan\n' \
        "$RT_HOST" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    cat <<'RT_RESTORE_HEAD'
# Runs every line even if one fails. Exit 0: every value put back; 1: a command failed;
# 3: values that could not be read before the change (rt_lost lines) were left as the plan set them.
set -uo pipefail
RT_FAIL=0
RT_LOST=0
rt_do() { "$@" >/dev/null || { echo "roce-tune restore: failed: $*" >&2; RT_FAIL=1; }; }
rt_put() { printf '%s\n' "$2" > "$1" || { echo "roce-tune restore: failed: $1" >&2; RT_FAIL=1; }; }
rt_lost() { echo "roce-tune restore: not restorable: $*" >&2; RT_LOST=$((RT_LOST + 1)); }
RT_RESTORE_HEAD
} > "$RT_SAVE"
qos="$(mlnx_qos -i ens1f0np0)"
rt_save rt_do mlnx_qos -i ens1f0np0 --pfc "$(rt_qos_pfc "$qos")" --cable_len "$(rt_qos_cable "$qos")"
rt_save rt_do mlnx_qos -i ens1f0np0 --trust "$(rt_qos_trust "$qos")"
rt_save rt_do ip link set dev ens1f0np0 mtu "$(rt_link_mtu ens1f0np0)"
rt_save rt_do cma_roce_tos -d mlx5_0 -p 1 -t "$(cma_roce_tos -d mlx5_0 -p 1 | tail -n 1)"
# an unset global traffic class reads back empty; the mlx5 driver takes -1 to unset it again
tclass="$(rt_tclass "${SYSROOT}"/sys/class/infiniband/mlx5_0/tc/1/traffic_class)"
rt_save rt_put "${SYSROOT}"/sys/class/infiniband/mlx5_0/tc/1/traffic_class "${tclass:--1}"
case "$(cma_roce_mode -d mlx5_0 -p 1 | tail -n 1)" in
    'IB/RoCE v1'*) rt_save rt_do cma_roce_mode -d mlx5_0 -p 1 -m 1 ;;
    'RoCE v2'*) rt_save rt_do cma_roce_mode -d mlx5_0 -p 1 -m 2 ;;
    *) rt_save rt_lost mlx5_0 roce_mode "(unknown mode)" ;;
esac
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_np/enable/3 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_np/enable/3)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/enable/3 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/enable/3)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/clamp_tgt_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/clamp_tgt_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/dce_tcp_g "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/dce_tcp_g)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/dce_tcp_rtt "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/dce_tcp_rtt)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/initial_alpha_value "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/initial_alpha_value)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_np/min_time_between_cnps "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_np/min_time_between_cnps)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rate_reduce_monitor_period "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rate_reduce_monitor_period)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rate_to_set_on_first_cnp "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rate_to_set_on_first_cnp)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_ai_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_ai_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_byte_reset "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_byte_reset)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_gd "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_gd)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_hai_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_hai_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_max_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_max_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_min_dec_fac "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_min_dec_fac)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_min_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_min_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_threshold "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_threshold)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_time_reset "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_time_reset)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_np/cnp_802p_prio "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_np/cnp_802p_prio)"
qos="$(mlnx_qos -i ens2f0np0)"
rt_save rt_do mlnx_qos -i ens2f0np0 --pfc "$(rt_qos_pfc "$qos")" --cable_len "$(rt_qos_cable "$qos")"
rt_save rt_do mlnx_qos -i ens2f0np0 --trust "$(rt_qos_trust "$qos")"
rt_save rt_do ip link set dev ens2f0np0 mtu "$(rt_link_mtu ens2f0np0)"
rt_save rt_do cma_roce_tos -d mlx5_1 -p 1 -t "$(cma_roce_tos -d mlx5_1 -p 1 | tail -n 1)"
# an unset global traffic class reads back empty; the mlx5 driver takes -1 to unset it again
tclass="$(rt_tclass "${SYSROOT}"/sys/class/infiniband/mlx5_1/tc/1/traffic_class)"
rt_save rt_put "${SYSROOT}"/sys/class/infiniband/mlx5_1/tc/1/traffic_class "${tclass:--1}"
case "$(cma_roce_mode -d mlx5_1 -p 1 | tail -n 1)" in
    'IB/RoCE v1'*) rt_save rt_do cma_roce_mode -d mlx5_1 -p 1 -m 1 ;;
    'RoCE v2'*) rt_save rt_do cma_roce_mode -d mlx5_1 -p 1 -m 2 ;;
    *) rt_save rt_lost mlx5_1 roce_mode "(unknown mode)" ;;
esac
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_np/enable/3 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_np/enable/3)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/enable/3 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/enable/3)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/clamp_tgt_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/clamp_tgt_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/dce_tcp_g "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/dce_tcp_g)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/dce_tcp_rtt "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/dce_tcp_rtt)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/initial_alpha_value "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/initial_alpha_value)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_np/min_time_between_cnps "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_np/min_time_between_cnps)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rate_reduce_monitor_period "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rate_reduce_monitor_period)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rate_to_set_on_first_cnp "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rate_to_set_on_first_cnp)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_ai_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_ai_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_byte_reset "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_byte_reset)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_gd "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_gd)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_hai_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_hai_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_max_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_max_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_min_dec_fac "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_min_dec_fac)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_min_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_min_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_threshold "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_threshold)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_time_reset "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_time_reset)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_np/cnp_dscp "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_np/cnp_dscp)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_np/cnp_802p_prio "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_np/cnp_802p_prio)"
qos="$(mlnx_qos -i ens3f0np0)"
rt_save rt_do mlnx_qos -i ens3f0np0 --pfc "$(rt_qos_pfc "$qos")" --cable_len "$(rt_qos_cable "$qos")"
rt_save rt_do mlnx_qos -i ens3f0np0 --trust "$(rt_qos_trust "$qos")"
rt_save rt_do ip link set dev ens3f0np0 mtu "$(rt_link_mtu ens3f0np0)"
rt_save rt_do cma_roce_tos -d mlx5_2 -p 1 -t "$(cma_roce_tos -d mlx5_2 -p 1 | tail -n 1)"
# an unset global traffic class reads back empty; the mlx5 driver takes -1 to unset it again
tclass="$(rt_tclass "${SYSROOT}"/sys/class/infiniband/mlx5_2/tc/1/traffic_class)"
rt_save rt_put "${SYSROOT}"/sys/class/infiniband/mlx5_2/tc/1/traffic_class "${tclass:--1}"
case "$(cma_roce_mode -d mlx5_2 -p 1 | tail -n 1)" in
    'IB/RoCE v1'*) rt_save rt_do cma_roce_mode -d mlx5_2 -p 1 -m 1 ;;
    'RoCE v2'*) rt_save rt_do cma_roce_mode -d mlx5_2 -p 1 -m 2 ;;
    *) rt_save rt_lost mlx5_2 roce_mode "(unknown mode)" ;;
esac
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_np/enable/3 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_np/enable/3)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/enable/3 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/enable/3)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/clamp_tgt_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/clamp_tgt_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/dce_tcp_g "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/dce_tcp_g)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/dce_tcp_rtt "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/dce_tcp_rtt)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/initial_alpha_value "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/initial_alpha_value)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_np/min_time_between_cnps "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_np/min_time_between_cnps)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rate_reduce_monitor_period "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rate_reduce_monitor_period)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rate_to_set_on_first_cnp "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rate_to_set_on_first_cnp)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_ai_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_ai_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_byte_reset "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_byte_reset)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_gd "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_gd)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_hai_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_hai_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_max_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_max_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_min_dec_fac "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_min_dec_fac)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_min_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_min_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_threshold "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_threshold)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_time_reset "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_time_reset)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_np/cnp_dscp "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_np/cnp_dscp)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_np/cnp_802p_prio "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_np/cnp_802p_prio)"
qos="$(mlnx_qos -i ens4f0np0)"
rt_save rt_do mlnx_qos -i ens4f0np0 --pfc "$(rt_qos_pfc "$qos")" --cable_len "$(rt_qos_cable "$qos")"
rt_save rt_do mlnx_qos -i ens4f0np0 --trust "$(rt_qos_trust "$qos")"
rt_save rt_do ip link set dev ens4f0np0 mtu "$(rt_link_mtu ens4f0np0)"
rt_save rt_do cma_roce_tos -d mlx5_3 -p 1 -t "$(cma_roce_tos -d mlx5_3 -p 1 | tail -n 1)"
# an unset global traffic class reads back empty; the mlx5 driver takes -1 to unset it again
tclass="$(rt_tclass "${SYSROOT}"/sys/class/infiniband/mlx5_3/tc/1/traffic_class)"
rt_save rt_put "${SYSROOT}"/sys/class/infiniband/mlx5_3/tc/1/traffic_class "${tclass:--1}"
case "$(cma_roce_mode -d mlx5_3 -p 1 | tail -n 1)" in
    'IB/RoCE v1'*) rt_save rt_do cma_roce_mode -d mlx5_3 -p 1 -m 1 ;;
    'RoCE v2'*) rt_save rt_do cma_roce_mode -d mlx5_3 -p 1 -m 2 ;;
    *) rt_save rt_lost mlx5_3 roce_mode "(unknown mode)" ;;
esac
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_np/enable/3 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_np/enable/3)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/enable/3 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/enable/3)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/clamp_tgt_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/clamp_tgt_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/dce_tcp_g "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/dce_tcp_g)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/dce_tcp_rtt "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/dce_tcp_rtt)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/initial_alpha_value "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/initial_alpha_value)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_np/min_time_between_cnps "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_np/min_time_between_cnps)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rate_reduce_monitor_period "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rate_reduce_monitor_period)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rate_to_set_on_first_cnp "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rate_to_set_on_first_cnp)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_ai_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_ai_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_byte_reset "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_byte_reset)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_gd "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_gd)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_hai_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_hai_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_max_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_max_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_min_dec_fac "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_min_dec_fac)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_min_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_min_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_threshold "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_threshold)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_time_reset "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_time_reset)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_np/cnp_dscp "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_np/cnp_dscp)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_np/cnp_802p_prio "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_np/cnp_802p_prio)"
qos="$(mlnx_qos -i ens5f0np0)"
rt_save rt_do mlnx_qos -i ens5f0np0 --pfc "$(rt_qos_pfc "$qos")" --cable_len "$(rt_qos_cable "$qos")"
rt_save rt_do mlnx_qos -i ens5f0np0 --trust "$(rt_qos_trust "$qos")"
rt_save rt_do ip link set dev ens5f0np0 mtu "$(rt_link_mtu ens5f0np0)"
rt_save rt_do cma_roce_tos -d mlx5_4 -p 1 -t "$(cma_roce_tos -d mlx5_4 -p 1 | tail -n 1)"
# an unset global traffic class reads back empty; the mlx5 driver takes -1 to unset it again
tclass="$(rt_tclass "${SYSROOT}"/sys/class/infiniband/mlx5_4/tc/1/traffic_class)"
rt_save rt_put "${SYSROOT}"/sys/class/infiniband/mlx5_4/tc/1/traffic_class "${tclass:--1}"
case "$(cma_roce_mode -d mlx5_4 -p 1 | tail -n 1)" in
    'IB/RoCE v1'*) rt_save rt_do cma_roce_mode -d mlx5_4 -p 1 -m 1 ;;
    'RoCE v2'*) rt_save rt_do cma_roce_mode -d mlx5_4 -p 1 -m 2 ;;
    *) rt_save rt_lost mlx5_4 roce_mode "(unknown mode)" ;;
esac
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_np/enable/3 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_np/enable/3)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/enable/3 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/enable/3)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/clamp_tgt_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/clamp_tgt_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/dce_tcp_g "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/dce_tcp_g)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/dce_tcp_rtt "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/dce_tcp_rtt)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/initial_alpha_value "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/initial_alpha_value)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_np/min_time_between_cnps "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_np/min_time_between_cnps)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rate_reduce_monitor_period "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rate_reduce_monitor_period)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rate_to_set_on_first_cnp "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rate_to_set_on_first_cnp)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_ai_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_ai_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_byte_reset "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_byte_reset)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_gd "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_gd)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_hai_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_hai_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_max_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_max_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_min_dec_fac "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_min_dec_fac)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_min_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_min_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_threshold "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_threshold)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_time_reset "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_time_reset)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_np/cnp_dscp "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_np/cnp_dscp)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_np/cnp_802p_prio "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_np/cnp_802p_prio)"
qos="$(mlnx_qos -i ens6f0np0)"
rt_save rt_do mlnx_qos -i ens6f0np0 --pfc "$(rt_qos_pfc "$qos")" --cable_len "$(rt_qos_cable "$qos")"
rt_save rt_do mlnx_qos -i ens6f0np0 --trust "$(rt_qos_trust "$qos")"
rt_save rt_do ip link set dev ens6f0np0 mtu "$(rt_link_mtu ens6f0np0)"
rt_save rt_do cma_roce_tos -d mlx5_5 -p 1 -t "$(cma_roce_tos -d mlx5_5 -p 1 | tail -n 1)"
# an unset global traffic class reads back empty; the mlx5 driver takes -1 to unset it again
tclass="$(rt_tclass "${SYSROOT}"/sys/class/infiniband/mlx5_5/tc/1/traffic_class)"
rt_save rt_put "${SYSROOT}"/sys/class/infiniband/mlx5_5/tc/1/traffic_class "${tclass:--1}"
case "$(cma_roce_mode -d mlx5_5 -p 1 | tail -n 1)" in
    'IB/RoCE v1'*) rt_save rt_do cma_roce_mode -d mlx5_5 -p 1 -m 1 ;;
    'RoCE v2'*) rt_save rt_do cma_roce_mode -d mlx5_5 -p 1 -m 2 ;;
    *) rt_save rt_lost mlx5_5 roce_mode "(unknown mode)" ;;
esac
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_np/enable/3 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_np/enable/3)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/enable/3 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/enable/3)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/clamp_tgt_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/clamp_tgt_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/dce_tcp_g "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/dce_tcp_g)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/dce_tcp_rtt "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/dce_tcp_rtt)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/initial_alpha_value "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/initial_alpha_value)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_np/min_time_between_cnps "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_np/min_time_between_cnps)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rate_reduce_monitor_period "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rate_reduce_monitor_period)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rate_to_set_on_first_cnp "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rate_to_set_on_first_cnp)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_ai_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_ai_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_byte_reset "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_byte_reset)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_gd "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_gd)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_hai_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_hai_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_max_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_max_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_min_dec_fac "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_min_dec_fac)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_min_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_min_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_threshold "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_threshold)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_time_reset "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_time_reset)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_np/cnp_dscp "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_np/cnp_dscp)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_np/cnp_802p_prio "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_np/cnp_802p_prio)"
qos="$(mlnx_qos -i ens7f0np0)"
rt_save rt_do mlnx_qos -i ens7f0np0 --pfc "$(rt_qos_pfc "$qos")" --cable_len "$(rt_qos_cable "$qos")"
rt_save rt_do mlnx_qos -i ens7f0np0 --trust "$(rt_qos_trust "$qos")"
rt_save rt_do ip link set dev ens7f0np0 mtu "$(rt_link_mtu ens7f0np0)"
rt_save rt_do cma_roce_tos -d mlx5_6 -p 1 -t "$(cma_roce_tos -d mlx5_6 -p 1 | tail -n 1)"
# an unset global traffic class reads back empty; the mlx5 driver takes -1 to unset it again
tclass="$(rt_tclass "${SYSROOT}"/sys/class/infiniband/mlx5_6/tc/1/traffic_class)"
rt_save rt_put "${SYSROOT}"/sys/class/infiniband/mlx5_6/tc/1/traffic_class "${tclass:--1}"
case "$(cma_roce_mode -d mlx5_6 -p 1 | tail -n 1)" in
    'IB/RoCE v1'*) rt_save rt_do cma_roce_mode -d mlx5_6 -p 1 -m 1 ;;
    'RoCE v2'*) rt_save rt_do cma_roce_mode -d mlx5_6 -p 1 -m 2 ;;
    *) rt_save rt_lost mlx5_6 roce_mode "(unknown mode)" ;;
esac
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_np/enable/3 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_np/enable/3)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/enable/3 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/enable/3)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/clamp_tgt_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/clamp_tgt_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/dce_tcp_g "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/dce_tcp_g)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/dce_tcp_rtt "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/dce_tcp_rtt)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/initial_alpha_value "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/initial_alpha_value)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_np/min_time_between_cnps "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_np/min_time_between_cnps)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rate_reduce_monitor_period "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rate_reduce_monitor_period)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rate_to_set_on_first_cnp "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rate_to_set_on_first_cnp)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_ai_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_ai_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_byte_reset "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_byte_reset)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_gd "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_gd)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_hai_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_hai_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_max_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_max_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_min_dec_fac "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_min_dec_fac)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_min_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_min_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_threshold "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_threshold)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_time_reset "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_time_reset)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_np/cnp_dscp "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_np/cnp_dscp)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_np/cnp_802p_prio "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_np/cnp_802p_prio)"
qos="$(mlnx_qos -i ens8f0np0)"
rt_save rt_do mlnx_qos -i ens8f0np0 --pfc "$(rt_qos_pfc "$qos")" --cable_len "$(rt_qos_cable "$qos")"
rt_save rt_do mlnx_qos -i ens8f0np0 --trust "$(rt_qos_trust "$qos")"
rt_save rt_do ip link set dev ens8f0np0 mtu "$(rt_link_mtu ens8f0np0)"
rt_save rt_do cma_roce_tos -d mlx5_7 -p 1 -t "$(cma_roce_tos -d mlx5_7 -p 1 | tail -n 1)"
# an unset global traffic class reads back empty; the mlx5 driver takes -1 to unset it again
tclass="$(rt_tclass "${SYSROOT}"/sys/class/infiniband/mlx5_7/tc/1/traffic_class)"
rt_save rt_put "${SYSROOT}"/sys/class/infiniband/mlx5_7/tc/1/traffic_class "${tclass:--1}"
case "$(cma_roce_mode -d mlx5_7 -p 1 | tail -n 1)" in
    'IB/RoCE v1'*) rt_save rt_do cma_roce_mode -d mlx5_7 -p 1 -m 1 ;;
    'RoCE v2'*) rt_save rt_do cma_roce_mode -d mlx5_7 -p 1 -m 2 ;;
    *) rt_save rt_lost mlx5_7 roce_mode "(unknown mode)" ;;
esac
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_np/enable/3 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_np/enable/3)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/enable/3 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/enable/3)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/clamp_tgt_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/clamp_tgt_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/dce_tcp_g "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/dce_tcp_g)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/dce_tcp_rtt "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/dce_tcp_rtt)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/initial_alpha_value "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/initial_alpha_value)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_np/min_time_between_cnps "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_np/min_time_between_cnps)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rate_reduce_monitor_period "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rate_reduce_monitor_period)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rate_to_set_on_first_cnp "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rate_to_set_on_first_cnp)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_ai_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_ai_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_byte_reset "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_byte_reset)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_gd "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_gd)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_hai_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_hai_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_max_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_max_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_min_dec_fac "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_min_dec_fac)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_min_rate "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_min_rate)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_threshold "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_threshold)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_time_reset "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_time_reset)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_np/cnp_dscp "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_np/cnp_dscp)"
rt_save rt_put "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_np/cnp_802p_prio "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_np/cnp_802p_prio)"

cat >> "$RT_SAVE" <<'RT_RESTORE_TAIL'
if (( RT_FAIL == 0 && RT_LOST > 0 )); then exit 3; fi
exit "$RT_FAIL"
RT_RESTORE_TAIL
fi

# ===== qos =====
if (( RT_CHECK == 0 )); then
# ens1f0np0 (mlx5_0 port 1, connectx-6-dx, 100G, switch leaf1:Ethernet28)
mlnx_qos -i ens1f0np0 --trust dscp >/dev/null
# --pfc and --cable_len in one call: mlnx_qos sends both in one PFC update and zeroes the one left out.
# Cable 3.0 m; the driver derives the receive-buffer xoff from it (plan xoff 55180 B).
mlnx_qos -i ens1f0np0 --pfc 0,0,0,1,0,0,0,0 --cable_len 3 >/dev/null
# DSCP [26, 48] -> priority already the default (dscp >> 3) or PCP trust: no --dscp2prio
# ens2f0np0 (mlx5_1 port 1, connectx-6-dx, 100G, switch leaf1:Ethernet60)
mlnx_qos -i ens2f0np0 --trust dscp >/dev/null
# --pfc and --cable_len in one call: mlnx_qos sends both in one PFC update and zeroes the one left out.
# Cable 3.0 m; the driver derives the receive-buffer xoff from it (plan xoff 55180 B).
mlnx_qos -i ens2f0np0 --pfc 0,0,0,1,0,0,0,0 --cable_len 3 >/dev/null
# DSCP [26, 48] -> priority already the default (dscp >> 3) or PCP trust: no --dscp2prio
# ens3f0np0 (mlx5_2 port 1, connectx-6-dx, 100G, switch leaf2:Ethernet28)
mlnx_qos -i ens3f0np0 --trust dscp >/dev/null
# --pfc and --cable_len in one call: mlnx_qos sends both in one PFC update and zeroes the one left out.
# Cable 3.0 m; the driver derives the receive-buffer xoff from it (plan xoff 55180 B).
mlnx_qos -i ens3f0np0 --pfc 0,0,0,1,0,0,0,0 --cable_len 3 >/dev/null
# DSCP [26, 48] -> priority already the default (dscp >> 3) or PCP trust: no --dscp2prio
# ens4f0np0 (mlx5_3 port 1, connectx-6-dx, 100G, switch leaf2:Ethernet60)
mlnx_qos -i ens4f0np0 --trust dscp >/dev/null
# --pfc and --cable_len in one call: mlnx_qos sends both in one PFC update and zeroes the one left out.
# Cable 3.0 m; the driver derives the receive-buffer xoff from it (plan xoff 55180 B).
mlnx_qos -i ens4f0np0 --pfc 0,0,0,1,0,0,0,0 --cable_len 3 >/dev/null
# DSCP [26, 48] -> priority already the default (dscp >> 3) or PCP trust: no --dscp2prio
# ens5f0np0 (mlx5_4 port 1, connectx-6-dx, 100G, switch leaf3:Ethernet28)
mlnx_qos -i ens5f0np0 --trust dscp >/dev/null
# --pfc and --cable_len in one call: mlnx_qos sends both in one PFC update and zeroes the one left out.
# Cable 3.0 m; the driver derives the receive-buffer xoff from it (plan xoff 55180 B).
mlnx_qos -i ens5f0np0 --pfc 0,0,0,1,0,0,0,0 --cable_len 3 >/dev/null
# DSCP [26, 48] -> priority already the default (dscp >> 3) or PCP trust: no --dscp2prio
# ens6f0np0 (mlx5_5 port 1, connectx-6-dx, 100G, switch leaf3:Ethernet60)
mlnx_qos -i ens6f0np0 --trust dscp >/dev/null
# --pfc and --cable_len in one call: mlnx_qos sends both in one PFC update and zeroes the one left out.
# Cable 3.0 m; the driver derives the receive-buffer xoff from it (plan xoff 55180 B).
mlnx_qos -i ens6f0np0 --pfc 0,0,0,1,0,0,0,0 --cable_len 3 >/dev/null
# DSCP [26, 48] -> priority already the default (dscp >> 3) or PCP trust: no --dscp2prio
# ens7f0np0 (mlx5_6 port 1, connectx-6-dx, 100G, switch leaf4:Ethernet28)
mlnx_qos -i ens7f0np0 --trust dscp >/dev/null
# --pfc and --cable_len in one call: mlnx_qos sends both in one PFC update and zeroes the one left out.
# Cable 3.0 m; the driver derives the receive-buffer xoff from it (plan xoff 55180 B).
mlnx_qos -i ens7f0np0 --pfc 0,0,0,1,0,0,0,0 --cable_len 3 >/dev/null
# DSCP [26, 48] -> priority already the default (dscp >> 3) or PCP trust: no --dscp2prio
# ens8f0np0 (mlx5_7 port 1, connectx-6-dx, 100G, switch leaf4:Ethernet60)
mlnx_qos -i ens8f0np0 --trust dscp >/dev/null
# --pfc and --cable_len in one call: mlnx_qos sends both in one PFC update and zeroes the one left out.
# Cable 3.0 m; the driver derives the receive-buffer xoff from it (plan xoff 55180 B).
mlnx_qos -i ens8f0np0 --pfc 0,0,0,1,0,0,0,0 --cable_len 3 >/dev/null
# DSCP [26, 48] -> priority already the default (dscp >> 3) or PCP trust: no --dscp2prio
fi

# ===== mtu =====
if (( RT_CHECK == 0 )); then
# ens1f0np0: netdev MTU 9000 (RoCE MTU 4096)
ip link set dev ens1f0np0 mtu 9000
# ens2f0np0: netdev MTU 9000 (RoCE MTU 4096)
ip link set dev ens2f0np0 mtu 9000
# ens3f0np0: netdev MTU 9000 (RoCE MTU 4096)
ip link set dev ens3f0np0 mtu 9000
# ens4f0np0: netdev MTU 9000 (RoCE MTU 4096)
ip link set dev ens4f0np0 mtu 9000
# ens5f0np0: netdev MTU 9000 (RoCE MTU 4096)
ip link set dev ens5f0np0 mtu 9000
# ens6f0np0: netdev MTU 9000 (RoCE MTU 4096)
ip link set dev ens6f0np0 mtu 9000
# ens7f0np0: netdev MTU 9000 (RoCE MTU 4096)
ip link set dev ens7f0np0 mtu 9000
# ens8f0np0: netdev MTU 9000 (RoCE MTU 4096)
ip link set dev ens8f0np0 mtu 9000
fi

# ===== tos =====
if (( RT_CHECK == 0 )); then
# mlx5_0 port 1: TOS 106 = DSCP 26 << 2 | ECT(0); RDMA-CM uses RoCE v2
cma_roce_tos -d mlx5_0 -p 1 -t 106 >/dev/null
rt_write "${SYSROOT}"/sys/class/infiniband/mlx5_0/tc/1/traffic_class 106
cma_roce_mode -d mlx5_0 -p 1 -m 2 >/dev/null
# mlx5_1 port 1: TOS 106 = DSCP 26 << 2 | ECT(0); RDMA-CM uses RoCE v2
cma_roce_tos -d mlx5_1 -p 1 -t 106 >/dev/null
rt_write "${SYSROOT}"/sys/class/infiniband/mlx5_1/tc/1/traffic_class 106
cma_roce_mode -d mlx5_1 -p 1 -m 2 >/dev/null
# mlx5_2 port 1: TOS 106 = DSCP 26 << 2 | ECT(0); RDMA-CM uses RoCE v2
cma_roce_tos -d mlx5_2 -p 1 -t 106 >/dev/null
rt_write "${SYSROOT}"/sys/class/infiniband/mlx5_2/tc/1/traffic_class 106
cma_roce_mode -d mlx5_2 -p 1 -m 2 >/dev/null
# mlx5_3 port 1: TOS 106 = DSCP 26 << 2 | ECT(0); RDMA-CM uses RoCE v2
cma_roce_tos -d mlx5_3 -p 1 -t 106 >/dev/null
rt_write "${SYSROOT}"/sys/class/infiniband/mlx5_3/tc/1/traffic_class 106
cma_roce_mode -d mlx5_3 -p 1 -m 2 >/dev/null
# mlx5_4 port 1: TOS 106 = DSCP 26 << 2 | ECT(0); RDMA-CM uses RoCE v2
cma_roce_tos -d mlx5_4 -p 1 -t 106 >/dev/null
rt_write "${SYSROOT}"/sys/class/infiniband/mlx5_4/tc/1/traffic_class 106
cma_roce_mode -d mlx5_4 -p 1 -m 2 >/dev/null
# mlx5_5 port 1: TOS 106 = DSCP 26 << 2 | ECT(0); RDMA-CM uses RoCE v2
cma_roce_tos -d mlx5_5 -p 1 -t 106 >/dev/null
rt_write "${SYSROOT}"/sys/class/infiniband/mlx5_5/tc/1/traffic_class 106
cma_roce_mode -d mlx5_5 -p 1 -m 2 >/dev/null
# mlx5_6 port 1: TOS 106 = DSCP 26 << 2 | ECT(0); RDMA-CM uses RoCE v2
cma_roce_tos -d mlx5_6 -p 1 -t 106 >/dev/null
rt_write "${SYSROOT}"/sys/class/infiniband/mlx5_6/tc/1/traffic_class 106
cma_roce_mode -d mlx5_6 -p 1 -m 2 >/dev/null
# mlx5_7 port 1: TOS 106 = DSCP 26 << 2 | ECT(0); RDMA-CM uses RoCE v2
cma_roce_tos -d mlx5_7 -p 1 -t 106 >/dev/null
rt_write "${SYSROOT}"/sys/class/infiniband/mlx5_7/tc/1/traffic_class 106
cma_roce_mode -d mlx5_7 -p 1 -m 2 >/dev/null
fi

# ===== dcqcn =====
if (( RT_CHECK == 0 )); then
# ens1f0np0: DCQCN on priorities [3] (notification and reaction point)
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_np/enable/3 1
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/enable/3 1
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/clamp_tgt_rate 0
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc 1
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/dce_tcp_g 1019
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/dce_tcp_rtt 1
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/initial_alpha_value 1023
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_np/min_time_between_cnps 2
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rate_reduce_monitor_period 4
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rate_to_set_on_first_cnp 0
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_ai_rate 5
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_byte_reset 32767
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_gd 11
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_hai_rate 50
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_max_rate 0
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_min_dec_fac 50
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_min_rate 1
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_threshold 1
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_time_reset 300
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp 48
rt_write "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_np/cnp_802p_prio 6
# ens2f0np0: DCQCN on priorities [3] (notification and reaction point)
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_np/enable/3 1
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/enable/3 1
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/clamp_tgt_rate 0
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc 1
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/dce_tcp_g 1019
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/dce_tcp_rtt 1
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/initial_alpha_value 1023
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_np/min_time_between_cnps 2
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rate_reduce_monitor_period 4
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rate_to_set_on_first_cnp 0
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_ai_rate 5
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_byte_reset 32767
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_gd 11
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_hai_rate 50
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_max_rate 0
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_min_dec_fac 50
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_min_rate 1
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_threshold 1
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_time_reset 300
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_np/cnp_dscp 48
rt_write "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_np/cnp_802p_prio 6
# ens3f0np0: DCQCN on priorities [3] (notification and reaction point)
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_np/enable/3 1
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/enable/3 1
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/clamp_tgt_rate 0
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc 1
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/dce_tcp_g 1019
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/dce_tcp_rtt 1
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/initial_alpha_value 1023
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_np/min_time_between_cnps 2
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rate_reduce_monitor_period 4
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rate_to_set_on_first_cnp 0
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_ai_rate 5
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_byte_reset 32767
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_gd 11
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_hai_rate 50
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_max_rate 0
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_min_dec_fac 50
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_min_rate 1
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_threshold 1
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_time_reset 300
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_np/cnp_dscp 48
rt_write "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_np/cnp_802p_prio 6
# ens4f0np0: DCQCN on priorities [3] (notification and reaction point)
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_np/enable/3 1
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/enable/3 1
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/clamp_tgt_rate 0
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc 1
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/dce_tcp_g 1019
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/dce_tcp_rtt 1
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/initial_alpha_value 1023
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_np/min_time_between_cnps 2
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rate_reduce_monitor_period 4
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rate_to_set_on_first_cnp 0
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_ai_rate 5
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_byte_reset 32767
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_gd 11
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_hai_rate 50
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_max_rate 0
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_min_dec_fac 50
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_min_rate 1
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_threshold 1
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_time_reset 300
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_np/cnp_dscp 48
rt_write "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_np/cnp_802p_prio 6
# ens5f0np0: DCQCN on priorities [3] (notification and reaction point)
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_np/enable/3 1
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/enable/3 1
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/clamp_tgt_rate 0
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc 1
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/dce_tcp_g 1019
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/dce_tcp_rtt 1
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/initial_alpha_value 1023
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_np/min_time_between_cnps 2
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rate_reduce_monitor_period 4
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rate_to_set_on_first_cnp 0
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_ai_rate 5
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_byte_reset 32767
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_gd 11
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_hai_rate 50
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_max_rate 0
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_min_dec_fac 50
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_min_rate 1
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_threshold 1
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_time_reset 300
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_np/cnp_dscp 48
rt_write "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_np/cnp_802p_prio 6
# ens6f0np0: DCQCN on priorities [3] (notification and reaction point)
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_np/enable/3 1
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/enable/3 1
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/clamp_tgt_rate 0
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc 1
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/dce_tcp_g 1019
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/dce_tcp_rtt 1
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/initial_alpha_value 1023
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_np/min_time_between_cnps 2
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rate_reduce_monitor_period 4
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rate_to_set_on_first_cnp 0
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_ai_rate 5
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_byte_reset 32767
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_gd 11
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_hai_rate 50
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_max_rate 0
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_min_dec_fac 50
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_min_rate 1
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_threshold 1
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_time_reset 300
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_np/cnp_dscp 48
rt_write "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_np/cnp_802p_prio 6
# ens7f0np0: DCQCN on priorities [3] (notification and reaction point)
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_np/enable/3 1
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/enable/3 1
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/clamp_tgt_rate 0
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc 1
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/dce_tcp_g 1019
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/dce_tcp_rtt 1
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/initial_alpha_value 1023
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_np/min_time_between_cnps 2
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rate_reduce_monitor_period 4
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rate_to_set_on_first_cnp 0
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_ai_rate 5
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_byte_reset 32767
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_gd 11
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_hai_rate 50
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_max_rate 0
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_min_dec_fac 50
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_min_rate 1
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_threshold 1
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_time_reset 300
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_np/cnp_dscp 48
rt_write "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_np/cnp_802p_prio 6
# ens8f0np0: DCQCN on priorities [3] (notification and reaction point)
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_np/enable/3 1
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/enable/3 1
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/clamp_tgt_rate 0
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc 1
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/dce_tcp_g 1019
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/dce_tcp_rtt 1
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/initial_alpha_value 1023
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_np/min_time_between_cnps 2
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rate_reduce_monitor_period 4
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rate_to_set_on_first_cnp 0
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_ai_rate 5
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_byte_reset 32767
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_gd 11
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_hai_rate 50
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_max_rate 0
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_min_dec_fac 50
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_min_rate 1
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_threshold 1
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_time_reset 300
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_np/cnp_dscp 48
rt_write "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_np/cnp_802p_prio 6
fi

# ===== alternatives =====
# Alternatives to the ECN sysfs above (not run by this script):
# * inbox kernel driver (no /sys/class/net/<if>/ecn): debugfs, runtime, per PCI function
#   (/sys/kernel/debug/mlx5/<pci>/cc_params/, names from drivers/infiniband/hw/mlx5/cong.c).
# * firmware NV config: persistent, takes effect after a firmware reset (mlxfwreset) or reboot.
# ens1f0np0 (<pci-address>):
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_clamp_tgt_rate
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_clamp_tgt_rate_ati
#   echo 1019 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_dce_tcp_g
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_dce_tcp_rtt
#   echo 1023 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_initial_alpha_value
#   echo 2 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_min_time_between_cnps
#   echo 4 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_rate_reduce_monitor_period
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_rate_to_set_on_first_cnp
#   echo 5 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_ai_rate
#   echo 32767 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_byte_reset
#   echo 11 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_gd
#   echo 50 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_hai_rate
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_max_rate
#   echo 50 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_min_dec_fac
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_min_rate
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_threshold
#   echo 300 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_time_reset
#   echo 48 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_cnp_dscp
#   echo 6 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_cnp_prio
#   mlxconfig -d <pci-address> -y set ROCE_CC_PRIO_MASK_P1=8 CLAMP_TGT_RATE_P1=0 CLAMP_TGT_RATE_AFTER_TIME_INC_P1=1 DCE_TCP_G_P1=1019 DCE_TCP_RTT_P1=1 INITIAL_ALPHA_VALUE_P1=1023 MIN_TIME_BETWEEN_CNPS_P1=2 RATE_REDUCE_MONITOR_PERIOD_P1=4 RATE_TO_SET_ON_FIRST_CNP_P1=0 RPG_AI_RATE_P1=5 RPG_BYTE_RESET_P1=32767 RPG_GD_P1=11 RPG_HAI_RATE_P1=50 RPG_MAX_RATE_P1=0 RPG_MIN_DEC_FAC_P1=50 RPG_MIN_RATE_P1=1 RPG_THRESHOLD_P1=1 RPG_TIME_RESET_P1=300 CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6
# ens2f0np0 (<pci-address>):
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_clamp_tgt_rate
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_clamp_tgt_rate_ati
#   echo 1019 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_dce_tcp_g
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_dce_tcp_rtt
#   echo 1023 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_initial_alpha_value
#   echo 2 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_min_time_between_cnps
#   echo 4 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_rate_reduce_monitor_period
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_rate_to_set_on_first_cnp
#   echo 5 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_ai_rate
#   echo 32767 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_byte_reset
#   echo 11 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_gd
#   echo 50 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_hai_rate
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_max_rate
#   echo 50 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_min_dec_fac
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_min_rate
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_threshold
#   echo 300 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_time_reset
#   echo 48 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_cnp_dscp
#   echo 6 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_cnp_prio
#   mlxconfig -d <pci-address> -y set ROCE_CC_PRIO_MASK_P1=8 CLAMP_TGT_RATE_P1=0 CLAMP_TGT_RATE_AFTER_TIME_INC_P1=1 DCE_TCP_G_P1=1019 DCE_TCP_RTT_P1=1 INITIAL_ALPHA_VALUE_P1=1023 MIN_TIME_BETWEEN_CNPS_P1=2 RATE_REDUCE_MONITOR_PERIOD_P1=4 RATE_TO_SET_ON_FIRST_CNP_P1=0 RPG_AI_RATE_P1=5 RPG_BYTE_RESET_P1=32767 RPG_GD_P1=11 RPG_HAI_RATE_P1=50 RPG_MAX_RATE_P1=0 RPG_MIN_DEC_FAC_P1=50 RPG_MIN_RATE_P1=1 RPG_THRESHOLD_P1=1 RPG_TIME_RESET_P1=300 CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6
# ens3f0np0 (<pci-address>):
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_clamp_tgt_rate
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_clamp_tgt_rate_ati
#   echo 1019 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_dce_tcp_g
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_dce_tcp_rtt
#   echo 1023 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_initial_alpha_value
#   echo 2 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_min_time_between_cnps
#   echo 4 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_rate_reduce_monitor_period
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_rate_to_set_on_first_cnp
#   echo 5 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_ai_rate
#   echo 32767 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_byte_reset
#   echo 11 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_gd
#   echo 50 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_hai_rate
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_max_rate
#   echo 50 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_min_dec_fac
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_min_rate
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_threshold
#   echo 300 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_time_reset
#   echo 48 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_cnp_dscp
#   echo 6 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_cnp_prio
#   mlxconfig -d <pci-address> -y set ROCE_CC_PRIO_MASK_P1=8 CLAMP_TGT_RATE_P1=0 CLAMP_TGT_RATE_AFTER_TIME_INC_P1=1 DCE_TCP_G_P1=1019 DCE_TCP_RTT_P1=1 INITIAL_ALPHA_VALUE_P1=1023 MIN_TIME_BETWEEN_CNPS_P1=2 RATE_REDUCE_MONITOR_PERIOD_P1=4 RATE_TO_SET_ON_FIRST_CNP_P1=0 RPG_AI_RATE_P1=5 RPG_BYTE_RESET_P1=32767 RPG_GD_P1=11 RPG_HAI_RATE_P1=50 RPG_MAX_RATE_P1=0 RPG_MIN_DEC_FAC_P1=50 RPG_MIN_RATE_P1=1 RPG_THRESHOLD_P1=1 RPG_TIME_RESET_P1=300 CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6
# ens4f0np0 (<pci-address>):
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_clamp_tgt_rate
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_clamp_tgt_rate_ati
#   echo 1019 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_dce_tcp_g
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_dce_tcp_rtt
#   echo 1023 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_initial_alpha_value
#   echo 2 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_min_time_between_cnps
#   echo 4 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_rate_reduce_monitor_period
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_rate_to_set_on_first_cnp
#   echo 5 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_ai_rate
#   echo 32767 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_byte_reset
#   echo 11 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_gd
#   echo 50 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_hai_rate
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_max_rate
#   echo 50 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_min_dec_fac
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_min_rate
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_threshold
#   echo 300 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_time_reset
#   echo 48 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_cnp_dscp
#   echo 6 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_cnp_prio
#   mlxconfig -d <pci-address> -y set ROCE_CC_PRIO_MASK_P1=8 CLAMP_TGT_RATE_P1=0 CLAMP_TGT_RATE_AFTER_TIME_INC_P1=1 DCE_TCP_G_P1=1019 DCE_TCP_RTT_P1=1 INITIAL_ALPHA_VALUE_P1=1023 MIN_TIME_BETWEEN_CNPS_P1=2 RATE_REDUCE_MONITOR_PERIOD_P1=4 RATE_TO_SET_ON_FIRST_CNP_P1=0 RPG_AI_RATE_P1=5 RPG_BYTE_RESET_P1=32767 RPG_GD_P1=11 RPG_HAI_RATE_P1=50 RPG_MAX_RATE_P1=0 RPG_MIN_DEC_FAC_P1=50 RPG_MIN_RATE_P1=1 RPG_THRESHOLD_P1=1 RPG_TIME_RESET_P1=300 CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6
# ens5f0np0 (<pci-address>):
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_clamp_tgt_rate
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_clamp_tgt_rate_ati
#   echo 1019 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_dce_tcp_g
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_dce_tcp_rtt
#   echo 1023 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_initial_alpha_value
#   echo 2 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_min_time_between_cnps
#   echo 4 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_rate_reduce_monitor_period
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_rate_to_set_on_first_cnp
#   echo 5 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_ai_rate
#   echo 32767 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_byte_reset
#   echo 11 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_gd
#   echo 50 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_hai_rate
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_max_rate
#   echo 50 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_min_dec_fac
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_min_rate
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_threshold
#   echo 300 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_time_reset
#   echo 48 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_cnp_dscp
#   echo 6 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_cnp_prio
#   mlxconfig -d <pci-address> -y set ROCE_CC_PRIO_MASK_P1=8 CLAMP_TGT_RATE_P1=0 CLAMP_TGT_RATE_AFTER_TIME_INC_P1=1 DCE_TCP_G_P1=1019 DCE_TCP_RTT_P1=1 INITIAL_ALPHA_VALUE_P1=1023 MIN_TIME_BETWEEN_CNPS_P1=2 RATE_REDUCE_MONITOR_PERIOD_P1=4 RATE_TO_SET_ON_FIRST_CNP_P1=0 RPG_AI_RATE_P1=5 RPG_BYTE_RESET_P1=32767 RPG_GD_P1=11 RPG_HAI_RATE_P1=50 RPG_MAX_RATE_P1=0 RPG_MIN_DEC_FAC_P1=50 RPG_MIN_RATE_P1=1 RPG_THRESHOLD_P1=1 RPG_TIME_RESET_P1=300 CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6
# ens6f0np0 (<pci-address>):
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_clamp_tgt_rate
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_clamp_tgt_rate_ati
#   echo 1019 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_dce_tcp_g
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_dce_tcp_rtt
#   echo 1023 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_initial_alpha_value
#   echo 2 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_min_time_between_cnps
#   echo 4 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_rate_reduce_monitor_period
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_rate_to_set_on_first_cnp
#   echo 5 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_ai_rate
#   echo 32767 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_byte_reset
#   echo 11 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_gd
#   echo 50 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_hai_rate
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_max_rate
#   echo 50 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_min_dec_fac
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_min_rate
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_threshold
#   echo 300 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_time_reset
#   echo 48 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_cnp_dscp
#   echo 6 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_cnp_prio
#   mlxconfig -d <pci-address> -y set ROCE_CC_PRIO_MASK_P1=8 CLAMP_TGT_RATE_P1=0 CLAMP_TGT_RATE_AFTER_TIME_INC_P1=1 DCE_TCP_G_P1=1019 DCE_TCP_RTT_P1=1 INITIAL_ALPHA_VALUE_P1=1023 MIN_TIME_BETWEEN_CNPS_P1=2 RATE_REDUCE_MONITOR_PERIOD_P1=4 RATE_TO_SET_ON_FIRST_CNP_P1=0 RPG_AI_RATE_P1=5 RPG_BYTE_RESET_P1=32767 RPG_GD_P1=11 RPG_HAI_RATE_P1=50 RPG_MAX_RATE_P1=0 RPG_MIN_DEC_FAC_P1=50 RPG_MIN_RATE_P1=1 RPG_THRESHOLD_P1=1 RPG_TIME_RESET_P1=300 CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6
# ens7f0np0 (<pci-address>):
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_clamp_tgt_rate
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_clamp_tgt_rate_ati
#   echo 1019 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_dce_tcp_g
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_dce_tcp_rtt
#   echo 1023 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_initial_alpha_value
#   echo 2 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_min_time_between_cnps
#   echo 4 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_rate_reduce_monitor_period
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_rate_to_set_on_first_cnp
#   echo 5 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_ai_rate
#   echo 32767 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_byte_reset
#   echo 11 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_gd
#   echo 50 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_hai_rate
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_max_rate
#   echo 50 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_min_dec_fac
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_min_rate
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_threshold
#   echo 300 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_time_reset
#   echo 48 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_cnp_dscp
#   echo 6 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_cnp_prio
#   mlxconfig -d <pci-address> -y set ROCE_CC_PRIO_MASK_P1=8 CLAMP_TGT_RATE_P1=0 CLAMP_TGT_RATE_AFTER_TIME_INC_P1=1 DCE_TCP_G_P1=1019 DCE_TCP_RTT_P1=1 INITIAL_ALPHA_VALUE_P1=1023 MIN_TIME_BETWEEN_CNPS_P1=2 RATE_REDUCE_MONITOR_PERIOD_P1=4 RATE_TO_SET_ON_FIRST_CNP_P1=0 RPG_AI_RATE_P1=5 RPG_BYTE_RESET_P1=32767 RPG_GD_P1=11 RPG_HAI_RATE_P1=50 RPG_MAX_RATE_P1=0 RPG_MIN_DEC_FAC_P1=50 RPG_MIN_RATE_P1=1 RPG_THRESHOLD_P1=1 RPG_TIME_RESET_P1=300 CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6
# ens8f0np0 (<pci-address>):
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_clamp_tgt_rate
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_clamp_tgt_rate_ati
#   echo 1019 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_dce_tcp_g
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_dce_tcp_rtt
#   echo 1023 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_initial_alpha_value
#   echo 2 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_min_time_between_cnps
#   echo 4 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_rate_reduce_monitor_period
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_rate_to_set_on_first_cnp
#   echo 5 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_ai_rate
#   echo 32767 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_byte_reset
#   echo 11 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_gd
#   echo 50 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_hai_rate
#   echo 0 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_max_rate
#   echo 50 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_min_dec_fac
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_min_rate
#   echo 1 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_threshold
#   echo 300 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/rp_time_reset
#   echo 48 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_cnp_dscp
#   echo 6 > /sys/kernel/debug/mlx5/<pci-address>/cc_params/np_cnp_prio
#   mlxconfig -d <pci-address> -y set ROCE_CC_PRIO_MASK_P1=8 CLAMP_TGT_RATE_P1=0 CLAMP_TGT_RATE_AFTER_TIME_INC_P1=1 DCE_TCP_G_P1=1019 DCE_TCP_RTT_P1=1 INITIAL_ALPHA_VALUE_P1=1023 MIN_TIME_BETWEEN_CNPS_P1=2 RATE_REDUCE_MONITOR_PERIOD_P1=4 RATE_TO_SET_ON_FIRST_CNP_P1=0 RPG_AI_RATE_P1=5 RPG_BYTE_RESET_P1=32767 RPG_GD_P1=11 RPG_HAI_RATE_P1=50 RPG_MAX_RATE_P1=0 RPG_MIN_DEC_FAC_P1=50 RPG_MIN_RATE_P1=1 RPG_THRESHOLD_P1=1 RPG_TIME_RESET_P1=300 CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6

# ===== readback =====
qos="$(mlnx_qos -i ens1f0np0)" || qos='<mlnx_qos failed>'
rt_expect ens1f0np0 trust dscp "$(rt_qos_trust "$qos")"
rt_expect ens1f0np0 pfc 0,0,0,1,0,0,0,0 "$(rt_qos_pfc "$qos")"
rt_expect ens1f0np0 cable_len 3 "$(rt_qos_cable "$qos")"
rt_expect ens1f0np0 mtu 9000 "$(rt_link_mtu ens1f0np0)"
rt_expect mlx5_0 roce_tos 106 "$(cma_roce_tos -d mlx5_0 -p 1 | tail -n 1)"
rt_expect mlx5_0 traffic_class 106 "$(rt_tclass "${SYSROOT}"/sys/class/infiniband/mlx5_0/tc/1/traffic_class)"
rt_expect mlx5_0 roce_mode 'RoCE v2' "$(cma_roce_mode -d mlx5_0 -p 1 | tail -n 1)"
rt_expect ens1f0np0 ecn/roce_np/enable/3 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_np/enable/3)"
rt_expect ens1f0np0 ecn/roce_rp/enable/3 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/enable/3)"
rt_expect ens1f0np0 ecn/roce_rp/clamp_tgt_rate 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/clamp_tgt_rate)"
rt_expect ens1f0np0 ecn/roce_rp/clamp_tgt_rate_after_time_inc 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc)"
rt_expect ens1f0np0 ecn/roce_rp/dce_tcp_g 1019 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/dce_tcp_g)"
rt_expect ens1f0np0 ecn/roce_rp/dce_tcp_rtt 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/dce_tcp_rtt)"
rt_expect ens1f0np0 ecn/roce_rp/initial_alpha_value 1023 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/initial_alpha_value)"
rt_expect ens1f0np0 ecn/roce_np/min_time_between_cnps 2 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_np/min_time_between_cnps)"
rt_expect ens1f0np0 ecn/roce_rp/rate_reduce_monitor_period 4 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rate_reduce_monitor_period)"
rt_expect ens1f0np0 ecn/roce_rp/rate_to_set_on_first_cnp 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rate_to_set_on_first_cnp)"
rt_expect ens1f0np0 ecn/roce_rp/rpg_ai_rate 5 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_ai_rate)"
rt_expect ens1f0np0 ecn/roce_rp/rpg_byte_reset 32767 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_byte_reset)"
rt_expect ens1f0np0 ecn/roce_rp/rpg_gd 11 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_gd)"
rt_expect ens1f0np0 ecn/roce_rp/rpg_hai_rate 50 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_hai_rate)"
rt_expect ens1f0np0 ecn/roce_rp/rpg_max_rate 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_max_rate)"
rt_expect ens1f0np0 ecn/roce_rp/rpg_min_dec_fac 50 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_min_dec_fac)"
rt_expect ens1f0np0 ecn/roce_rp/rpg_min_rate 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_min_rate)"
rt_expect ens1f0np0 ecn/roce_rp/rpg_threshold 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_threshold)"
rt_expect ens1f0np0 ecn/roce_rp/rpg_time_reset 300 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_time_reset)"
rt_expect ens1f0np0 ecn/roce_np/cnp_dscp 48 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp)"
rt_expect ens1f0np0 ecn/roce_np/cnp_802p_prio 6 "$(rt_read "${SYSROOT}"/sys/class/net/ens1f0np0/ecn/roce_np/cnp_802p_prio)"
qos="$(mlnx_qos -i ens2f0np0)" || qos='<mlnx_qos failed>'
rt_expect ens2f0np0 trust dscp "$(rt_qos_trust "$qos")"
rt_expect ens2f0np0 pfc 0,0,0,1,0,0,0,0 "$(rt_qos_pfc "$qos")"
rt_expect ens2f0np0 cable_len 3 "$(rt_qos_cable "$qos")"
rt_expect ens2f0np0 mtu 9000 "$(rt_link_mtu ens2f0np0)"
rt_expect mlx5_1 roce_tos 106 "$(cma_roce_tos -d mlx5_1 -p 1 | tail -n 1)"
rt_expect mlx5_1 traffic_class 106 "$(rt_tclass "${SYSROOT}"/sys/class/infiniband/mlx5_1/tc/1/traffic_class)"
rt_expect mlx5_1 roce_mode 'RoCE v2' "$(cma_roce_mode -d mlx5_1 -p 1 | tail -n 1)"
rt_expect ens2f0np0 ecn/roce_np/enable/3 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_np/enable/3)"
rt_expect ens2f0np0 ecn/roce_rp/enable/3 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/enable/3)"
rt_expect ens2f0np0 ecn/roce_rp/clamp_tgt_rate 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/clamp_tgt_rate)"
rt_expect ens2f0np0 ecn/roce_rp/clamp_tgt_rate_after_time_inc 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc)"
rt_expect ens2f0np0 ecn/roce_rp/dce_tcp_g 1019 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/dce_tcp_g)"
rt_expect ens2f0np0 ecn/roce_rp/dce_tcp_rtt 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/dce_tcp_rtt)"
rt_expect ens2f0np0 ecn/roce_rp/initial_alpha_value 1023 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/initial_alpha_value)"
rt_expect ens2f0np0 ecn/roce_np/min_time_between_cnps 2 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_np/min_time_between_cnps)"
rt_expect ens2f0np0 ecn/roce_rp/rate_reduce_monitor_period 4 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rate_reduce_monitor_period)"
rt_expect ens2f0np0 ecn/roce_rp/rate_to_set_on_first_cnp 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rate_to_set_on_first_cnp)"
rt_expect ens2f0np0 ecn/roce_rp/rpg_ai_rate 5 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_ai_rate)"
rt_expect ens2f0np0 ecn/roce_rp/rpg_byte_reset 32767 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_byte_reset)"
rt_expect ens2f0np0 ecn/roce_rp/rpg_gd 11 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_gd)"
rt_expect ens2f0np0 ecn/roce_rp/rpg_hai_rate 50 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_hai_rate)"
rt_expect ens2f0np0 ecn/roce_rp/rpg_max_rate 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_max_rate)"
rt_expect ens2f0np0 ecn/roce_rp/rpg_min_dec_fac 50 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_min_dec_fac)"
rt_expect ens2f0np0 ecn/roce_rp/rpg_min_rate 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_min_rate)"
rt_expect ens2f0np0 ecn/roce_rp/rpg_threshold 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_threshold)"
rt_expect ens2f0np0 ecn/roce_rp/rpg_time_reset 300 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_rp/rpg_time_reset)"
rt_expect ens2f0np0 ecn/roce_np/cnp_dscp 48 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_np/cnp_dscp)"
rt_expect ens2f0np0 ecn/roce_np/cnp_802p_prio 6 "$(rt_read "${SYSROOT}"/sys/class/net/ens2f0np0/ecn/roce_np/cnp_802p_prio)"
qos="$(mlnx_qos -i ens3f0np0)" || qos='<mlnx_qos failed>'
rt_expect ens3f0np0 trust dscp "$(rt_qos_trust "$qos")"
rt_expect ens3f0np0 pfc 0,0,0,1,0,0,0,0 "$(rt_qos_pfc "$qos")"
rt_expect ens3f0np0 cable_len 3 "$(rt_qos_cable "$qos")"
rt_expect ens3f0np0 mtu 9000 "$(rt_link_mtu ens3f0np0)"
rt_expect mlx5_2 roce_tos 106 "$(cma_roce_tos -d mlx5_2 -p 1 | tail -n 1)"
rt_expect mlx5_2 traffic_class 106 "$(rt_tclass "${SYSROOT}"/sys/class/infiniband/mlx5_2/tc/1/traffic_class)"
rt_expect mlx5_2 roce_mode 'RoCE v2' "$(cma_roce_mode -d mlx5_2 -p 1 | tail -n 1)"
rt_expect ens3f0np0 ecn/roce_np/enable/3 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_np/enable/3)"
rt_expect ens3f0np0 ecn/roce_rp/enable/3 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/enable/3)"
rt_expect ens3f0np0 ecn/roce_rp/clamp_tgt_rate 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/clamp_tgt_rate)"
rt_expect ens3f0np0 ecn/roce_rp/clamp_tgt_rate_after_time_inc 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc)"
rt_expect ens3f0np0 ecn/roce_rp/dce_tcp_g 1019 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/dce_tcp_g)"
rt_expect ens3f0np0 ecn/roce_rp/dce_tcp_rtt 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/dce_tcp_rtt)"
rt_expect ens3f0np0 ecn/roce_rp/initial_alpha_value 1023 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/initial_alpha_value)"
rt_expect ens3f0np0 ecn/roce_np/min_time_between_cnps 2 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_np/min_time_between_cnps)"
rt_expect ens3f0np0 ecn/roce_rp/rate_reduce_monitor_period 4 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rate_reduce_monitor_period)"
rt_expect ens3f0np0 ecn/roce_rp/rate_to_set_on_first_cnp 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rate_to_set_on_first_cnp)"
rt_expect ens3f0np0 ecn/roce_rp/rpg_ai_rate 5 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_ai_rate)"
rt_expect ens3f0np0 ecn/roce_rp/rpg_byte_reset 32767 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_byte_reset)"
rt_expect ens3f0np0 ecn/roce_rp/rpg_gd 11 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_gd)"
rt_expect ens3f0np0 ecn/roce_rp/rpg_hai_rate 50 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_hai_rate)"
rt_expect ens3f0np0 ecn/roce_rp/rpg_max_rate 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_max_rate)"
rt_expect ens3f0np0 ecn/roce_rp/rpg_min_dec_fac 50 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_min_dec_fac)"
rt_expect ens3f0np0 ecn/roce_rp/rpg_min_rate 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_min_rate)"
rt_expect ens3f0np0 ecn/roce_rp/rpg_threshold 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_threshold)"
rt_expect ens3f0np0 ecn/roce_rp/rpg_time_reset 300 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_rp/rpg_time_reset)"
rt_expect ens3f0np0 ecn/roce_np/cnp_dscp 48 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_np/cnp_dscp)"
rt_expect ens3f0np0 ecn/roce_np/cnp_802p_prio 6 "$(rt_read "${SYSROOT}"/sys/class/net/ens3f0np0/ecn/roce_np/cnp_802p_prio)"
qos="$(mlnx_qos -i ens4f0np0)" || qos='<mlnx_qos failed>'
rt_expect ens4f0np0 trust dscp "$(rt_qos_trust "$qos")"
rt_expect ens4f0np0 pfc 0,0,0,1,0,0,0,0 "$(rt_qos_pfc "$qos")"
rt_expect ens4f0np0 cable_len 3 "$(rt_qos_cable "$qos")"
rt_expect ens4f0np0 mtu 9000 "$(rt_link_mtu ens4f0np0)"
rt_expect mlx5_3 roce_tos 106 "$(cma_roce_tos -d mlx5_3 -p 1 | tail -n 1)"
rt_expect mlx5_3 traffic_class 106 "$(rt_tclass "${SYSROOT}"/sys/class/infiniband/mlx5_3/tc/1/traffic_class)"
rt_expect mlx5_3 roce_mode 'RoCE v2' "$(cma_roce_mode -d mlx5_3 -p 1 | tail -n 1)"
rt_expect ens4f0np0 ecn/roce_np/enable/3 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_np/enable/3)"
rt_expect ens4f0np0 ecn/roce_rp/enable/3 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/enable/3)"
rt_expect ens4f0np0 ecn/roce_rp/clamp_tgt_rate 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/clamp_tgt_rate)"
rt_expect ens4f0np0 ecn/roce_rp/clamp_tgt_rate_after_time_inc 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc)"
rt_expect ens4f0np0 ecn/roce_rp/dce_tcp_g 1019 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/dce_tcp_g)"
rt_expect ens4f0np0 ecn/roce_rp/dce_tcp_rtt 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/dce_tcp_rtt)"
rt_expect ens4f0np0 ecn/roce_rp/initial_alpha_value 1023 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/initial_alpha_value)"
rt_expect ens4f0np0 ecn/roce_np/min_time_between_cnps 2 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_np/min_time_between_cnps)"
rt_expect ens4f0np0 ecn/roce_rp/rate_reduce_monitor_period 4 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rate_reduce_monitor_period)"
rt_expect ens4f0np0 ecn/roce_rp/rate_to_set_on_first_cnp 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rate_to_set_on_first_cnp)"
rt_expect ens4f0np0 ecn/roce_rp/rpg_ai_rate 5 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_ai_rate)"
rt_expect ens4f0np0 ecn/roce_rp/rpg_byte_reset 32767 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_byte_reset)"
rt_expect ens4f0np0 ecn/roce_rp/rpg_gd 11 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_gd)"
rt_expect ens4f0np0 ecn/roce_rp/rpg_hai_rate 50 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_hai_rate)"
rt_expect ens4f0np0 ecn/roce_rp/rpg_max_rate 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_max_rate)"
rt_expect ens4f0np0 ecn/roce_rp/rpg_min_dec_fac 50 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_min_dec_fac)"
rt_expect ens4f0np0 ecn/roce_rp/rpg_min_rate 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_min_rate)"
rt_expect ens4f0np0 ecn/roce_rp/rpg_threshold 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_threshold)"
rt_expect ens4f0np0 ecn/roce_rp/rpg_time_reset 300 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_rp/rpg_time_reset)"
rt_expect ens4f0np0 ecn/roce_np/cnp_dscp 48 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_np/cnp_dscp)"
rt_expect ens4f0np0 ecn/roce_np/cnp_802p_prio 6 "$(rt_read "${SYSROOT}"/sys/class/net/ens4f0np0/ecn/roce_np/cnp_802p_prio)"
qos="$(mlnx_qos -i ens5f0np0)" || qos='<mlnx_qos failed>'
rt_expect ens5f0np0 trust dscp "$(rt_qos_trust "$qos")"
rt_expect ens5f0np0 pfc 0,0,0,1,0,0,0,0 "$(rt_qos_pfc "$qos")"
rt_expect ens5f0np0 cable_len 3 "$(rt_qos_cable "$qos")"
rt_expect ens5f0np0 mtu 9000 "$(rt_link_mtu ens5f0np0)"
rt_expect mlx5_4 roce_tos 106 "$(cma_roce_tos -d mlx5_4 -p 1 | tail -n 1)"
rt_expect mlx5_4 traffic_class 106 "$(rt_tclass "${SYSROOT}"/sys/class/infiniband/mlx5_4/tc/1/traffic_class)"
rt_expect mlx5_4 roce_mode 'RoCE v2' "$(cma_roce_mode -d mlx5_4 -p 1 | tail -n 1)"
rt_expect ens5f0np0 ecn/roce_np/enable/3 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_np/enable/3)"
rt_expect ens5f0np0 ecn/roce_rp/enable/3 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/enable/3)"
rt_expect ens5f0np0 ecn/roce_rp/clamp_tgt_rate 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/clamp_tgt_rate)"
rt_expect ens5f0np0 ecn/roce_rp/clamp_tgt_rate_after_time_inc 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc)"
rt_expect ens5f0np0 ecn/roce_rp/dce_tcp_g 1019 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/dce_tcp_g)"
rt_expect ens5f0np0 ecn/roce_rp/dce_tcp_rtt 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/dce_tcp_rtt)"
rt_expect ens5f0np0 ecn/roce_rp/initial_alpha_value 1023 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/initial_alpha_value)"
rt_expect ens5f0np0 ecn/roce_np/min_time_between_cnps 2 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_np/min_time_between_cnps)"
rt_expect ens5f0np0 ecn/roce_rp/rate_reduce_monitor_period 4 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rate_reduce_monitor_period)"
rt_expect ens5f0np0 ecn/roce_rp/rate_to_set_on_first_cnp 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rate_to_set_on_first_cnp)"
rt_expect ens5f0np0 ecn/roce_rp/rpg_ai_rate 5 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_ai_rate)"
rt_expect ens5f0np0 ecn/roce_rp/rpg_byte_reset 32767 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_byte_reset)"
rt_expect ens5f0np0 ecn/roce_rp/rpg_gd 11 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_gd)"
rt_expect ens5f0np0 ecn/roce_rp/rpg_hai_rate 50 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_hai_rate)"
rt_expect ens5f0np0 ecn/roce_rp/rpg_max_rate 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_max_rate)"
rt_expect ens5f0np0 ecn/roce_rp/rpg_min_dec_fac 50 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_min_dec_fac)"
rt_expect ens5f0np0 ecn/roce_rp/rpg_min_rate 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_min_rate)"
rt_expect ens5f0np0 ecn/roce_rp/rpg_threshold 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_threshold)"
rt_expect ens5f0np0 ecn/roce_rp/rpg_time_reset 300 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_rp/rpg_time_reset)"
rt_expect ens5f0np0 ecn/roce_np/cnp_dscp 48 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_np/cnp_dscp)"
rt_expect ens5f0np0 ecn/roce_np/cnp_802p_prio 6 "$(rt_read "${SYSROOT}"/sys/class/net/ens5f0np0/ecn/roce_np/cnp_802p_prio)"
qos="$(mlnx_qos -i ens6f0np0)" || qos='<mlnx_qos failed>'
rt_expect ens6f0np0 trust dscp "$(rt_qos_trust "$qos")"
rt_expect ens6f0np0 pfc 0,0,0,1,0,0,0,0 "$(rt_qos_pfc "$qos")"
rt_expect ens6f0np0 cable_len 3 "$(rt_qos_cable "$qos")"
rt_expect ens6f0np0 mtu 9000 "$(rt_link_mtu ens6f0np0)"
rt_expect mlx5_5 roce_tos 106 "$(cma_roce_tos -d mlx5_5 -p 1 | tail -n 1)"
rt_expect mlx5_5 traffic_class 106 "$(rt_tclass "${SYSROOT}"/sys/class/infiniband/mlx5_5/tc/1/traffic_class)"
rt_expect mlx5_5 roce_mode 'RoCE v2' "$(cma_roce_mode -d mlx5_5 -p 1 | tail -n 1)"
rt_expect ens6f0np0 ecn/roce_np/enable/3 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_np/enable/3)"
rt_expect ens6f0np0 ecn/roce_rp/enable/3 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/enable/3)"
rt_expect ens6f0np0 ecn/roce_rp/clamp_tgt_rate 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/clamp_tgt_rate)"
rt_expect ens6f0np0 ecn/roce_rp/clamp_tgt_rate_after_time_inc 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc)"
rt_expect ens6f0np0 ecn/roce_rp/dce_tcp_g 1019 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/dce_tcp_g)"
rt_expect ens6f0np0 ecn/roce_rp/dce_tcp_rtt 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/dce_tcp_rtt)"
rt_expect ens6f0np0 ecn/roce_rp/initial_alpha_value 1023 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/initial_alpha_value)"
rt_expect ens6f0np0 ecn/roce_np/min_time_between_cnps 2 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_np/min_time_between_cnps)"
rt_expect ens6f0np0 ecn/roce_rp/rate_reduce_monitor_period 4 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rate_reduce_monitor_period)"
rt_expect ens6f0np0 ecn/roce_rp/rate_to_set_on_first_cnp 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rate_to_set_on_first_cnp)"
rt_expect ens6f0np0 ecn/roce_rp/rpg_ai_rate 5 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_ai_rate)"
rt_expect ens6f0np0 ecn/roce_rp/rpg_byte_reset 32767 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_byte_reset)"
rt_expect ens6f0np0 ecn/roce_rp/rpg_gd 11 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_gd)"
rt_expect ens6f0np0 ecn/roce_rp/rpg_hai_rate 50 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_hai_rate)"
rt_expect ens6f0np0 ecn/roce_rp/rpg_max_rate 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_max_rate)"
rt_expect ens6f0np0 ecn/roce_rp/rpg_min_dec_fac 50 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_min_dec_fac)"
rt_expect ens6f0np0 ecn/roce_rp/rpg_min_rate 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_min_rate)"
rt_expect ens6f0np0 ecn/roce_rp/rpg_threshold 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_threshold)"
rt_expect ens6f0np0 ecn/roce_rp/rpg_time_reset 300 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_rp/rpg_time_reset)"
rt_expect ens6f0np0 ecn/roce_np/cnp_dscp 48 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_np/cnp_dscp)"
rt_expect ens6f0np0 ecn/roce_np/cnp_802p_prio 6 "$(rt_read "${SYSROOT}"/sys/class/net/ens6f0np0/ecn/roce_np/cnp_802p_prio)"
qos="$(mlnx_qos -i ens7f0np0)" || qos='<mlnx_qos failed>'
rt_expect ens7f0np0 trust dscp "$(rt_qos_trust "$qos")"
rt_expect ens7f0np0 pfc 0,0,0,1,0,0,0,0 "$(rt_qos_pfc "$qos")"
rt_expect ens7f0np0 cable_len 3 "$(rt_qos_cable "$qos")"
rt_expect ens7f0np0 mtu 9000 "$(rt_link_mtu ens7f0np0)"
rt_expect mlx5_6 roce_tos 106 "$(cma_roce_tos -d mlx5_6 -p 1 | tail -n 1)"
rt_expect mlx5_6 traffic_class 106 "$(rt_tclass "${SYSROOT}"/sys/class/infiniband/mlx5_6/tc/1/traffic_class)"
rt_expect mlx5_6 roce_mode 'RoCE v2' "$(cma_roce_mode -d mlx5_6 -p 1 | tail -n 1)"
rt_expect ens7f0np0 ecn/roce_np/enable/3 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_np/enable/3)"
rt_expect ens7f0np0 ecn/roce_rp/enable/3 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/enable/3)"
rt_expect ens7f0np0 ecn/roce_rp/clamp_tgt_rate 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/clamp_tgt_rate)"
rt_expect ens7f0np0 ecn/roce_rp/clamp_tgt_rate_after_time_inc 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc)"
rt_expect ens7f0np0 ecn/roce_rp/dce_tcp_g 1019 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/dce_tcp_g)"
rt_expect ens7f0np0 ecn/roce_rp/dce_tcp_rtt 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/dce_tcp_rtt)"
rt_expect ens7f0np0 ecn/roce_rp/initial_alpha_value 1023 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/initial_alpha_value)"
rt_expect ens7f0np0 ecn/roce_np/min_time_between_cnps 2 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_np/min_time_between_cnps)"
rt_expect ens7f0np0 ecn/roce_rp/rate_reduce_monitor_period 4 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rate_reduce_monitor_period)"
rt_expect ens7f0np0 ecn/roce_rp/rate_to_set_on_first_cnp 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rate_to_set_on_first_cnp)"
rt_expect ens7f0np0 ecn/roce_rp/rpg_ai_rate 5 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_ai_rate)"
rt_expect ens7f0np0 ecn/roce_rp/rpg_byte_reset 32767 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_byte_reset)"
rt_expect ens7f0np0 ecn/roce_rp/rpg_gd 11 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_gd)"
rt_expect ens7f0np0 ecn/roce_rp/rpg_hai_rate 50 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_hai_rate)"
rt_expect ens7f0np0 ecn/roce_rp/rpg_max_rate 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_max_rate)"
rt_expect ens7f0np0 ecn/roce_rp/rpg_min_dec_fac 50 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_min_dec_fac)"
rt_expect ens7f0np0 ecn/roce_rp/rpg_min_rate 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_min_rate)"
rt_expect ens7f0np0 ecn/roce_rp/rpg_threshold 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_threshold)"
rt_expect ens7f0np0 ecn/roce_rp/rpg_time_reset 300 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_rp/rpg_time_reset)"
rt_expect ens7f0np0 ecn/roce_np/cnp_dscp 48 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_np/cnp_dscp)"
rt_expect ens7f0np0 ecn/roce_np/cnp_802p_prio 6 "$(rt_read "${SYSROOT}"/sys/class/net/ens7f0np0/ecn/roce_np/cnp_802p_prio)"
qos="$(mlnx_qos -i ens8f0np0)" || qos='<mlnx_qos failed>'
rt_expect ens8f0np0 trust dscp "$(rt_qos_trust "$qos")"
rt_expect ens8f0np0 pfc 0,0,0,1,0,0,0,0 "$(rt_qos_pfc "$qos")"
rt_expect ens8f0np0 cable_len 3 "$(rt_qos_cable "$qos")"
rt_expect ens8f0np0 mtu 9000 "$(rt_link_mtu ens8f0np0)"
rt_expect mlx5_7 roce_tos 106 "$(cma_roce_tos -d mlx5_7 -p 1 | tail -n 1)"
rt_expect mlx5_7 traffic_class 106 "$(rt_tclass "${SYSROOT}"/sys/class/infiniband/mlx5_7/tc/1/traffic_class)"
rt_expect mlx5_7 roce_mode 'RoCE v2' "$(cma_roce_mode -d mlx5_7 -p 1 | tail -n 1)"
rt_expect ens8f0np0 ecn/roce_np/enable/3 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_np/enable/3)"
rt_expect ens8f0np0 ecn/roce_rp/enable/3 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/enable/3)"
rt_expect ens8f0np0 ecn/roce_rp/clamp_tgt_rate 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/clamp_tgt_rate)"
rt_expect ens8f0np0 ecn/roce_rp/clamp_tgt_rate_after_time_inc 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/clamp_tgt_rate_after_time_inc)"
rt_expect ens8f0np0 ecn/roce_rp/dce_tcp_g 1019 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/dce_tcp_g)"
rt_expect ens8f0np0 ecn/roce_rp/dce_tcp_rtt 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/dce_tcp_rtt)"
rt_expect ens8f0np0 ecn/roce_rp/initial_alpha_value 1023 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/initial_alpha_value)"
rt_expect ens8f0np0 ecn/roce_np/min_time_between_cnps 2 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_np/min_time_between_cnps)"
rt_expect ens8f0np0 ecn/roce_rp/rate_reduce_monitor_period 4 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rate_reduce_monitor_period)"
rt_expect ens8f0np0 ecn/roce_rp/rate_to_set_on_first_cnp 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rate_to_set_on_first_cnp)"
rt_expect ens8f0np0 ecn/roce_rp/rpg_ai_rate 5 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_ai_rate)"
rt_expect ens8f0np0 ecn/roce_rp/rpg_byte_reset 32767 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_byte_reset)"
rt_expect ens8f0np0 ecn/roce_rp/rpg_gd 11 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_gd)"
rt_expect ens8f0np0 ecn/roce_rp/rpg_hai_rate 50 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_hai_rate)"
rt_expect ens8f0np0 ecn/roce_rp/rpg_max_rate 0 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_max_rate)"
rt_expect ens8f0np0 ecn/roce_rp/rpg_min_dec_fac 50 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_min_dec_fac)"
rt_expect ens8f0np0 ecn/roce_rp/rpg_min_rate 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_min_rate)"
rt_expect ens8f0np0 ecn/roce_rp/rpg_threshold 1 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_threshold)"
rt_expect ens8f0np0 ecn/roce_rp/rpg_time_reset 300 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_rp/rpg_time_reset)"
rt_expect ens8f0np0 ecn/roce_np/cnp_dscp 48 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_np/cnp_dscp)"
rt_expect ens8f0np0 ecn/roce_np/cnp_802p_prio 6 "$(rt_read "${SYSROOT}"/sys/class/net/ens8f0np0/ecn/roce_np/cnp_802p_prio)"

if (( ${#MISMATCHES[@]} > 0 )); then
    printf 'roce-tune: %s: %d value(s) did not read back as set:\n' "$RT_HOST" "${#MISMATCHES[@]}" >&2
    printf '  MISMATCH %s\n' "${MISMATCHES[@]}" >&2
    exit 1
fi
if (( RT_CHECK == 1 )); then
    printf 'roce-tune: %s: every value already as planned\n' "$RT_HOST"
else
    printf 'roce-tune: %s: all values set and read back\n' "$RT_HOST"
fi
