"""One module per `baton` verb; each exposes ``register(subparsers)``."""
