"""Baton's version and its distribution name, each in one place.

pyproject.toml reads ``__version__`` (``[tool.setuptools.dynamic]``, statically, without
importing Baton, so it stays a plain string literal); clientInfo and ``baton --version`` read it
too.
"""

__version__ = "0.1.0"

#: Baton's name on PyPI (``pip install baton-acp``). The import package and the console script
#: are both ``baton``; the PyPI distribution named ``baton`` is an unrelated project whose files
#: also land in a ``baton`` import package. pyproject.toml's ``name`` says the same (a test keeps
#: the two equal).
DISTRIBUTION = "baton-acp"
