"""The app's caps: what one upload, websocket message or HTTP request may weigh on its server.

Every part of the app reads them from here: the run-zip uploader states ``UPLOAD_MB`` and refuses more
(``ui.experiment``), the request guard refuses what is over the request caps before any body is read
(``ui.server.guard``), and ``.streamlit/config.toml`` repeats the two that Streamlit reads from its config
(``server.maxUploadSize = UPLOAD_MB``, ``server.maxMessageSize = MESSAGE_MB``), so that Streamlit neither buffers an
upload nor accepts a websocket message over them; ``tests/test_limits.py`` keeps the config equal to this module.

Streamlit's server counts ``maxUploadSize`` in units of 2**20 bytes and ``maxMessageSize`` in units of 10**6
bytes; its uploader, in the browser, counts the widget's cap in units of 10**6 bytes: it sends no file over
``UPLOAD_MB`` x 10**6 bytes (and says "File must be 50.0MB or smaller"), a little under what the server takes.
"""

from __future__ import annotations

from pvnviz.runs import archive

# A run zip is the only file the app takes; the zip reader refuses a larger one whoever hands it over.
UPLOAD_BYTES: int = archive.MAX_ZIP_BYTES
UPLOAD_MB: int = UPLOAD_BYTES // 2**20  # server.maxUploadSize, as the uploader states it
# An upload request's body: the file and its multipart framing (a part header and two boundary lines; Streamlit
# allows the same 1 MiB over maxUploadSize while it streams a body, then checks the file alone).
UPLOAD_BODY_BYTES: int = UPLOAD_BYTES + 2**20
UPLOAD_PATH = "/_stcore/upload_file/"  # where Streamlit's uploader sends a file (after the base URL path)

# server.maxMessageSize, in 10**6 bytes: a websocket message either way. The largest a page sends to its tab is a
# figure's data, a few hundred kB (the polytope page's); a tab's own messages are widget values, a few kB. A message
# to the tab over it is replaced by Streamlit's error message; one from a tab over it closes the connection.
MESSAGE_MB: int = 16
MESSAGE_BYTES: int = MESSAGE_MB * 10**6

# HTTP requests, as sent (before any body):
PATH_BYTES: int = 2048  # the path, percent-encoded: the app's longest are a few hundred bytes
SEGMENT_BYTES: int = 255  # one segment of the path, decoded: the longest file name Linux file systems hold
QUERY_BYTES: int = 4096  # the query string: a page's link names only the settings that differ, a few hundred bytes
BODY_BYTES: int = 2**20  # the body of any request but an upload: the app's own endpoints and pages read none
