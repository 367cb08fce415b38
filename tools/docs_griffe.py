"""A griffe extension for the API reference: docstrings written with Sphinx roles read well.

crystalbench's docstrings are Google style, but they cross-reference with Sphinx roles
(``:func:`evaluate```, ``:class:`~crystalbench.types.ParsedResponse```) and introduce literal
blocks with ``::``. mkdocstrings renders Markdown, where both show as stray punctuation. This
extension rewrites them as the docs site is built (``mkdocs.yml`` names it); the source stays
as it is, so ``help()`` and IDEs show what they always showed.

A role becomes an *optional* cross-reference: a link when the name is rendered somewhere on
the site (a public name), plain code otherwise (an internal name is never an error).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const):`(?P<target>[^`]+)`")
LITERAL_INTRO = re.compile(r"(?<=\S)::[ \t]*$", re.MULTILINE)


def _reference(target: str, context: str) -> str:
    """The HTML of one role: an optional autoref to its full path, titled as Sphinx would.

    Args:
        target: The role's target, e.g. ``~crystalbench.types.ParsedResponse`` or ``.base``.
        context: The dotted path of the object whose docstring holds the role (the package a
            relative target such as ``.base`` starts from).

    Returns:
        An ``<autoref>`` element mkdocs-autorefs resolves, or leaves as code when the name is
        not on the site.

    Examples:
        >>> print(_reference("~crystalbench.types.ParsedResponse", "crystalbench.parsing"))
        ... # doctest: +NORMALIZE_WHITESPACE
        <autoref identifier="crystalbench.types.ParsedResponse"
            optional><code>ParsedResponse</code></autoref>
        >>> print(_reference("evaluate()", "crystalbench"))
        <autoref identifier="crystalbench.evaluate" optional><code>evaluate()</code></autoref>
        >>> print(_reference(".base", "crystalbench.inference.backends"))
        ... # doctest: +NORMALIZE_WHITESPACE
        <autoref identifier="crystalbench.inference.backends.base"
            optional><code>.base</code></autoref>
    """
    explicit = re.fullmatch(r"(?P<title>.+?)\s*<(?P<path>[^>]+)>", target)
    if explicit:
        title, path = explicit["title"], explicit["path"]
    else:
        title, path = target, target
        if path.startswith("~"):
            path = path[1:]
            title = path.rsplit(".", 1)[-1]
    path = path.lstrip("~").removesuffix("()")
    if path.startswith("."):
        path = context + path
    elif "." not in path:
        path = f"{context}.{path}"
    return f'<autoref identifier="{path}" optional><code>{title}</code></autoref>'


def convert(text: str, context: str) -> str:
    """A docstring with its Sphinx roles and ``::`` literal introductions in Markdown.

    Args:
        text: The docstring.
        context: The dotted path of the package or module the docstring belongs to.

    Returns:
        The docstring, roles as optional cross-references and ``Example::`` as ``Example:``
        (the indented block after it is already code in Markdown).

    Examples:
        >>> convert("Quick start::\\n\\n    x = 1", "crystalbench")
        'Quick start:\\n\\n    x = 1'
        >>> print(convert("See :func:`load_encoder`.", "crystalbench.encoders"))
        ... # doctest: +NORMALIZE_WHITESPACE
        See <autoref identifier="crystalbench.encoders.load_encoder"
            optional><code>load_encoder</code></autoref>.
    """
    text = LITERAL_INTRO.sub(":", text)
    return ROLE.sub(lambda match: _reference(match["target"], context), text)


def _package_of(obj: griffe.Object) -> str:
    """The dotted path of the module (or package) that holds ``obj``."""
    module = obj if obj.is_module else obj.module
    return module.path


class SphinxRoles(griffe.Extension):
    """Rewrites every docstring as it is loaded (see the module docstring)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Convert ``obj``'s docstring in place."""
        if obj.docstring is not None:
            obj.docstring.value = convert(obj.docstring.value, _package_of(obj))
