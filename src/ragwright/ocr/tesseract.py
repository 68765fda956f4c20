"""Tesseract OCR through its command-line program, one subprocess per page.

The CLI (Debian ``tesseract-ocr`` plus a language package such as ``tesseract-ocr-eng``) is
used rather than a Python binding: it needs no compiler, its licence (Apache-2.0) stays outside
the Python process, and a page that makes it hang is killed by a timeout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field

from ragwright.errors import MissingDependencyError, OcrError
from ragwright.ports import GrayImage

INSTALL_HINT = (
    "install Tesseract: `apt-get install tesseract-ocr tesseract-ocr-eng` (Debian/Ubuntu), "
    "`brew install tesseract` (macOS), or run `make system-deps` in a ragwright checkout"
)


@dataclass(frozen=True)
class TesseractOcr:
    """Runs ``tesseract`` on page images. ``languages`` are Tesseract's codes (``eng``,
    ``deu``, ...), each needing its language package; ``timeout`` bounds one page, in seconds.

    Construction checks that the program and the languages are installed and raises
    `MissingDependencyError` (with the install line) if not; `TesseractOcr.available` asks
    without raising.
    """

    languages: tuple[str, ...] = ("eng",)
    timeout: float = 120.0
    executable: str = "tesseract"
    version: str = field(init=False)

    name = "tesseract"

    def __post_init__(self) -> None:
        path = shutil.which(self.executable)
        if path is None:
            raise MissingDependencyError("OCR", INSTALL_HINT)
        object.__setattr__(self, "executable", path)
        object.__setattr__(self, "version", self._version())
        missing = sorted(set(self.languages) - self._installed_languages())
        if missing:
            packages = " ".join(f"tesseract-ocr-{code}" for code in missing)
            raise MissingDependencyError(
                f"OCR in {', '.join(missing)}", f"apt-get install {packages}"
            )

    @classmethod
    def available(cls, executable: str = "tesseract") -> bool:
        return shutil.which(executable) is not None

    def recognize(self, image: GrayImage) -> str:
        # PGM is the raster plus a one-line header: nothing to encode, and Tesseract reads it.
        pgm = b"P5\n%d %d\n255\n" % (image.width, image.height) + image.pixels
        command = [self.executable, "stdin", "stdout", "--dpi", str(image.dpi)]
        command += ["-l", "+".join(self.languages)]
        try:
            result = self._run(command, pgm)
        except subprocess.TimeoutExpired as error:
            raise OcrError(f"tesseract took longer than {self.timeout:g} s") from error
        if result.returncode != 0:
            detail = result.stderr.decode("utf-8", "replace").strip().splitlines()
            raise OcrError(f"tesseract failed ({detail[-1] if detail else result.returncode})")
        return result.stdout.decode("utf-8", "replace")

    def _run(self, command: list[str], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
        # One thread per page: Tesseract's own threading only slows down parallel callers.
        env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
        return subprocess.run(
            command, input=stdin, capture_output=True, timeout=self.timeout, env=env, check=False
        )

    def _version(self) -> str:
        # "tesseract 5.3.0" on the first line (stdout in 5.x, stderr in older releases)
        result = self._run([self.executable, "--version"])
        text = (result.stdout or result.stderr).decode("utf-8", "replace").split()
        return text[1] if len(text) > 1 else "unknown"

    def _installed_languages(self) -> set[str]:
        # "List of available languages in ... (2):" then one code per line
        result = self._run([self.executable, "--list-langs"])
        lines = (result.stdout or result.stderr).decode("utf-8", "replace").splitlines()
        return {line.strip() for line in lines[1:] if line.strip()}
