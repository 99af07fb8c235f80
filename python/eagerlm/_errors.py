"""The exceptions eagerlm raises: one class per engine error code, under eagerlm.Error.

Every failure of the engine (eagerlm::Error in C++) arrives as the subclass of its code, with the
engine's message, which names the file, field, tensor or option and says what was expected. The
classes also derive from the built-in exception a Python caller would catch for that kind of
failure (ValueError, OSError, MemoryError), so ``except ValueError`` works as usual.
"""

from __future__ import annotations

from . import _core

ErrorCode = _core.ErrorCode


class Error(Exception):
    """A failure reported by eagerlm; ``code`` says what kind, ``str(e)`` exactly what."""

    code: ErrorCode = ErrorCode.INTERNAL

    @property
    def message(self) -> str:
        """The engine's message."""
        return str(self)


class InvalidArgumentError(Error, ValueError):
    """A bad option, argument or value (names it and says what was expected)."""

    code = ErrorCode.INVALID_ARGUMENT


class InvalidFileError(Error, ValueError):
    """A model, config or tokenizer file that is malformed (names the file and the field or tensor)."""

    code = ErrorCode.INVALID_FILE


class IoError(Error, OSError):
    """A file or directory that cannot be opened, read or written (names it)."""

    code = ErrorCode.IO


class UnsupportedError(Error):
    """A valid request this build or machine cannot serve, e.g. CUDA without a GPU."""

    code = ErrorCode.UNSUPPORTED


class OutOfMemoryError(Error, MemoryError):
    """Weights, cache or activations that do not fit (says how much was needed)."""

    code = ErrorCode.OUT_OF_MEMORY


class InternalError(Error):
    """A broken invariant inside eagerlm: a bug, please report it."""

    code = ErrorCode.INTERNAL


class BusyError(Error):
    """No room now (a full request queue): the same call may succeed later."""

    code = ErrorCode.BUSY


_CLASSES = (InvalidArgumentError, InvalidFileError, IoError, UnsupportedError, OutOfMemoryError, InternalError,
            BusyError)
_core.set_error_classes({cls.code: cls for cls in _CLASSES})
