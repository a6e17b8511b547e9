"""``pip install .`` (pyproject.toml): the wheel holds ``pvnviz``, the ``pvnviz`` command, the app's own files and the
shipped runs; installed into a fresh environment, ``pvnviz`` works from any folder and finds the app and its runs.

The wheel is built from a copy of the checkout's files as git lists them (a fresh clone, with this working tree's
changes) with ``pip wheel --no-deps``; the environment is a new virtualenv whose dependencies are this one's (a
``.pth`` line), so nothing is downloaded but the build's setuptools (pip's cache, or its index).
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import tomllib
import urllib.request
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
APP_FILES = ("app.py", "asgi.py", ".streamlit/config.toml")  # beside pages/, ui/ and data/


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_pyproject_declares_every_package_the_command_and_the_pinned_requirements():
    config = _pyproject()
    packages = set(config["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "pvnviz").rglob("__init__.py")}
    assert on_disk - packages == set(), "a package of pvnviz would not be installed"
    assert {"pvnviz_app", "pvnviz_app.ui", "pvnviz_app.pages"} <= packages
    assert config["tool"]["setuptools"]["package-dir"] == {"pvnviz_app": "."}
    assert config["project"]["scripts"] == {"pvnviz": "pvnviz.cli.entry:main"}
    assert config["tool"]["setuptools"]["dynamic"]["dependencies"] == {"file": ["requirements.txt"]}
    assert config["build-system"]["build-backend"] == "setuptools.build_meta"


TOP_NOT_IN_A_CLONE = {".git", ".venv", "build", "runs", ".pytest_cache", ".ruff_cache", "pvnviz.egg-info"}
NOT_IN_A_CLONE = {"__pycache__", "static", "artifacts"}  # at any depth (.gitignore's)


def _listed_files() -> list[str]:
    """The checkout's files as a fresh clone of this working tree would hold them: as git lists them, or (no git,
    or a repository git refuses to read) every file outside the folders a clone does not hold."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout
        return [name for name in out.decode().split("\0") if name and (ROOT / name).is_file()]
    except (OSError, subprocess.CalledProcessError):
        parts = {p: p.relative_to(ROOT).parts for p in ROOT.rglob("*") if p.is_file() and p.suffix != ".pyc"}
        return [
            "/".join(part)
            for part in parts.values()
            if part[0] not in TOP_NOT_IN_A_CLONE and not NOT_IN_A_CLONE & set(part)
        ]


def _requirements() -> list[str]:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("install")
    source = base / "clone"
    for name in _listed_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(base / "wheel"), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (built,) = (base / "wheel").glob("pvnviz-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel) -> Path:
    """A fresh virtualenv with the wheel installed by pip (console script included), this one's packages beside."""
    env = wheel.parent.parent / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True, timeout=120)
    purelib = Path(
        subprocess.run(
            [str(env / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (purelib / "deps-of-the-test-runner.pth").write_text("\n".join(sorted(ours)) + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "install", "--no-deps", "--no-index",
         "-q", str(wheel)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return env


def _clean_env() -> dict[str, str]:
    """This process's environment without what would put the checkout on sys.path or choose the runs' folders."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PVN_RUNS_ROOTS", "PORT")}


@pytest.mark.slow
def test_the_wheel_holds_the_app_its_components_and_the_shipped_runs(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    listed = _listed_files()
    expected = {f"pvnviz_app/{n}" for n in APP_FILES}
    expected |= {f"pvnviz_app/{n}" for n in listed if n.startswith("data/")}
    app_code = ("pages/", "ui/", "components/")
    expected |= {f"pvnviz_app/{n}" for n in listed if n.startswith(app_code) and n.endswith((".py", ".js"))}
    expected |= {n for n in listed if n.startswith("pvnviz/") and n.endswith(".py")}
    assert any(n.startswith("pvnviz_app/components/") for n in expected)
    assert expected - names == set(), "files the installed app needs are missing from the wheel"
    assert not any(n.startswith(("tests/", "runs/", "pvnviz_app/tests/", "pvnviz_app/.venv/")) for n in names)
    info = next(n for n in names if n.endswith(".dist-info/METADATA"))
    requires = [line.split(":", 1)[1].strip() for line in zipfile.ZipFile(wheel).read(info).decode().splitlines()
                if line.startswith("Requires-Dist:")]  # fmt: skip
    assert requires == _requirements()
    points = zipfile.ZipFile(wheel).read(info.replace("METADATA", "entry_points.txt")).decode()
    assert "pvnviz = pvnviz.cli.entry:main" in points


@pytest.mark.slow
def test_the_installed_command_runs_from_any_folder_and_finds_the_app(venv, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    command = str(venv / "bin" / "pvnviz")
    env = _clean_env()
    run = subprocess.run([command, "--help"], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.startswith("usage: pvnviz"), run.stderr
    for sub in ("run", "settings", "compare", "manifest", "app"):
        assert sub in run.stdout
    argv = [command, "run", "polytope", "--seed", "4", "--set", "train_steps=300", "--quiet", "--out", "r"]
    run = subprocess.run(argv, cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("polytope, seed 4") and (elsewhere / "r" / "summary.json").is_file()
    settings = [command, "settings", "cartpole", "--preset", "quick"]
    run = subprocess.run(settings, cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "num_policies = 300" in run.stdout, run.stderr
    probe = (
        "import json, pvnviz, pvnviz.runs.paths as p, pvnviz.runs.store as s, pvnviz.cli.serve as c; "
        "argv, folder, env = c.command(8600); "
        "print(json.dumps([pvnviz.__file__, str(p.app_root()), p.app_missing(), [str(r) for r in s.run_roots()], "
        "folder, env['PVN_RUNS_ROOTS']]))"
    )
    run = subprocess.run([str(venv / "bin" / "python"), "-c", probe], cwd=elsewhere, env=env, capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr
    module, app, missing, roots, folder, roots_env = json.loads(run.stdout)
    assert Path(module).is_relative_to(venv) and Path(app).is_relative_to(venv), (module, app)
    assert missing == "" and folder == app
    assert roots == [str(Path(app) / "data"), str(elsewhere.resolve() / "runs")]
    assert roots_env.split(os.pathsep) == roots  # what the server, started in the app's folder, is told
    assert (Path(app) / "data" / "cartpole-quick" / "manifest.json").is_file()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_the_installed_app_serves_from_any_folder(venv, tmp_path):
    port = _free_port()
    env = {**_clean_env(), "PORT": str(port)}
    proc = subprocess.Popen(
        [str(venv / "bin" / "pvnviz"), "app"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        deadline, answer = time.monotonic() + 120, None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
                    answer = response.read().decode()
                    break
            except OSError:
                time.sleep(0.5)
        assert answer == "ok", proc.stdout.read().decode()[-3000:] if proc.poll() is not None else "no answer"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as response:
            assert response.status == 200 and b"<html" in response.read().lower()
        page = urllib.request.Request(f"http://127.0.0.1:{port}/", headers={"Accept": "text/html"})
        with urllib.request.urlopen(page, timeout=10) as response:  # the page starts plotly.js from the app's route
            plotly_url = response.read().decode().split('data-plotly="', 1)[1].split('"', 1)[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{plotly_url}", timeout=30) as response:
            import plotly

            wheel_js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
            assert response.status == 200 and response.read() == wheel_js.read_bytes()
        installed = next(venv.rglob("pvnviz_app/app.py")).parent
        assert not (installed / "static").exists()  # nothing written into site-packages: a read-only install works
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
