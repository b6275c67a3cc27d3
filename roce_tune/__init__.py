"""roce-tune: lossless RoCEv2 tuning for GPU cluster fabrics.

Pipeline: inventory (load, validate, lint) -> tuner (pure derivation) -> Plan -> render -> files.
"""

__version__ = "0.1.0"
