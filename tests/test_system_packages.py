"""`make test` and `make demo` install the Debian packages when they can, else end by saying
what was skipped and how to install it (issue 18, item 14). The script runs for real, with
fakes of `id`, `sudo`, `dpkg-query` and `apt-get` first on its PATH."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "install-system-packages.sh"
PACKAGES = "chromium tesseract-ocr tesseract-ocr-eng"


def fake_commands(folder: Path, *, uid: int) -> Path:
    """Nothing installed; ``apt-get`` records its arguments in ``folder/apt.log``. The PATH
    is this folder alone: the real tools the script uses are linked into it."""
    folder.mkdir()
    for tool in ("sed", "grep", "dirname", "env"):
        real = shutil.which(tool)
        assert real is not None
        (folder / tool).symlink_to(real)
    log = folder / "apt.log"
    scripts = {
        "id": f"echo {uid}",
        "sudo": "exit 1",  # no passwordless sudo
        "dpkg-query": "exit 1",  # not installed
        "apt-get": f'echo "$@" >> {log}',
    }
    for name, body in scripts.items():
        path = folder / name
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)
    return folder


def run(fakes: Path, *args: str) -> str:
    bash = shutil.which("bash")
    assert bash is not None
    env = {**os.environ, "PATH": str(fakes)}
    done = subprocess.run(
        [bash, str(SCRIPT), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_without_root_it_goes_on_and_the_report_says_what_is_skipped(tmp_path: Path) -> None:
    fakes = fake_commands(tmp_path / "bin", uid=1000)
    tried = run(fakes, "--if-possible")
    assert f"{PACKAGES} missing; not installed (needs root or passwordless sudo)" in tried
    assert not (fakes / "apt.log").exists()
    report = run(fakes, "--report").splitlines()
    assert report[0] == "system packages missing, so these were skipped:"
    assert report[1].startswith("  chromium: the web page tests")
    assert report[2].startswith("  tesseract-ocr: OCR of scanned PDF pages")
    assert report[-1].startswith(f"install them with: sudo apt-get install {PACKAGES}")


def test_as_root_it_installs_what_is_missing(tmp_path: Path) -> None:
    fakes = fake_commands(tmp_path / "bin", uid=0)
    assert f"installing {PACKAGES}" in run(fakes, "--if-possible")
    calls = (fakes / "apt.log").read_text().splitlines()
    assert calls == ["update -qq", f"install -y -qq --no-install-recommends {PACKAGES}"]


def test_strict_mode_fails_where_it_cannot_install(tmp_path: Path) -> None:
    fakes = fake_commands(tmp_path / "bin", uid=1000)
    (fakes / "apt-get").unlink()
    with pytest.raises(subprocess.CalledProcessError) as failed:
        run(fakes)
    assert "no apt-get on this system" in failed.value.stdout


@pytest.mark.parametrize("target", ["unit", "demo"])
def test_make_test_and_make_demo_try_to_install_and_end_with_the_report(target: str) -> None:
    plan = subprocess.run(
        ["make", "-n", "--no-print-directory", "-C", str(ROOT), target],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert any("install-system-packages.sh --if-possible" in line for line in plan)
    assert "install-system-packages.sh --report" in plan[-1]
