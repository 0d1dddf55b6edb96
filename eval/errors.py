"""The error type the eval CLI turns into ``error: ...`` and exit status 2."""


class EvalError(Exception):
    """Bad input or a failed step in evaluation; the message names the file, record or model and what to do."""


class ModelNotFoundError(EvalError):
    """A model name that is neither built in, nor a local folder, nor loadable by sentence-transformers (or whose
    package is not installed)."""


class AuditError(EvalError):
    """Bad audit parameters (tau larger than the number of models, fewer than two models, ...)."""


class NotANumber(EvalError):
    """A results or audit file holds something else where a number belongs (a crafted or damaged file), or a
    value no figure can draw."""
