"""`baton serve`: one :class:`~baton.runtime.runtime.Runtime` per data directory as a
long-lived local service with an authenticated HTTP API (docs/api.md).

The package is imported only by the `baton serve` verb (and tests): `import baton` and the
other verbs never pay for Starlette or uvicorn. Modules, each with one job:

- :mod:`~baton.service.limits`: every bound the service keeps, named.
- :mod:`~baton.service.statuses`: the HTTP status of each stable error code, and the JSON
  error body.
- :mod:`~baton.service.guard`: the ASGI middleware in front of every route (Host, token or
  cookie, Origin, body size, no CORS).
- :mod:`~baton.service.tokens`: the token and the cookie secret, compared in constant time.
- :mod:`~baton.service.runtime_file`: the data directory's service lock and runtime file.
- :mod:`~baton.service.feeds`: each run's numbered event feed and its bounded subscribers.
- :mod:`~baton.service.sse`: the Server-Sent Events response.
- :mod:`~baton.service.asking`: permission requests held for an answer through the API.
- :mod:`~baton.service.launcher`: runs started through the API, their tasks and shutdown.
- :mod:`~baton.service.routes_*`: the routes, one module per resource.
- :mod:`~baton.service.openapi`: the OpenAPI document.
- :mod:`~baton.service.app`: the Starlette application.
- :mod:`~baton.service.server`: uvicorn on loopback, signals, graceful shutdown.
"""
