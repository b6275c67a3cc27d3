"""netmiko ``linux`` (LinuxSSH) against the GPU-host emulator (real bash, stub NIC tools)."""

from __future__ import annotations

import paramiko
import pytest

from tests.emulators import NETMIKO_DROP_ERRORS

pytestmark = pytest.mark.emulator

SYSFS = "$ROCE_TUNE_SYSROOT/sys/class/net/ens1f0np0/ecn"


def test_stub_tools_change_the_sysroot(one):
    fleet, conn = one("host", name="gpu01", password="pw")
    dev = fleet["gpu01"]
    assert conn.base_prompt == "admin@gpu01:~"
    before = dev.running_config()
    assert "default_roce_mode = IB/RoCE v1" in before
    out = conn.send_command("mlnx_qos -i ens1f0np0 --trust dscp --pfc 0,0,0,1,0,0,0,0")
    assert "Priority trust state: dscp" in out and "\tenabled     0   0   0   1   0" in out
    assert conn.send_command("cma_roce_tos -d mlx5_0 -p 1 -t 106") == "106"
    assert conn.send_command("cma_roce_mode -d mlx5_0 -p 1 -m 2") == "RoCE v2"
    conn.send_command(f"echo 1 > {SYSFS}/roce_np/enable/3; echo 26 > {SYSFS}/roce_np/cnp_dscp")
    conn.send_command("ethtool -A ens1f0np0 rx off tx off")
    assert "RX:\t\toff" in conn.send_command("ethtool -a ens1f0np0")
    assert "n_gids_found=4" in conn.send_command("show_gids mlx5_0")
    assert "hca_id:\tmlx5_0" in conn.send_command("ibv_devinfo -d mlx5_0")
    after = dev.running_config()
    assert "sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos = 106" in after
    assert "sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp = 26" in after
    assert conn.send_command("cma_roce_tos -d mlx5_9 -p 1; echo rc=$?").endswith("rc=1")


def test_sudo_config_mode_and_exec_channel(one):
    fleet, conn = one("host", name="gpu01", password="pw")
    conn.config_mode()
    assert conn.base_prompt == "root@gpu01:~"
    assert conn.send_command("whoami") == "root"
    conn.exit_config_mode()
    assert conn.send_command("whoami") == "admin"
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect("127.0.0.1", fleet.port("gpu01"), "admin", "pw", allow_agent=False, look_for_keys=False)
    try:
        _, out, _ = client.exec_command("cd && pwd && ip -j link show ens1f0np0 && exit 3")
        text = out.read().decode()
        assert text.startswith(str(fleet["gpu01"].home)) and '"ifname": "ens1f0np0"' in text
        assert out.channel.recv_exit_status() == 3
    finally:
        client.close()
    assert fleet["gpu01"].commands_seen[-1] == "cd && pwd && ip -j link show ens1f0np0 && exit 3"


def test_rejected_and_dropped_commands(one):
    fleet, conn = one("host", name="gpu01", password="pw")
    dev = fleet["gpu01"]
    before = dev.running_config()
    dev.set_fault(reject_pattern=r"cma_roce_tos")
    out = conn.send_command("cma_roce_tos -d mlx5_0 -p 1 -t 106; echo rc=$?")
    assert "Error: command rejected" in out
    dev.set_fault(reject_pattern=None, drop_after_config_lines=1)
    # host: dropped when the N-th command line arrives, before it
    # runs
    with pytest.raises(NETMIKO_DROP_ERRORS):
        conn.send_command("cma_roce_mode -d mlx5_0 -p 1 -m 2", read_timeout=1, cmd_verify=False)
    assert dev.running_config() == before
