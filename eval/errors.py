"""The error type the eval CLI turns into ``error: ...`` and exit status 2."""


class EvalError(Exception):
    """Bad input or a failed step in evaluation; the message names the file, record or model and what to do."""


class AuditError(EvalError):
    """Bad audit parameters (tau larger than the number of models, fewer than two models, ...)."""
