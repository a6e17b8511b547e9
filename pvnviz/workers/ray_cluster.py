"""Joining a Ray cluster from PVN Lab (the CLI's ``--backend ray`` and live runs), token included.

Ray 2.60's token authentication, as its source (``ray/_private/authentication/``,
``ray/scripts/scripts.py``, ``ray/_private/worker.py``) implements it:

- The mode is the environment variable ``RAY_AUTH_MODE`` (``token`` or ``disabled``), read per
  process. Unset, ``ray.init()`` without an address turns token mode on and writes a new token
  to ``~/.ray/auth_token``; ``ray start --head`` and ``ray.init(address="auto")`` (a cluster
  found on this machine) turn it on if a token is already there; ``ray start --address=HEAD:PORT``
  and ``ray.init(address="HOST:PORT")`` (or ``RAY_ADDRESS``) never do. A node or driver without token mode sends no
  token, and a token-mode cluster refuses it: ``InvalidAuthToken: Authentication token is
  missing or incorrect``.
- The token, in this order: ``RAY_AUTH_TOKEN`` (the token itself), ``RAY_AUTH_TOKEN_PATH`` (a
  file holding it; if that file is missing or empty Ray fails with an ``AuthenticationError`` rather
  than look further), ``~/.ray/auth_token``.
  ``ray get-auth-token [--generate]`` prints it (creating ``~/.ray/auth_token`` with --generate).
- In token mode with no token at all, ``ray.init`` raises ``AuthenticationError``, and a direct
  GCS client call aborts the process (a failed ``RAY_CHECK`` in Ray's C++ token loader).

``connect_cluster`` treats an explicit ``HOST:PORT`` as Ray treats ``auto``: with
``RAY_AUTH_MODE`` unset and a token found, it turns token mode on for this process (a cluster
without tokens ignores one). Before ``ray.init`` a child process asks the cluster's GCS for its
id with the token this process would send (under a second), so a refused or missing token ends
in one line saying what to set, not in 20 s of ``InvalidAuthToken`` warnings and a
``ConnectionError``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path

AUTH_MODE_VAR = "RAY_AUTH_MODE"
TOKEN_VAR = "RAY_AUTH_TOKEN"
TOKEN_PATH_VAR = "RAY_AUTH_TOKEN_PATH"
HOW_TO_SET = (
    "copy the head's ~/.ray/auth_token to ~/.ray/auth_token on this machine, or set "
    f"{TOKEN_VAR}=<the output of `ray get-auth-token` on the head> (or {TOKEN_PATH_VAR}=<a file holding it>)"
)


@dataclass(frozen=True)
class Token:
    """A Ray token and where it was found (an environment variable or a file)."""

    value: str
    source: str


def package_dir() -> str:
    """The ``pvnviz`` package folder, shipped to every worker with Ray's ``py_modules``."""
    return str(Path(__file__).resolve().parents[1])


def default_token_path(environ: MutableMapping[str, str] | None = None) -> Path:
    """Where ``ray get-auth-token --generate`` writes the token and every Ray process looks last."""
    home = (os.environ if environ is None else environ).get("HOME")
    return (Path(home) if home else Path.home()) / ".ray" / "auth_token"


def find_token(environ: MutableMapping[str, str] | None = None) -> Token | None:
    """The token Ray would use here, in Ray's order; ValueError for a ``RAY_AUTH_TOKEN_PATH`` Ray would fail on."""
    environ = os.environ if environ is None else environ
    if environ.get(TOKEN_VAR, "").strip():
        return Token(environ[TOKEN_VAR].strip(), TOKEN_VAR)
    if environ.get(TOKEN_PATH_VAR):
        path = Path(environ[TOKEN_PATH_VAR]).expanduser()
        try:
            value = path.read_text().strip()
        except OSError as err:
            raise ValueError(
                f"{TOKEN_PATH_VAR}={path} cannot be read ({err.strerror or err}); fix or unset it."
            ) from None
        if not value:
            raise ValueError(f"{TOKEN_PATH_VAR}={path} is empty; put the cluster's token in it or unset it.")
        return Token(value, f"{TOKEN_PATH_VAR}={path}")
    path = default_token_path(environ)
    value = path.read_text().strip() if path.is_file() else ""
    return Token(value, str(path)) if value else None


def prepare_token_mode(environ: MutableMapping[str, str] | None = None) -> Token | None:
    """Settle ``RAY_AUTH_MODE`` for joining a cluster; the token that will be sent, if any.

    Unset and a token found: token mode on (this process and the processes it starts).
    ``token`` and no token: ValueError naming what to set (``ray.init`` would raise a long
    ``AuthenticationError``, a direct GCS call would abort the process).
    """
    environ = os.environ if environ is None else environ
    token = find_token(environ)
    mode = environ.get(AUTH_MODE_VAR, "").lower()
    if not mode and token is not None:
        environ[AUTH_MODE_VAR] = mode = "token"
    if mode == "token" and token is None:
        raise ValueError(f"{AUTH_MODE_VAR}=token but no Ray token was found: {HOW_TO_SET}.")
    return token if mode == "token" else None


def _reload_ray_config() -> None:
    """Make Ray's C++ config and token cache see ``RAY_AUTH_MODE`` and the token as they are now.

    As Ray's own auto-enable does; it matters when this process changed them, or the token file
    was fixed after a refused try.
    """
    from ray._raylet import AuthenticationTokenLoader, Config

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def refused_message(address: str, token: Token | None, mode: str) -> str:
    """The one line for a cluster that refused this machine's token (or its lack of one)."""
    if mode == "disabled":
        return (
            f"the Ray cluster at {address} requires a token but {AUTH_MODE_VAR}=disabled here: "
            f"unset it (or set {AUTH_MODE_VAR}=token) and {HOW_TO_SET}."
        )
    if token is None:
        return f"the Ray cluster at {address} requires a token and this machine has none: {HOW_TO_SET}."
    return f"the Ray cluster at {address} refused the token from {token.source} (not this cluster's): {HOW_TO_SET}."


# Asks the GCS for the cluster id with the token Ray sends from this environment. In a child process:
# Ray's C++ client logs the refusal on stderr, caches the token, and aborts on a token-mode call without one.
_PROBE = """
import sys
from ray._raylet import InnerGcsClient
from ray.exceptions import AuthenticationError
try:
    InnerGcsClient.standalone(sys.argv[1], None, int(sys.argv[2]))
except AuthenticationError:
    sys.exit(3)
except Exception:
    sys.exit(4)
"""
REFUSED = 3


def check_token(address: str, token: Token | None, seconds: float = 5.0) -> None:
    """ValueError (one line) if the GCS at ``address`` refuses the token this process would send."""
    probe = [sys.executable, "-c", _PROBE, address, str(int(seconds * 1000))]
    try:
        status = subprocess.run(probe, capture_output=True, timeout=seconds + 30).returncode
    except subprocess.TimeoutExpired:
        return  # not about the token: ray.init reports it as it does
    if status == REFUSED:
        raise ValueError(refused_message(address, token, os.environ.get(AUTH_MODE_VAR, "").lower()))


def check_reachable(address: str, seconds: float = 5.0) -> None:
    """ValueError unless something listens at HOST:PORT (Ray itself would wait minutes before failing)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--address must be auto or HOST:PORT (e.g. 10.0.0.1:6379), got {address!r}.")
    try:
        socket.create_connection((host, int(port)), timeout=seconds).close()
    except OSError as err:
        raise ValueError(
            f"cannot reach a Ray cluster at {address} ({err.strerror or err}); start one there with "
            "`ray start --head --port=PORT` or check the address."
        ) from None


def _resolve(address: str) -> str | None:
    """HOST:PORT for ``address`` ("auto" looks up the cluster started on this machine), or None if none."""
    if address != "auto":
        return address
    from ray._private.services import canonicalize_bootstrap_address

    try:
        return canonicalize_bootstrap_address("auto")
    except Exception:  # noqa: BLE001 - no local cluster: ray.init says so
        return None


def connect_cluster(address: str | None, *, num_cpus: int | None = None) -> bool:
    """Join the cluster at ``address`` ("auto" or "HOST:PORT") or, for None, start Ray here; True if this call did.

    A running Ray connection of this process is reused as it is (False). ``pvnviz`` is shipped to
    the workers. Every failure to join is a ValueError with one line saying what to do.
    """
    import ray

    if ray.is_initialized():
        return False
    runtime_env = {"py_modules": [package_dir()]}
    if address is None:
        ray.init(
            num_cpus=num_cpus,
            include_dashboard=False,
            runtime_env=runtime_env,
            log_to_driver=False,
            logging_level="warning",
        )
        return True
    if address != "auto":
        check_reachable(address)
    token = prepare_token_mode()
    resolved = _resolve(address)
    if resolved is not None:
        check_token(resolved, token)
    _reload_ray_config()
    try:
        ray.init(address=address, runtime_env=runtime_env, log_to_driver=False, logging_level="warning")
    except ConnectionError as err:
        message = f"cannot reach a Ray cluster at {address!r} ({err}); start one with `ray start --head`."
        raise ValueError(message) from None
    return True
