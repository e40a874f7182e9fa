"""A wheel install can run ``fabcorr demo``: the wheel built from this tree, installed into a
fresh virtualenv, lists its scenarios inside its own installed package and loads them."""

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[3]
DEADLINE_S = 1800  # a release build of the Rust crate on a busy machine


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh virtualenv with the wheel installed (its dependencies are the test
    environment's: the wheel itself comes first on the path)."""
    folder = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                    "--disable-pip-version-check", "-w", str(folder / "dist"), str(ROOT)],
                   check=True, timeout=DEADLINE_S, capture_output=True)
    wheel, = (folder / "dist").glob("fabcorr-*.whl")
    assert {"simulator/scenarios/demo.yaml", "simulator/scenarios/failures.yaml"} <= set(
        zipfile.ZipFile(wheel).namelist())
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    subprocess.run([venv / "bin" / "python", "-m", "pip", "install", "--no-deps", "--quiet",
                    "--disable-pip-version-check", str(wheel)], check=True, timeout=600,
                   capture_output=True)
    return venv


def run(venv: Path, *argv: str) -> subprocess.CompletedProcess:
    dependencies = sysconfig.get_paths()["purelib"]  # of the test environment
    return subprocess.run([*argv], capture_output=True, text=True, timeout=300, check=False,
                          cwd=venv, env={"PYTHONPATH": dependencies, "PATH": "/usr/bin:/bin"})


def test_the_installed_wheel_lists_and_loads_its_own_scenarios(installed):
    done = run(installed, str(installed / "bin" / "fabcorr"), "demo", "--list")
    assert done.returncode == 0, done.stderr
    site = next((installed / "lib").glob("python3*/site-packages"))
    assert done.stdout.splitlines() == [
        f"demo\t{site}/simulator/scenarios/demo.yaml",
        f"failures\t{site}/simulator/scenarios/failures.yaml"]
    loaded = run(installed, str(installed / "bin" / "python"), "-c",
                 "from correlator.cli.demo import scenario_file; "
                 "from simulator.scenario import load_scenario; "
                 "s = load_scenario(scenario_file('demo')); "
                 "print(s.seconds, s.interval_s, len(s.events), scenario_file('demo'))")
    assert loaded.stdout.split() == ["40", "5", "2", f"{site}/simulator/scenarios/demo.yaml"]
