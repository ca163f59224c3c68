"""A model revision as the catalogue accepts one from an untrusted file (a recipe's `--revision`, a run file's
`model_revision`): a commit (40 hex digits), a local folder's content hash (`sha256:` and 16 to 64 hex digits, as the
runner's facts script records it), or a plain tag or branch name: letters and digits in words joined by one `.`,
`_` or `-`, at most 100 characters. No `/` (so no `refs/pr/7`, a pull request's unreviewed files), no `..`, no
space, quote or control character: a revision becomes one word of a command a reader may paste into a shell."""

from __future__ import annotations

import re

_FORMS = r"[0-9a-f]{40}|sha256:[0-9a-f]{16,64}|[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*"
REVISION = rf"^(?:{_FORMS})$"
"""A commit, a folder's content hash, or a conservative tag or branch name."""
REVISION_OR_EMPTY = rf"^(?:{_FORMS})?$"
"""The same, or empty (a run file's `model_revision` when the revision is not known)."""
MAX_REVISION = 100
"""Characters of a revision."""
REVISION_FLAGS = ("revision", "code-revision", "tokenizer-revision")
"""The `vllm serve` flags that take a revision."""
REVISION_RULE = "a 40-hex commit or a tag or branch name (letters and digits joined by . _ -; no /, no refs/pr/*)"
"""What a refusal says the value must be."""


def is_revision(text: object) -> bool:
    """Whether `text` is a revision the catalogue passes on (see the module's docstring)."""
    return isinstance(text, str) and len(text) <= MAX_REVISION and re.fullmatch(REVISION, text) is not None
