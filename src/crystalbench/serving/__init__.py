"""What crystalbench's servers share: request guards and connection handling.

Both servers, the reward server (:mod:`crystalbench.rewards.server`, ``crystal
serve-rewards``) and the review app (:mod:`crystalbench.review.app`, ``crystal review serve``),
take their HTTP guards from here, so a limit, a timeout or a token check is written once:

- :mod:`~crystalbench.serving.limits`: :class:`~crystalbench.serving.limits.RequestGuard`
  (header limit, bearer token, body limits) and the checks it is made of; strict JSON bodies;
- :mod:`~crystalbench.serving.connections`: loopback checks, the listening socket, and the
  idle and header timeouts uvicorn lacks.

Importing this package imports neither Starlette nor uvicorn.
"""

__all__: list[str] = []
