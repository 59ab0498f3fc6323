"""Exception types. Every user-facing error derives from :class:`PrivpubError`."""

__all__ = [
    "PrivpubError",
    "ConfigError",
    "DataError",
    "BudgetExceededError",
    "UnknownNameError",
    "NotApplicableError",
]


class PrivpubError(ValueError):
    """Base class of every error privpub raises on purpose (bad input, bad config, bad data)."""


class ConfigError(PrivpubError):
    """An experiment or command-line configuration that cannot be run."""


class DataError(PrivpubError):
    """A data file that is missing, corrupt or malformed."""


class BudgetExceededError(PrivpubError):
    """A mechanism tried to spend more privacy budget than it was given."""


class UnknownNameError(PrivpubError, KeyError):
    """An unknown dataset, mechanism or metric name; the message lists the known ones."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class NotApplicableError(PrivpubError):
    """A grid cell that cannot apply to this dataset (e.g. theta >= |V|, k > rows).

    Raised by a mechanism before it does any work; the runner records the trial as
    ``status="skipped"`` with this message as its reason (not as a failure), and a rerun
    does not retry it unless the code changes.
    """
