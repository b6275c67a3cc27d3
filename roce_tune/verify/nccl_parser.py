"""Compatibility name of :mod:`roce_tune.verify.nccl` (the nccl-tests output parser, now a subpackage).

Every public name is re-exported, so ``from roce_tune.verify.nccl_parser import parse_nccl_output``
keeps working; new code imports from :mod:`roce_tune.verify.nccl`.
"""

from __future__ import annotations

from roce_tune.verify.nccl import *  # noqa: F403
from roce_tune.verify.nccl import __all__  # noqa: F401
