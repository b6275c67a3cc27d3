"""Importers: build a full-form inventory from where a fabric is already described (NetBox, …)."""
