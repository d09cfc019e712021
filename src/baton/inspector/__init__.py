"""The inspector: the web page `baton serve` puts on its API.

This package holds the page's static files (plain HTML, CSS and JavaScript modules, no build
step) and the little Python that hands them to the service: which files exist, their content
types and the security headers every one of them is served with. It imports nothing of Baton's
but the error hierarchy: the page talks to the service through the same ``/api/v1`` routes as
any other client (docs/inspector.md).
"""

from baton.inspector.assets import (
    ASSET_PREFIX,
    CONTENT_SECURITY_POLICY,
    ENTRY_PAGE,
    SECURITY_HEADERS,
    InspectorAsset,
    asset_names,
    load_asset,
    missing_references,
)

__all__ = [
    "ASSET_PREFIX",
    "CONTENT_SECURITY_POLICY",
    "ENTRY_PAGE",
    "SECURITY_HEADERS",
    "InspectorAsset",
    "asset_names",
    "load_asset",
    "missing_references",
]
