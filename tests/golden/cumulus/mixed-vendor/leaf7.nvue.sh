# roce-tune: roce-tune 0.1.0 | site mixed-ai-fabric | switch leaf7 (cumulus, SN4700, spectrum-3)
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
# ports swp1,swp2,swp3,swp4
nv set qos pfc roce-pfc-3-3m switch-priority 3
nv set qos pfc roce-pfc-3-3m tx enable
nv set qos pfc roce-pfc-3-3m rx enable
nv set qos pfc roce-pfc-3-3m cable-length 3
# ports swp5,swp6,swp7,swp8
nv set qos pfc roce-pfc-3-20m switch-priority 3
nv set qos pfc roce-pfc-3-20m tx enable
nv set qos pfc roce-pfc-3-20m rx enable
nv set qos pfc roce-pfc-3-20m cable-length 20
# ===== buffers =====
nv set qos traffic-pool default-lossy memory-percent 50
nv set qos traffic-pool roce-lossless memory-percent 50
# ===== ecn =====
# ECN profile ROCE_LOSSLESS_400G_N4 (ports swp5,swp6,swp7,swp8)
nv set qos congestion-control ROCE_LOSSLESS_400G_N4 traffic-class 3 ecn enable
nv set qos congestion-control ROCE_LOSSLESS_400G_N4 traffic-class 3 min-threshold 3750000
nv set qos congestion-control ROCE_LOSSLESS_400G_N4 traffic-class 3 max-threshold 7500000
nv set qos congestion-control ROCE_LOSSLESS_400G_N4 traffic-class 3 probability 1
nv set qos congestion-control ROCE_LOSSLESS_400G_N4 traffic-class 3 red disable
# ECN profile ROCE_LOSSLESS_400G_N7 (ports swp1,swp2,swp3,swp4)
nv set qos congestion-control ROCE_LOSSLESS_400G_N7 traffic-class 3 ecn enable
nv set qos congestion-control ROCE_LOSSLESS_400G_N7 traffic-class 3 min-threshold 3750000
nv set qos congestion-control ROCE_LOSSLESS_400G_N7 traffic-class 3 max-threshold 7500000
nv set qos congestion-control ROCE_LOSSLESS_400G_N7 traffic-class 3 probability 1
nv set qos congestion-control ROCE_LOSSLESS_400G_N7 traffic-class 3 red disable
# ===== scheduler =====
nv set qos egress-scheduler default-global traffic-class 6 mode strict
nv set qos egress-scheduler default-global traffic-class 0,3 mode dwrr
nv set qos egress-scheduler default-global traffic-class 0,3 bw-percent 50
# ===== watchdog =====
nv set qos pfc-watchdog polling-interval 200
nv set qos pfc-watchdog robustness 1
# ===== interfaces =====
nv set interface swp1 link mtu 9216
nv set interface swp1 qos pfc profile roce-pfc-3-3m
nv set interface swp1 qos congestion-control profile ROCE_LOSSLESS_400G_N7
nv set interface swp1 qos pfc-watchdog state enable
nv set interface swp2 link mtu 9216
nv set interface swp2 qos pfc profile roce-pfc-3-3m
nv set interface swp2 qos congestion-control profile ROCE_LOSSLESS_400G_N7
nv set interface swp2 qos pfc-watchdog state enable
nv set interface swp3 link mtu 9216
nv set interface swp3 qos pfc profile roce-pfc-3-3m
nv set interface swp3 qos congestion-control profile ROCE_LOSSLESS_400G_N7
nv set interface swp3 qos pfc-watchdog state enable
nv set interface swp4 link mtu 9216
nv set interface swp4 qos pfc profile roce-pfc-3-3m
nv set interface swp4 qos congestion-control profile ROCE_LOSSLESS_400G_N7
nv set interface swp4 qos pfc-watchdog state enable
nv set interface swp5 link mtu 9216
nv set interface swp5 qos pfc profile roce-pfc-3-20m
nv set interface swp5 qos congestion-control profile ROCE_LOSSLESS_400G_N4
nv set interface swp5 qos pfc-watchdog state enable
nv set interface swp6 link mtu 9216
nv set interface swp6 qos pfc profile roce-pfc-3-20m
nv set interface swp6 qos congestion-control profile ROCE_LOSSLESS_400G_N4
nv set interface swp6 qos pfc-watchdog state enable
nv set interface swp7 link mtu 9216
nv set interface swp7 qos pfc profile roce-pfc-3-20m
nv set interface swp7 qos congestion-control profile ROCE_LOSSLESS_400G_N4
nv set interface swp7 qos pfc-watchdog state enable
nv set interface swp8 link mtu 9216
nv set interface swp8 qos pfc profile roce-pfc-3-20m
nv set interface swp8 qos congestion-control profile ROCE_LOSSLESS_400G_N4
nv set interface swp8 qos pfc-watchdog state enable
# not applied by this file: roce-tune deploy (commit method nvue-confirm) reviews "nv config diff", then runs
# "nv config apply --confirm <seconds>s -y" and, after its checks, "nv config apply --confirm-yes".
