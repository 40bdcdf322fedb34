"""The project's own error type: every user-facing failure names the file, the object and the field."""
from __future__ import annotations


class EatlasError(Exception):
    """A problem the user can fix. ``str()`` gives one line per problem, never a traceback."""

    def __init__(self, message: str, *, file: str | None = None, obj: str | None = None,
                 field: str | None = None, hint: str | None = None):
        self.message, self.file, self.obj, self.field, self.hint = message, file, obj, field, hint
        super().__init__(self.render())

    def render(self) -> str:
        where = ", ".join(p for p in (
            self.file and f"file {self.file}",
            self.obj and f"{self.obj}",
            self.field and (f"option {self.field}" if self.field.startswith("--") else f"field '{self.field}'"),
        ) if p)
        text = f"{where}: {self.message}" if where else self.message
        return f"{text} ({self.hint})" if self.hint else text


class ValidationFailed(EatlasError):
    """Several problems found at once (lazy validation)."""

    def __init__(self, problems: list[EatlasError]):
        self.problems = problems
        Exception.__init__(self, "\n".join(p.render() for p in problems))
        self.message, self.file, self.obj, self.field, self.hint = str(self), None, None, None, None

    def render(self) -> str:
        return "\n".join(p.render() for p in self.problems)
