"""The Jinja environment the platform renderers use (kept here for callers of ``roce_tune.render.engine``;
it lives in :mod:`roce_tune.platforms.templating` so that the platform package does not import
``render``, which imports the platforms: no package cycle)."""

from __future__ import annotations

from roce_tune.platforms.templating import comment_safe, environment, render_template, templates_dir

__all__ = ["comment_safe", "environment", "render_template", "templates_dir"]
