# roce-tune: roce-tune 0.1.0 | site spectrum-x-su1 | switch su1-spine1 (cumulus, SN5600, spectrum-4)
# NVUE syntax of Cumulus Linux 5.14

# ===== roce =====
nv set qos roce mode lossless
# ===== maps =====
nv set qos mapping default-global trust l3
nv set qos mapping default-global dscp 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63 switch-priority 0
nv set qos mapping default-global dscp 26 switch-priority 3
nv set qos mapping default-global dscp 48 switch-priority 6
nv set qos egress-queue-mapping default-global switch-priority 0 traffic-class 0
nv set qos egress-queue-mapping default-global switch-priority 1 traffic-class 0
nv set qos egress-queue-mapping default-global switch-priority 2 traffic-class 0
nv set qos egress-queue-mapping default-global switch-priority 3 traffic-class 3
nv set qos egress-queue-mapping default-global switch-priority 4 traffic-class 0
nv set qos egress-queue-mapping default-global switch-priority 5 traffic-class 0
nv set qos egress-queue-mapping default-global switch-priority 6 traffic-class 6
nv set qos egress-queue-mapping default-global switch-priority 7 traffic-class 0
# ===== pfc =====
nv set qos pfc default-global switch-priority 3
nv set qos pfc default-global tx enable
nv set qos pfc default-global rx enable
nv set qos pfc default-global cable-length 30
# ===== buffers =====
nv set qos traffic-pool default-lossy memory-percent 50
nv set qos traffic-pool roce-lossless memory-percent 50
# ===== ecn =====
# ECN profile ROCE_LOSSLESS_800G_N31
nv set qos congestion-control default-global traffic-class 3 ecn enable
nv set qos congestion-control default-global traffic-class 3 min-threshold 3800000
nv set qos congestion-control default-global traffic-class 3 max-threshold 7600000
nv set qos congestion-control default-global traffic-class 3 probability 2
nv set qos congestion-control default-global traffic-class 3 red disable
# ===== scheduler =====
nv set qos egress-scheduler default-global traffic-class 6 mode strict
nv set qos egress-scheduler default-global traffic-class 0,3 mode dwrr
nv set qos egress-scheduler default-global traffic-class 0,3 bw-percent 50
# ===== watchdog =====
nv set qos pfc-watchdog polling-interval 200
nv set qos pfc-watchdog robustness 1
# ===== interfaces =====
nv set interface swp1 link mtu 9216
nv set interface swp1 qos pfc-watchdog state enable
nv set interface swp10 link mtu 9216
nv set interface swp10 qos pfc-watchdog state enable
nv set interface swp11 link mtu 9216
nv set interface swp11 qos pfc-watchdog state enable
nv set interface swp12 link mtu 9216
nv set interface swp12 qos pfc-watchdog state enable
nv set interface swp13 link mtu 9216
nv set interface swp13 qos pfc-watchdog state enable
nv set interface swp14 link mtu 9216
nv set interface swp14 qos pfc-watchdog state enable
nv set interface swp15 link mtu 9216
nv set interface swp15 qos pfc-watchdog state enable
nv set interface swp16 link mtu 9216
nv set interface swp16 qos pfc-watchdog state enable
nv set interface swp17 link mtu 9216
nv set interface swp17 qos pfc-watchdog state enable
nv set interface swp18 link mtu 9216
nv set interface swp18 qos pfc-watchdog state enable
nv set interface swp19 link mtu 9216
nv set interface swp19 qos pfc-watchdog state enable
nv set interface swp2 link mtu 9216
nv set interface swp2 qos pfc-watchdog state enable
nv set interface swp20 link mtu 9216
nv set interface swp20 qos pfc-watchdog state enable
nv set interface swp21 link mtu 9216
nv set interface swp21 qos pfc-watchdog state enable
nv set interface swp22 link mtu 9216
nv set interface swp22 qos pfc-watchdog state enable
nv set interface swp23 link mtu 9216
nv set interface swp23 qos pfc-watchdog state enable
nv set interface swp24 link mtu 9216
nv set interface swp24 qos pfc-watchdog state enable
nv set interface swp25 link mtu 9216
nv set interface swp25 qos pfc-watchdog state enable
nv set interface swp26 link mtu 9216
nv set interface swp26 qos pfc-watchdog state enable
nv set interface swp27 link mtu 9216
nv set interface swp27 qos pfc-watchdog state enable
nv set interface swp28 link mtu 9216
nv set interface swp28 qos pfc-watchdog state enable
nv set interface swp29 link mtu 9216
nv set interface swp29 qos pfc-watchdog state enable
nv set interface swp3 link mtu 9216
nv set interface swp3 qos pfc-watchdog state enable
nv set interface swp30 link mtu 9216
nv set interface swp30 qos pfc-watchdog state enable
nv set interface swp31 link mtu 9216
nv set interface swp31 qos pfc-watchdog state enable
nv set interface swp32 link mtu 9216
nv set interface swp32 qos pfc-watchdog state enable
nv set interface swp4 link mtu 9216
nv set interface swp4 qos pfc-watchdog state enable
nv set interface swp5 link mtu 9216
nv set interface swp5 qos pfc-watchdog state enable
nv set interface swp6 link mtu 9216
nv set interface swp6 qos pfc-watchdog state enable
nv set interface swp7 link mtu 9216
nv set interface swp7 qos pfc-watchdog state enable
nv set interface swp8 link mtu 9216
nv set interface swp8 qos pfc-watchdog state enable
nv set interface swp9 link mtu 9216
nv set interface swp9 qos pfc-watchdog state enable
# not applied by this file: roce-tune deploy (commit method nvue-confirm) reviews "nv config diff", then runs
# "nv config apply --confirm <seconds>s -y" and, after its checks, "nv config apply --confirm-yes".
