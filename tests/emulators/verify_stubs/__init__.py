"""Emulated nccl-tests, launchers and counters for ``roce-tune verify`` tests (see README.md).

``start_lab(inventory, workdir)`` starts the SONiC model switch and GPU hosts of an inventory with
the stubs on the hosts' PATH; the response model (:mod:`.model`) turns the settings applied to them
into bandwidth and counters.
"""

from __future__ import annotations

from .fleet import VerifyLab, close_switch_mgmt, make_stub_bin, start_lab

__all__ = ["VerifyLab", "close_switch_mgmt", "make_stub_bin", "start_lab"]
