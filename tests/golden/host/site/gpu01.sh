#!/usr/bin/env bash
# shellcheck disable=SC2034  # the shared host script reads these
# roce-tune host script for gpu01 | site site-a | roce-tune 0.1.0 | plan schema 1.3
# provenance: this file's sha256 is in SHA256SUMS; plan.json beside it names the inventory and its sha256 -- do not edit, re-render instead.
# This host's values. The logic (check, restore point, apply, read back) is the shared host script
# roce-tune-host.sh (version 3) in this directory, sourced at the end; `roce-tune apply` and
# playbooks/push.yml send both to the host as one script.
# Usage: bash SCRIPT [--check | --save FILE | --boot]
#   --check      change nothing, only read back and list mismatches
#   --save FILE  first write FILE, a script that puts back every value this one changes (restore point)
#   --boot       as without arguments, but a planned NIC that is missing or fails does not stop the others
RT_DATA_VERSION=3
RT_HOST=gpu01
# NICs, one a line: netdev, RDMA device, RDMA port, trust, PFC vector, cable (mlnx_qos --cable_len, whole
# metres), netdev MTU, RoCE TOS, value set (of RT_ECN and RT_DSCP2PRIO below).
RT_NICS=(
    # ens1f0np0: mlx5_0 port 1, connectx-6-dx, 100G, switch leaf1:Ethernet0, PCI <pci-address>
    #   cable 3.0 m (plan xoff 55180 B); RoCE MTU 4096; TOS 106 = DSCP 26 << 2 | ECT(0)
    #   DSCP->priority 26->3, 48->6, the other 62 DSCPs->0 (64 entries: set where the NIC differs, all read back); DCQCN on priorities [3] (notification and reaction point)
    #   mlxconfig -d <pci-address> -y set ROCE_CC_PRIO_MASK_P1=8 CLAMP_TGT_RATE_P1=0 CLAMP_TGT_RATE_AFTER_TIME_INC_P1=1 DCE_TCP_G_P1=1019 DCE_TCP_RTT_P1=1 INITIAL_ALPHA_VALUE_P1=1023 MIN_TIME_BETWEEN_CNPS_P1=2 RATE_REDUCE_MONITOR_PERIOD_P1=4 RATE_TO_SET_ON_FIRST_CNP_P1=0 RPG_AI_RATE_P1=5 RPG_BYTE_RESET_P1=0 RPG_GD_P1=11 RPG_HAI_RATE_P1=50 RPG_MAX_RATE_P1=0 RPG_MIN_DEC_FAC_P1=50 RPG_MIN_RATE_P1=1 RPG_THRESHOLD_P1=1 RPG_TIME_RESET_P1=300 CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6
    'ens1f0np0 mlx5_0 1 dscp 0,0,0,1,0,0,0,0 3 9000 106 1'
    # ens2f0np0: mlx5_1 port 1, connectx-6-dx, 100G, switch leaf1:Ethernet32, PCI <pci-address>
    #   cable 3.0 m (plan xoff 55180 B); RoCE MTU 4096; TOS 106 = DSCP 26 << 2 | ECT(0)
    #   DSCP->priority 26->3, 48->6, the other 62 DSCPs->0 (64 entries: set where the NIC differs, all read back); DCQCN on priorities [3] (notification and reaction point)
    #   mlxconfig -d <pci-address> -y set ROCE_CC_PRIO_MASK_P1=8 CLAMP_TGT_RATE_P1=0 CLAMP_TGT_RATE_AFTER_TIME_INC_P1=1 DCE_TCP_G_P1=1019 DCE_TCP_RTT_P1=1 INITIAL_ALPHA_VALUE_P1=1023 MIN_TIME_BETWEEN_CNPS_P1=2 RATE_REDUCE_MONITOR_PERIOD_P1=4 RATE_TO_SET_ON_FIRST_CNP_P1=0 RPG_AI_RATE_P1=5 RPG_BYTE_RESET_P1=0 RPG_GD_P1=11 RPG_HAI_RATE_P1=50 RPG_MAX_RATE_P1=0 RPG_MIN_DEC_FAC_P1=50 RPG_MIN_RATE_P1=1 RPG_THRESHOLD_P1=1 RPG_TIME_RESET_P1=300 CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6
    'ens2f0np0 mlx5_1 1 dscp 0,0,0,1,0,0,0,0 3 9000 106 1'
    # ens3f0np0: mlx5_2 port 1, connectx-6-dx, 100G, switch leaf2:Ethernet0, PCI <pci-address>
    #   cable 3.0 m (plan xoff 55180 B); RoCE MTU 4096; TOS 106 = DSCP 26 << 2 | ECT(0)
    #   DSCP->priority 26->3, 48->6, the other 62 DSCPs->0 (64 entries: set where the NIC differs, all read back); DCQCN on priorities [3] (notification and reaction point)
    #   mlxconfig -d <pci-address> -y set ROCE_CC_PRIO_MASK_P1=8 CLAMP_TGT_RATE_P1=0 CLAMP_TGT_RATE_AFTER_TIME_INC_P1=1 DCE_TCP_G_P1=1019 DCE_TCP_RTT_P1=1 INITIAL_ALPHA_VALUE_P1=1023 MIN_TIME_BETWEEN_CNPS_P1=2 RATE_REDUCE_MONITOR_PERIOD_P1=4 RATE_TO_SET_ON_FIRST_CNP_P1=0 RPG_AI_RATE_P1=5 RPG_BYTE_RESET_P1=0 RPG_GD_P1=11 RPG_HAI_RATE_P1=50 RPG_MAX_RATE_P1=0 RPG_MIN_DEC_FAC_P1=50 RPG_MIN_RATE_P1=1 RPG_THRESHOLD_P1=1 RPG_TIME_RESET_P1=300 CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6
    'ens3f0np0 mlx5_2 1 dscp 0,0,0,1,0,0,0,0 3 9000 106 1'
    # ens4f0np0: mlx5_3 port 1, connectx-6-dx, 100G, switch leaf2:Ethernet32, PCI <pci-address>
    #   cable 3.0 m (plan xoff 55180 B); RoCE MTU 4096; TOS 106 = DSCP 26 << 2 | ECT(0)
    #   DSCP->priority 26->3, 48->6, the other 62 DSCPs->0 (64 entries: set where the NIC differs, all read back); DCQCN on priorities [3] (notification and reaction point)
    #   mlxconfig -d <pci-address> -y set ROCE_CC_PRIO_MASK_P1=8 CLAMP_TGT_RATE_P1=0 CLAMP_TGT_RATE_AFTER_TIME_INC_P1=1 DCE_TCP_G_P1=1019 DCE_TCP_RTT_P1=1 INITIAL_ALPHA_VALUE_P1=1023 MIN_TIME_BETWEEN_CNPS_P1=2 RATE_REDUCE_MONITOR_PERIOD_P1=4 RATE_TO_SET_ON_FIRST_CNP_P1=0 RPG_AI_RATE_P1=5 RPG_BYTE_RESET_P1=0 RPG_GD_P1=11 RPG_HAI_RATE_P1=50 RPG_MAX_RATE_P1=0 RPG_MIN_DEC_FAC_P1=50 RPG_MIN_RATE_P1=1 RPG_THRESHOLD_P1=1 RPG_TIME_RESET_P1=300 CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6
    'ens4f0np0 mlx5_3 1 dscp 0,0,0,1,0,0,0,0 3 9000 106 1'
    # ens5f0np0: mlx5_4 port 1, connectx-6-dx, 100G, switch leaf3:Ethernet0, PCI <pci-address>
    #   cable 3.0 m (plan xoff 55180 B); RoCE MTU 4096; TOS 106 = DSCP 26 << 2 | ECT(0)
    #   DSCP->priority 26->3, 48->6, the other 62 DSCPs->0 (64 entries: set where the NIC differs, all read back); DCQCN on priorities [3] (notification and reaction point)
    #   mlxconfig -d <pci-address> -y set ROCE_CC_PRIO_MASK_P1=8 CLAMP_TGT_RATE_P1=0 CLAMP_TGT_RATE_AFTER_TIME_INC_P1=1 DCE_TCP_G_P1=1019 DCE_TCP_RTT_P1=1 INITIAL_ALPHA_VALUE_P1=1023 MIN_TIME_BETWEEN_CNPS_P1=2 RATE_REDUCE_MONITOR_PERIOD_P1=4 RATE_TO_SET_ON_FIRST_CNP_P1=0 RPG_AI_RATE_P1=5 RPG_BYTE_RESET_P1=0 RPG_GD_P1=11 RPG_HAI_RATE_P1=50 RPG_MAX_RATE_P1=0 RPG_MIN_DEC_FAC_P1=50 RPG_MIN_RATE_P1=1 RPG_THRESHOLD_P1=1 RPG_TIME_RESET_P1=300 CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6
    'ens5f0np0 mlx5_4 1 dscp 0,0,0,1,0,0,0,0 3 9000 106 1'
    # ens6f0np0: mlx5_5 port 1, connectx-6-dx, 100G, switch leaf3:Ethernet32, PCI <pci-address>
    #   cable 3.0 m (plan xoff 55180 B); RoCE MTU 4096; TOS 106 = DSCP 26 << 2 | ECT(0)
    #   DSCP->priority 26->3, 48->6, the other 62 DSCPs->0 (64 entries: set where the NIC differs, all read back); DCQCN on priorities [3] (notification and reaction point)
    #   mlxconfig -d <pci-address> -y set ROCE_CC_PRIO_MASK_P1=8 CLAMP_TGT_RATE_P1=0 CLAMP_TGT_RATE_AFTER_TIME_INC_P1=1 DCE_TCP_G_P1=1019 DCE_TCP_RTT_P1=1 INITIAL_ALPHA_VALUE_P1=1023 MIN_TIME_BETWEEN_CNPS_P1=2 RATE_REDUCE_MONITOR_PERIOD_P1=4 RATE_TO_SET_ON_FIRST_CNP_P1=0 RPG_AI_RATE_P1=5 RPG_BYTE_RESET_P1=0 RPG_GD_P1=11 RPG_HAI_RATE_P1=50 RPG_MAX_RATE_P1=0 RPG_MIN_DEC_FAC_P1=50 RPG_MIN_RATE_P1=1 RPG_THRESHOLD_P1=1 RPG_TIME_RESET_P1=300 CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6
    'ens6f0np0 mlx5_5 1 dscp 0,0,0,1,0,0,0,0 3 9000 106 1'
    # ens7f0np0: mlx5_6 port 1, connectx-6-dx, 100G, switch leaf4:Ethernet0, PCI <pci-address>
    #   cable 3.0 m (plan xoff 55180 B); RoCE MTU 4096; TOS 106 = DSCP 26 << 2 | ECT(0)
    #   DSCP->priority 26->3, 48->6, the other 62 DSCPs->0 (64 entries: set where the NIC differs, all read back); DCQCN on priorities [3] (notification and reaction point)
    #   mlxconfig -d <pci-address> -y set ROCE_CC_PRIO_MASK_P1=8 CLAMP_TGT_RATE_P1=0 CLAMP_TGT_RATE_AFTER_TIME_INC_P1=1 DCE_TCP_G_P1=1019 DCE_TCP_RTT_P1=1 INITIAL_ALPHA_VALUE_P1=1023 MIN_TIME_BETWEEN_CNPS_P1=2 RATE_REDUCE_MONITOR_PERIOD_P1=4 RATE_TO_SET_ON_FIRST_CNP_P1=0 RPG_AI_RATE_P1=5 RPG_BYTE_RESET_P1=0 RPG_GD_P1=11 RPG_HAI_RATE_P1=50 RPG_MAX_RATE_P1=0 RPG_MIN_DEC_FAC_P1=50 RPG_MIN_RATE_P1=1 RPG_THRESHOLD_P1=1 RPG_TIME_RESET_P1=300 CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6
    'ens7f0np0 mlx5_6 1 dscp 0,0,0,1,0,0,0,0 3 9000 106 1'
    # ens8f0np0: mlx5_7 port 1, connectx-6-dx, 100G, switch leaf4:Ethernet32, PCI <pci-address>
    #   cable 3.0 m (plan xoff 55180 B); RoCE MTU 4096; TOS 106 = DSCP 26 << 2 | ECT(0)
    #   DSCP->priority 26->3, 48->6, the other 62 DSCPs->0 (64 entries: set where the NIC differs, all read back); DCQCN on priorities [3] (notification and reaction point)
    #   mlxconfig -d <pci-address> -y set ROCE_CC_PRIO_MASK_P1=8 CLAMP_TGT_RATE_P1=0 CLAMP_TGT_RATE_AFTER_TIME_INC_P1=1 DCE_TCP_G_P1=1019 DCE_TCP_RTT_P1=1 INITIAL_ALPHA_VALUE_P1=1023 MIN_TIME_BETWEEN_CNPS_P1=2 RATE_REDUCE_MONITOR_PERIOD_P1=4 RATE_TO_SET_ON_FIRST_CNP_P1=0 RPG_AI_RATE_P1=5 RPG_BYTE_RESET_P1=0 RPG_GD_P1=11 RPG_HAI_RATE_P1=50 RPG_MAX_RATE_P1=0 RPG_MIN_DEC_FAC_P1=50 RPG_MIN_RATE_P1=1 RPG_THRESHOLD_P1=1 RPG_TIME_RESET_P1=300 CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6
    'ens8f0np0 mlx5_7 1 dscp 0,0,0,1,0,0,0,0 3 9000 106 1'
)
# DSCP -> priority, the plan's whole map (DSCP trust): value set, DSCP, priority; 8 a line (one mlnx_qos
# call sets every --dscp2prio set,DSCP,PRIO where the NIC's map differs; every one read back).
RT_DSCP2PRIO=(
    '1 0 0' '1 1 0' '1 2 0' '1 3 0' '1 4 0' '1 5 0' '1 6 0' '1 7 0'
    '1 8 0' '1 9 0' '1 10 0' '1 11 0' '1 12 0' '1 13 0' '1 14 0' '1 15 0'
    '1 16 0' '1 17 0' '1 18 0' '1 19 0' '1 20 0' '1 21 0' '1 22 0' '1 23 0'
    '1 24 0' '1 25 0' '1 26 3' '1 27 0' '1 28 0' '1 29 0' '1 30 0' '1 31 0'
    '1 32 0' '1 33 0' '1 34 0' '1 35 0' '1 36 0' '1 37 0' '1 38 0' '1 39 0'
    '1 40 0' '1 41 0' '1 42 0' '1 43 0' '1 44 0' '1 45 0' '1 46 0' '1 47 0'
    '1 48 6' '1 49 0' '1 50 0' '1 51 0' '1 52 0' '1 53 0' '1 54 0' '1 55 0'
    '1 56 0' '1 57 0' '1 58 0' '1 59 0' '1 60 0' '1 61 0' '1 62 0' '1 63 0'
)
# The same map per priority: value set, priority, its DSCPs as runs (what --check names when a NIC lists
# no DSCP map at all).
RT_DSCP_RUNS=(
    '1 0 0-25,27-47,49-63'
    '1 3 26'
    '1 6 48'
)
# DCQCN sysfs writes (/sys/class/net/<netdev>/ecn/FILE): value set, FILE, value.
RT_ECN=(
    '1 roce_np/enable/3 1'
    '1 roce_rp/enable/3 1'
    '1 roce_rp/clamp_tgt_rate 0'
    '1 roce_rp/clamp_tgt_rate_after_time_inc 1'
    '1 roce_rp/dce_tcp_g 1019'
    '1 roce_rp/dce_tcp_rtt 1'
    '1 roce_rp/initial_alpha_value 1023'
    '1 roce_np/min_time_between_cnps 2'
    '1 roce_rp/rate_reduce_monitor_period 4'
    '1 roce_rp/rate_to_set_on_first_cnp 0'
    '1 roce_rp/rpg_ai_rate 5'
    '1 roce_rp/rpg_byte_reset 0'
    '1 roce_rp/rpg_gd 11'
    '1 roce_rp/rpg_hai_rate 50'
    '1 roce_rp/rpg_max_rate 0'
    '1 roce_rp/rpg_min_dec_fac 50'
    '1 roce_rp/rpg_min_rate 1'
    '1 roce_rp/rpg_threshold 1'
    '1 roce_rp/rpg_time_reset 300'
    '1 roce_np/cnp_dscp 48'
    '1 roce_np/cnp_802p_prio 6'
)
# ----- the shared host script -----
RT_SHARED="$(dirname -- "${BASH_SOURCE[0]}")"/roce-tune-host.sh
if [[ ! -r "$RT_SHARED" ]]; then
    echo "roce-tune: $RT_SHARED not found: copy hosts/${RT_SHARED##*/} beside this file" \
        "(or push with roce-tune apply)" >&2
    exit 2
fi
# shellcheck source=/dev/null
source "$RT_SHARED"
