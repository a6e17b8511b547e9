"""The "Any environment" page's own controls: which gymnasium environment (``gym:ID?key=value``,
``pvnviz.envs.gym_id``) the PVN experiment of Section 6 runs on, and what its spaces are (UI only; no math here).

The page is the CartPole page's body (``ui.experiment``, ``ui.results``) over the environment picked here. The
environment box lists the IDs that qualify (a flat Box observation, a Discrete or Box action), family by family,
and takes any other ID typed in; the keyword box takes ``key=value`` pairs joined by ``&``, as a ``gym:`` name
writes them. Both are bound to the URL. An environment that does not qualify, or a keyword its constructor
refuses, is one ``st.error`` and the page stops there; the job this session had running for the environment
shown before is stopped whenever the environment changes, so no worker keeps computing for a page that left it.
"""

from __future__ import annotations

import streamlit as st

from pvnviz.envs.gym_id import EnvRefused, GymId, QualifiedSpaces, check_qualifies, parse_env_name, qualifying_ids
from ui import urlcheck
from ui.server import queue as jobs
from ui.settings import state_key

DEFAULT_ID = "Pendulum-v1"  # the page opens on it: continuous actions, a fixed 200-step episode, a quick run
ENV_KEY, KWARGS_KEY = "anyenv_env", "anyenv_kwargs"  # the two controls' keys, and their URL parameters
_SHOWN = "_anyenv_shown"  # session state: the environment name the page showed last


def families() -> dict[str, str]:
    """{ID: family} of every qualifying ID, family by family (``pvnviz.envs.gym_id.FAMILIES``' order)."""
    return {env_id: family for family, ids in qualifying_ids().items() for env_id in ids}


def pick_environment() -> GymId | None:
    """The environment box and the keyword box; the ``GymId`` they name, or None after a one-line st.error
    (a malformed name, an ID gymnasium does not know, spaces that do not qualify, a refused keyword)."""
    listed = families()
    options = list(listed)
    left, right = st.columns([3, 2])
    env_id = left.selectbox(
        "Environment",
        options,
        index=options.index(DEFAULT_ID) if DEFAULT_ID in options else 0,
        format_func=lambda i: f"{i}  ·  {listed[i]}" if i in listed else i,
        key=ENV_KEY,
        bind="query-params",
        accept_new_options=True,
        help="Every registered gymnasium ID whose observation is a flat Box and whose action is Discrete or a Box, "
        "by family; type another ID to try it.",
    )
    kwargs = right.text_input(
        "Keyword arguments",
        key=KWARGS_KEY,
        bind="query-params",
        placeholder="none (e.g. g=9.81)",
        help="Passed to gymnasium.make: key=value pairs joined by &; a value is a number, true/false, a JSON list, "
        "or text.",
    )
    text = f"gym:{str(env_id or '').strip()}" + (f"?{kwargs.strip()}" if kwargs and kwargs.strip() else "")
    try:
        gym_id = parse_env_name(text)
        check_qualifies(gym_id)
    except EnvRefused as err:
        leave(None)
        st.error(f"This environment cannot run here: {err}")
        return None
    leave(gym_id.name)
    return gym_id


def leave(shown: str | None) -> None:
    """The page now shows ``shown`` (None: nothing runs): if it showed another environment before, this session's
    job there is stopped (cancelled unless another session waits on it) and not joined again."""
    before = st.session_state.get(_SHOWN)
    st.session_state[_SHOWN] = shown
    if before is None or before == shown:
        return
    job_id = st.session_state.get(state_key(before, "job"))
    if job_id is not None:
        jobs.stop(job_id)
        st.session_state[state_key(before, "job")] = None
        st.session_state[state_key(before, "left")] = job_id


def spaces_text(gym_id: GymId, spaces: QualifiedSpaces) -> str:
    """One markdown paragraph: the observation, the action and the episode limit of this environment."""
    obs = spaces.observation_space
    if spaces.discrete:
        action = f"**Discrete({spaces.act_dim})**: the policy picks one of {spaces.act_dim} actions (softmax)"
    else:
        low, high = spaces.action_space.low, spaces.action_space.high
        same = len(set(low)) == 1 and len(set(high)) == 1
        bounds = f"[{low.min():g}, {high.max():g}]" if same else "its bounds"
        unit = same and low.min() == -1 and high.max() == 1
        action = f"**Box({spaces.act_dim},)** in {bounds}: the policy's tanh outputs" + (
            "" if unit else ", scaled into the bounds"
        )
    limit = spaces.max_episode_steps
    return (
        f"`{gym_id.name}` ({spaces.family}). Observation: **Box({spaces.obs_dim},)** of {obs.dtype}, what the "
        f"policies and the fingerprint's probing states see. Action: {action}. Episodes end at "
        + (f"{limit} steps (the environment's own time limit) or earlier." if limit else "the run's horizon.")
    )


def show_spaces(gym_id: GymId) -> QualifiedSpaces:
    """The environment's spaces under the picker; its ``QualifiedSpaces``."""
    spaces = check_qualifies(gym_id)
    st.markdown(spaces_text(gym_id, spaces))
    return spaces


def stop() -> None:
    """Stop the page after ``pick_environment``'s error (the link's warning first)."""
    urlcheck.stop()


def show_comparison(gym_id: GymId) -> None:
    """The shipped comparison of PVN ``beyond`` against ARS at the same env-step budget on this environment
    (``data/envs-compare.jsonl``, docs/env-results.md), every seed; nothing for an
    environment it does not hold."""
    from pvnviz.figures.env_results import env_results_figure
    from pvnviz.runs.env_results import shipped_env_results
    from ui.components import chart

    results = shipped_env_results(gym_id.name)
    if not results:
        return
    st.subheader("Against random search at the same budget")
    chart(env_results_figure(results, columns=2), name=f"{gym_id.id}-vs-ars", key="any-env-vs-ars")
    st.caption(
        "What to look at: each marker is one seed's return on fresh episodes, at the env-step budget in the panel's "
        "title: the best policy of the random dataset, the PVN's active rounds (Section 5's checks, added to its "
        "data; the mean of its 5 starts, and its best start), and augmented random search (Mania et al. 2018) "
        "spending the same steps on one policy. Where the PVN's mean is above ARS, the dataset of random "
        "policies was worth more than the same steps of search. Every environment's table: docs/env-results.md."
    )
