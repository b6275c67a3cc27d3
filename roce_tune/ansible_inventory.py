"""Ansible inventory from a roce-tune inventory, so the playbooks need no second source of truth.

``roce-tune ansible-inventory inventories/site.yaml > hosts.yml`` prints a YAML (or JSON) Ansible
inventory with:

* groups ``roce_tune`` (everything) -> ``switches`` (children ``platform_<os>``) and ``gpu_hosts``;
  ``role_<role>`` groups (``role_leaf``, ``role_spine`` …) next to them;
* per platform group the connection settings the community collections need
  (``ansible_connection``, ``ansible_network_os``, become/enable): each platform's ``ansible`` record;
* credentials by **variable name only**: ``ansible_user: "{{ lookup('env', 'ROCE_TUNE_USERNAME') }}"``
  (the inventory's ``credentials.*_env`` names; a device with non-default names gets its own lookups), and
  ``roce_tune_username_env``, the username variable's name, which push.yml names when it is not set;
* per device ``ansible_host``/``ansible_port`` (from ``mgmt``), ``roce_tune_platform``,
  ``roce_tune_role`` and ``roce_tune_config`` — the rendered file ``roce-tune plan`` writes for it
  (``<out>/switches/<name>.<ext>``, the same file ``roce-tune apply`` pushes: :data:`DESIRED_FILE`;
  for a GPU host its data file ``<out>/hosts/<name>.sh``, and the group var ``roce_tune_host_script`` names
  the shared host script that ``playbooks/push.yml`` sends with it as one script);

Paths are written exactly as given (``--out``, default ``out/<inventory stem>`` like ``roce-tune plan``);
the playbooks resolve relative paths against ``roce_tune_base_dir`` (default: the directory above
``playbooks/``, i.e. the repository root).

Connection choices are each platform's :class:`~roce_tune.platforms.contract.AnsibleConnection` (checked
against the collections bundled in the ``ansible`` 12 package: arista.eos 12, cisco.nxos 11,
junipernetworks.junos 11, ansible.netcommon 8): CLI network OSes use ``ansible.netcommon.network_cli`` with
paramiko, Linux-based ones and GPU hosts plain ``ansible.builtin.ssh``; a platform may offer another
connection (``--junos-connection netconf`` selects the one the platform lists under that name).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from roce_tune.inventory.models import Credentials, Inventory
from roce_tune.platforms import HOST_PLATFORM, SWITCH_PLATFORMS, get_platform, platform
from roce_tune.platforms.contract import AnsibleConnection


def _ansible(name: str) -> AnsibleConnection:
    """The platform's Ansible connection facts.

    Raises:
        KeyError: the platform is unknown or declares none.
    """
    facts = platform(name).ansible
    if facts is None:
        raise KeyError(f"platform {name!r} declares no Ansible connection")
    return facts


#: rendered desired-config file per switch platform, relative to ``<out>/switches`` (same as deploy).
DESIRED_FILE: dict[str, str] = {name: f for name in SWITCH_PLATFORMS
                                if (f := platform(name).push.desired_file)}
#: the connection choices ``junos_connection`` accepts: the default and those a platform offers
CONNECTIONS = ("network_cli", *sorted({c for name in SWITCH_PLATFORMS for c in _ansible(name).alternatives}))
#: settings every network_cli device shares (paramiko: no ansible-pylibssh needed; commit/apply-patch
#: can take tens of seconds on real boxes, docs/derivation.md#platform-syntax).
COMMON_VARS: dict[str, Any] = {"ansible_network_cli_ssh_type": "paramiko", "ansible_command_timeout": 120}


def _env(name: str) -> str:
    return "{{ lookup('env', '" + name + "') }}"


def credential_vars(creds: Credentials) -> dict[str, str]:
    """Ansible connection variables that read the credentials from the named environment variables.

    >>> credential_vars(Credentials())["ansible_user"]
    "{{ lookup('env', 'ROCE_TUNE_USERNAME') }}"
    >>> sorted(credential_vars(Credentials(password_env=None, key_file_env="K")))
    ['ansible_ssh_private_key_file', 'ansible_user', 'roce_tune_username_env']

    Names only: no secret is ever written into the inventory. ``roce_tune_username_env`` is the name of the
    username's variable, for push.yml's message when it is not set (an empty ``ansible_user`` makes Ansible
    log in as the controller's own user: tasks/reach.yml refuses it first, naming the variable).
    """
    out = {"ansible_user": _env(creds.username_env), "roce_tune_username_env": creds.username_env}
    if creds.password_env:
        out["ansible_password"] = _env(creds.password_env)
        out["ansible_become_password"] = _env(creds.password_env)
    if creds.key_file_env:
        out["ansible_ssh_private_key_file"] = _env(creds.key_file_env)
    return out


def _device_vars(mgmt: Any, creds: Credentials, default: Credentials) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if mgmt is not None:
        out["ansible_host"] = mgmt.host
        if mgmt.port != 22:
            out["ansible_port"] = mgmt.port
    if creds != default:
        out.update(credential_vars(creds))
        if not creds.password_env and default.password_env:
            # no password for this device: blank the site's lookups it would inherit, or Ansible would
            # offer the site's password to it (login and become)
            out.update(ansible_password="", ansible_become_password="")
    return out


def build_ansible_inventory(inv: Inventory, inventory_path: str, out_dir: str,
                            junos_connection: str = "network_cli") -> dict[str, Any]:
    """The Ansible inventory (YAML inventory plugin shape) for ``inv``.

    Args:
        inv: a validated inventory.
        inventory_path: the roce-tune inventory file as the user named it (``plan.yml`` re-plans it).
        out_dir: the ``roce-tune plan`` output directory (relative paths stay relative).
        junos_connection: ``network_cli`` (default) or a connection a platform offers instead (``netconf``:
            the Junos group, :attr:`~roce_tune.platforms.contract.AnsibleConnection.alternatives`).

    Returns:
        ``{"all": {"children": {...}}}`` ready for ``yaml``/``json`` dumping.

    Raises:
        ValueError: a device name equal to a generated group name, or an unknown ``junos_connection``.
    """
    if junos_connection not in CONNECTIONS:
        raise ValueError(f"junos_connection must be {' or '.join(CONNECTIONS)}, not {junos_connection!r}")
    out = out_dir.rstrip("/") or "."
    default = Credentials()
    platforms: dict[str, dict[str, Any]] = {}
    roles: dict[str, dict[str, Any]] = {}
    for sw in inv.switches:
        p = sw.platform.value
        host = _device_vars(sw.mgmt, sw.credentials, default)
        host.update(roce_tune_platform=p, roce_tune_role=sw.role.value,
                    roce_tune_config=f"{out}/switches/" + DESIRED_FILE[p].format(name=sw.name))
        for var, extra in _ansible(p).extra_files:
            host[var] = f"{out}/switches/" + extra.format(name=sw.name)
        platforms.setdefault(p, {})[sw.name] = host
        roles.setdefault(sw.role.value, {})[sw.name] = {}
    gpu_hosts: dict[str, Any] = {}
    for h in inv.hosts:
        host = _device_vars(h.mgmt, h.credentials, default)
        host.update(roce_tune_platform=HOST_PLATFORM, roce_tune_role="host",
                    roce_tune_config=f"{out}/hosts/{h.name}.sh")
        gpu_hosts[h.name] = host

    switch_children: dict[str, Any] = {}
    for p in sorted(platforms):
        facts = _ansible(p)
        pvars = {**facts.group_vars, **facts.alternatives.get(junos_connection, {})}
        switch_children[f"platform_{p}"] = {"vars": pvars, "hosts": platforms[p]}
    children: dict[str, Any] = {}
    if switch_children:
        children["switches"] = {"children": switch_children}
    if gpu_hosts:
        shared = get_platform(HOST_PLATFORM).SHARED_SCRIPT  # every host's data file sources it
        # nccl.env: the NCCL variables of every host; a host whose variables differ also has its own
        # hosts/<name>.nccl.env (named on nccl.env's "# per-host:" line)
        children["gpu_hosts"] = {"vars": {**_ansible(HOST_PLATFORM).group_vars,
                                          "roce_tune_host_script": f"{out}/hosts/{shared}",
                                          "roce_tune_nccl_env": f"{out}/nccl.env"},
                                 "hosts": gpu_hosts}
    for r in sorted(roles):
        children[f"role_{r}"] = {"hosts": roles[r]}

    names = {sw.name for sw in inv.switches} | {h.name for h in inv.hosts}
    groups = {"all", "ungrouped", "roce_tune", *children, *switch_children}
    clash = sorted(names & groups)
    if clash:
        raise ValueError(f"device name(s) {', '.join(clash)} equal a generated Ansible group name; rename "
                         "them")

    top_vars: dict[str, Any] = {"roce_tune_site": inv.site.name, "roce_tune_inventory": inventory_path,
                                "roce_tune_out_dir": out, **COMMON_VARS, **credential_vars(default)}
    return {"all": {"children": {"roce_tune": {"vars": top_vars, "children": children}}}}


def default_out_dir(inventory_path: str | Path) -> str:
    """``out/<inventory stem>``: the directory ``roce-tune plan`` writes to without ``--out``."""
    return f"out/{Path(inventory_path).stem}"


def dump_ansible_inventory(data: dict[str, Any], fmt: str = "yaml") -> str:
    """Serialise an inventory from :func:`build_ansible_inventory` as ``yaml`` or ``json``.

    The YAML keeps insertion order and quotes every ``{{ … }}`` string (Jinja in YAML must be quoted).

    Raises:
        ValueError: ``fmt`` is neither yaml nor json.
    """
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    if fmt != "yaml":
        raise ValueError(f"format must be yaml or json, not {fmt!r}")
    from io import StringIO

    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    yaml.width = 4096
    buf = StringIO()
    buf.write("# Generated by roce-tune ansible-inventory; regenerate instead of editing.\n"
              "# Credentials are read from environment variables at run time; no secret is stored here.\n")
    yaml.dump(data, buf)
    return buf.getvalue()
