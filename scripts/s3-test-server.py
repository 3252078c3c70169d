"""An S3-compatible server on 127.0.0.1 for lakewriter's tests: moto's S3, one request at a time.

moto's threaded server checks a conditional PUT (If-None-Match: *) and then writes in two steps,
so two racing commits of the same Delta log entry could both succeed. Serving moto's WSGI app
behind one lock makes each request — and so each conditional put — atomic.

Only S3 is served: moto's S3 app is called directly, not through the dispatcher that finds a
request's service anew for each request (listing moto's packages on disk every time), and the
server logs no line per request — together most of the server's own time per request.

    python s3-test-server.py PORT
Data lives in memory and goes with the process; any credentials are accepted.
"""

import sys
import threading

from moto.moto_server.werkzeug_app import create_backend_app
from werkzeug.serving import WSGIRequestHandler, run_simple

app = create_backend_app("s3")
lock = threading.Lock()


def serialized(environ, start_response):
    with lock:
        # Consume the whole response inside the lock: the write happens while it is produced.
        return [b"".join(app(environ, start_response))]


class Quiet(WSGIRequestHandler):
    """A request handler that logs no line per request (errors still go to stderr)."""

    def log_request(self, code="-", size="-"):
        pass


if __name__ == "__main__":
    run_simple("127.0.0.1", int(sys.argv[1]), serialized, threaded=True, request_handler=Quiet)
