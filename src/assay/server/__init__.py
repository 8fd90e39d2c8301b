"""``assay view``: a local web viewer over the store (the ``view`` extra: FastAPI,
uvicorn, Jinja2). Pages are server-rendered; tables fetch pages of rows as JSON, so a
run with tens of thousands of trials stays responsive. See docs/viewer.md."""

from .app import Page, create_app, register_page, serve

__all__ = ["Page", "create_app", "register_page", "serve"]
