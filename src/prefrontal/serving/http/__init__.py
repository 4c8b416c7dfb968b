"""The HTTP API (extra: ``prefrontal[server]``): :func:`create_app` and its parts."""

from prefrontal.serving.http.app import create_app
from prefrontal.serving.http.limits import DEFAULT_MAX_BODY_BYTES, BodyLimit
from prefrontal.serving.http.metrics import Metrics, installed_metrics

__all__ = ["DEFAULT_MAX_BODY_BYTES", "BodyLimit", "Metrics", "create_app", "installed_metrics"]
