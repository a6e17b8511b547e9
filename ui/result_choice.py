"""Which result an environment page (CartPole, Swimmer) draws, decided from plain values (no Streamlit).

``ui.experiment.obtain_result`` gathers the inputs (the sidebar's run list and upload, the shared cache, the shipped
runs, this session's last result), asks ``choose_result``, then opens and draws what it names.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from pvnviz.runs.pipeline import ExperimentConfig, ExperimentResult

ShippedRuns = dict[str, tuple[ExperimentConfig, int, str]]  # preset id -> a shipped run's (config, seed, folder)


class Source(Enum):
    """Where the result an environment page draws comes from (``choose_result``)."""

    UPLOAD = "upload"  # a run zip opened in the sidebar
    SAVED_RUN = "saved run"  # a run folder picked in the sidebar's list (or named by the link)
    INVALID = "invalid settings"  # the settings cannot be read: this session's last result, if any
    LIVE = "live run"  # a finished live run of these settings, in the server's shared cache
    SHIPPED = "shipped run"  # a shipped run of exactly these settings
    NOT_RUN = "not run yet"  # nothing made these settings: the last finished result, else a shipped run
    NOTHING = "nothing"  # no result at all: the page says how to make one and stops


@dataclass(frozen=True)
class ResultChoice:
    """``choose_result``'s answer: the source, and the result or folder it names."""

    source: Source
    result: ExperimentResult | None = None  # LIVE; NOT_RUN and INVALID: the last result (INVALID: None if none)
    folder: str = ""  # SAVED_RUN: as picked; SHIPPED, NOT_RUN without a result: a shipped run's folder
    preset: str = ""  # SHIPPED: the id of the preset whose shipped run it is


def choose_result(
    *,
    uploaded: bool,
    run_dir: str,
    config: ExperimentConfig | None,
    seed: int,
    live: ExperimentResult | None,
    shipped: ShippedRuns,
    last: ExperimentResult | None,
    preset: str | None,
) -> ResultChoice:
    """Which result the page draws (pure: no Streamlit). First a zip the user ``uploaded``, then a saved run
    ``run_dir`` picked in the sidebar. Else, for settings that can be read (``config`` is None when they cannot:
    the ``last`` result), the ``live`` run of (config, seed) finished on this server, else a ``shipped`` run
    (preset id -> (config, seed, folder)) of them, else the ``last`` finished result, else the shipped run of
    ``preset`` (the preset in force; the first shipped run when it has none), else nothing.

    A running or queued job changes nothing here: the page shows this choice until the job's result is ``live``.
    """
    if uploaded:
        return ResultChoice(Source.UPLOAD)
    if run_dir:
        return ResultChoice(Source.SAVED_RUN, folder=run_dir)
    if config is None:
        return ResultChoice(Source.INVALID, result=last)
    if live is not None:
        return ResultChoice(Source.LIVE, result=live)
    for run_preset, (run_config, run_seed, folder) in shipped.items():
        if run_config == config and run_seed == seed:
            return ResultChoice(Source.SHIPPED, folder=folder, preset=run_preset)
    if last is not None:
        return ResultChoice(Source.NOT_RUN, result=last)
    if shipped:
        return ResultChoice(Source.NOT_RUN, folder=shipped.get(preset, next(iter(shipped.values())))[2])
    return ResultChoice(Source.NOTHING)
