"""The shared body of the environment pages (CartPole, Swimmer): widgets -> config -> pvnviz -> figures."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from pvnviz.core.config_fields import ConfigError, from_dict
from pvnviz.runs import archive
from pvnviz.runs.files import load_result
from pvnviz.runs.pipeline import ExperimentConfig, ExperimentResult
from pvnviz.runs.presets import preset_label
from pvnviz.runs.store import RUNS_ROOTS_ENV, RunError, list_runs, read_run, resolve_run, run_roots
from ui import computed, result_store, run_panel, urlcheck
from ui.errors import guarded
from ui.result_choice import ResultChoice, ShippedRuns, Source, choose_result
from ui.server import queue as jobs
from ui.server.limits import UPLOAD_MB
from ui.settings import FIELDS, PRESET_CONFIGS, current_preset, sidebar_config, state_key  # noqa: F401 (pages)


def _last_good(last: ExperimentResult | None) -> ExperimentResult:
    """After bad input: the last result this session computed (``last``), so nothing computed is lost."""
    if last is None:
        urlcheck.stop()
    st.caption("Showing your last valid run until the settings are fixed.")
    return last


REPO_ROOT = Path(__file__).resolve().parents[1]


def _resolve(run_dir: str) -> str:
    """A shipped run's folder (named in the page's code, relative to the project)."""
    return str(REPO_ROOT / run_dir)


NO_RUN = ""


def _run_label(name: str) -> str:
    return "— none: use the settings above —" if name == NO_RUN else name


def _shipped(env_name: str, shipped: dict[str, str]) -> ShippedRuns:
    """The shipped runs' (config, seed, folder) per preset id."""
    found = _read_shipped(env_name, shipped)
    return {preset: (config, seed, shipped[preset]) for preset, (config, seed, _) in found.items()}


def shipped_summaries(env_name: str, folders: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The summary.json of each shipped run (label -> folder named in the page's code)."""
    return {label: summary for label, (_, _, summary) in _read_shipped(env_name, folders).items()}


def _read_shipped(env_name: str, folders: dict[str, str]) -> dict[str, tuple[ExperimentConfig, int, dict[str, Any]]]:
    """Each shipped run's (config, seed, summary) by its key, from its config.json and summary.json only; a run that
    cannot be opened is left out, with a warning naming it."""
    out = {}
    for key, folder in folders.items():
        path = _resolve(folder)
        found = _shipped_run(path, _stamp(path), env_name)
        if isinstance(found, str):
            st.warning(f"Shipped run {folder} cannot be opened: {found}")
        else:
            out[key] = found
    return out


@functools.lru_cache(maxsize=64)
def _shipped_run(path: str, stamp: float, env_name: str) -> tuple[ExperimentConfig, int, dict[str, Any]] | str:
    """A shipped run's (config, seed, summary), or why it cannot be opened: read once per folder and modification
    time, not on every page run (every session's script run, a shared run's end included)."""
    try:
        info = read_run(path, env_name)
        return from_dict(ExperimentConfig, info.config), info.seed, info.summary
    except (RunError, ConfigError, TypeError) as err:
        return str(err)


def _open(folder: str, env_name: str) -> ExperimentResult:
    path = _resolve(folder)
    return computed(_load, path, _stamp(path), env_name, label=f"Opening {folder}")


def show_experiment(
    env_name: str,
    config: ExperimentConfig | None,
    seed: int,
    draw: Callable[[ExperimentResult], None],
    *,
    default_run: str = "",
    shipped: dict[str, str] | None = None,
) -> None:
    """The run panel, then what the page draws (``draw(result)``): a folder or zip the user opened, else the result
    of (config, seed) if any run made it (a live run on this server, or a shipped run), else the last finished
    result with a note saying so.

    Live training starts only from the Run button, in a background job with progress and Stop. The result and
    its figures are a fragment: when a run ends, each tab that waited on it reruns the panel and that fragment,
    not the sidebar, the page's explanations or anything the page draws after it.
    """
    jobs.prepare_workers()
    run_panel.active_job(env_name, config, seed)  # joins a running job of exactly these settings
    run_dir, uploaded = _run_sidebar(env_name, default_run=default_run)
    st.fragment(guarded(run_panel.job_panel), key=run_panel.panel_key(env_name))(env_name, config, seed)
    results = functools.partial(obtain_result, env_name, config, seed, run_dir, uploaded, shipped or {})
    st.fragment(guarded(lambda: draw(results())), key=run_panel.results_key(env_name))()


def obtain_result(
    env_name: str,
    config: ExperimentConfig | None,
    seed: int,
    run_dir: str,
    uploaded: Any,
    shipped: dict[str, str],
) -> ExperimentResult:
    """The result ``show_experiment`` draws, with a note saying what it is (see there)."""
    shipped_runs = _shipped(env_name, shipped)
    inputs = dict(
        run_dir=run_dir,
        config=config,
        seed=seed,
        live=_live_result(config, seed),
        shipped=shipped_runs,
        last=st.session_state.get(state_key(env_name, "last_result")),
        preset=current_preset(env_name, next(iter(shipped_runs))) if shipped_runs else None,
    )
    choice = choose_result(uploaded=uploaded is not None, **inputs)
    if choice.source is Source.UPLOAD:
        opened = _open_upload(uploaded, env_name, config, seed)
        if opened is not None:
            return _remember(env_name, opened)
        choice = choose_result(uploaded=False, **inputs)  # the zip cannot be opened (said above): as without it
    return _show(choice, env_name, seed)


def _run_sidebar(env_name: str, *, default_run: str) -> tuple[str, Any]:
    """The sidebar's saved-run list and zip upload: (run folder, upload)."""
    with st.sidebar:
        names = [NO_RUN, *list_runs(env_name)]
        run_dir = st.selectbox(
            "Open a saved run",
            names,
            index=names.index(default_run) if default_run in names else 0,
            format_func=_run_label,
            key=state_key(env_name, "run"),
            bind="query-params",
            help=(
                f"Runs under {', '.join(r.name + '/' for r in run_roots())} (set {RUNS_ROOTS_ENV} to change): "
                "write one with `python -m pvnviz run ... --out runs/NAME`."
            ),
        )
        uploaded = st.file_uploader(
            "Open a run zip",
            type=["zip"],
            key=state_key(env_name, "upload"),
            help=f"A zip downloaded from this page (at most {UPLOAD_MB} MB).",
            max_upload_size=UPLOAD_MB,  # the uploader states it and refuses a larger file before sending it
        )
    return run_dir, uploaded


def _live_result(config: ExperimentConfig | None, seed: int) -> ExperimentResult | None:
    """A finished live run of (config, seed) in the server's shared cache, or None."""
    if config is None:
        return None
    store, lock = result_store()
    with lock:
        return store.get(("experiment", config, seed))


def _open_upload(uploaded: Any, env_name: str, config: ExperimentConfig | None, seed: int) -> ExperimentResult | None:
    """The uploaded run zip, with a note saying so and what Run runs instead (the sidebar's ``config`` and
    ``seed``, which the upload does not change, nor the URL); None (after an error) when it cannot be opened."""
    try:
        data = uploaded.getvalue()  # keyed by its hash: the cache holds no copy of the upload's bytes
        result = computed(_unzip, hashlib.sha256(data).hexdigest(), env_name, label="Opening the zip", data=data)
    except archive.ArchiveError as err:
        st.error(f"Cannot open that zip: {err}")
        return None
    sidebar = "once they are valid" if config is None else f"({_describe_config(config, seed, env_name)})"
    st.info(
        f"Showing the uploaded run `{uploaded.name}` ({_describe(result, env_name)}) as uploaded: the sidebar and "
        f"this page's link do not describe it, and **Run** runs the sidebar's settings {sidebar}. Remove the zip "
        "(× beside it) to go back to them."
    )
    return result


def _open_saved(run_dir: str, env_name: str) -> ExperimentResult:
    """The saved run picked in the sidebar, with a note saying so; after an error, the last valid result."""
    try:
        path = str(resolve_run(run_dir))
        result = computed(_load, path, _stamp(path), env_name, label=f"Opening {run_dir}")
    except RunError as err:
        st.error(f"Cannot open that run: {err}")
        return _last_good(st.session_state.get(state_key(env_name, "last_result")))
    st.info(
        f"Showing the saved run in `{run_dir}` ({_describe(result, env_name)}); the sidebar's settings "
        "apply when you choose none in the sidebar's run list."
    )
    return _remember(env_name, result)


def _show(choice: ResultChoice, env_name: str, seed: int) -> ExperimentResult:
    """The result ``choice`` names (opened if it is a folder) under a note saying what it is; stops without one."""
    if choice.source is Source.SAVED_RUN:
        return _open_saved(choice.folder, env_name)
    if choice.source is Source.INVALID:
        return _last_good(choice.result)
    if choice.source is Source.LIVE:
        st.caption(f"Showing the live run of these settings ({_describe(choice.result, env_name)}).")
        return _remember(env_name, choice.result)
    if choice.source is Source.SHIPPED:
        label = preset_label(env_name, choice.preset)
        st.caption(f"Showing the shipped run `{choice.folder}` of these settings (preset {label}, seed {seed}).")
        return _remember(env_name, _open(choice.folder, env_name))
    if choice.source is Source.NOT_RUN:
        last = choice.result if choice.result is not None else _open(choice.folder, env_name)
        st.warning(
            f"These settings have not been run yet (seed {seed}). Shown below: {_describe(last, env_name)}. "
            "Press **Run with these settings** above to train them, or **Reset to the paper** to see the "
            "paper's run."
        )
        return last
    st.info("No result for these settings yet: press **Run with these settings** above.")
    urlcheck.stop()


def _describe(result: ExperimentResult, env_name: str) -> str:
    """'preset P, seed S' (P: the box's label) when a preset's config matches, else 'custom settings, seed S'."""
    return _describe_config(result.config, result.seed, env_name)


def _describe_config(config: ExperimentConfig, seed: int, env_name: str) -> str:
    """'preset P, seed S' (P: the box's label) when a preset's config is ``config``, else 'custom settings, seed S'."""
    for preset, preset_config in PRESET_CONFIGS.get(env_name, {}).items():
        if preset_config == config:
            return f"preset {preset_label(env_name, preset)}, seed {seed}"
    return f"custom settings, seed {seed}"


def _remember(env_name: str, result: ExperimentResult) -> ExperimentResult:
    st.session_state[state_key(env_name, "last_result")] = result
    return result


def _unzip(digest: str, env_name: str, on_progress, data: bytes = b"") -> ExperimentResult:
    return archive.read_run_zip(data, env_name)


def _stamp(path: str) -> float:
    """Latest modification time in a run folder, so a rewritten run is not served from the cache."""
    try:
        return max((f.stat().st_mtime for f in Path(path).iterdir()), default=0.0)
    except OSError:
        return 0.0


def _load(path: str, stamp: float, env_name: str, on_progress) -> ExperimentResult:
    return load_result(path, env_name)
