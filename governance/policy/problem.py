"""What the matrix compiler reports, and the parsed files it reads them from (cold path)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.policy.schema import MatrixFile


class Problem:
    """One finding of validation: ``error`` makes the matrix unusable, ``warning`` is shown."""

    __slots__ = ("file", "fix", "key", "level", "message")

    def __init__(self, level: str, file: str, key: str, message: str, fix: str = "") -> None:
        self.level, self.file, self.key, self.message, self.fix = level, file, key, message, fix

    def render(self) -> str:
        text = f"{self.level}: {self.file}: at key {self.key}: {self.message}"
        return text + (f" Fix: {self.fix}" if self.fix else "")


class Layer:
    """One parsed file with the file name kept for every entry, so rules name their origin."""

    def __init__(self, path: str, model: MatrixFile) -> None:
        self.path = path
        self.model = model
