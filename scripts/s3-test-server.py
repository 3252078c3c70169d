"""An S3-compatible server on 127.0.0.1 for lakewriter's tests: moto, one request at a time.

moto's threaded server checks a conditional PUT (If-None-Match: *) and then writes in two steps,
so two racing commits of the same Delta log entry could both succeed. Serving moto's WSGI app
behind one lock makes each request — and so each conditional put — atomic.

    python s3-test-server.py PORT
Data lives in memory and goes with the process; any credentials are accepted.
"""

import sys
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple

app = DomainDispatcherApplication(create_backend_app)
lock = threading.Lock()


def serialized(environ, start_response):
    with lock:
        # Consume the whole response inside the lock: the write happens while it is produced.
        return [b"".join(app(environ, start_response))]


if __name__ == "__main__":
    run_simple("127.0.0.1", int(sys.argv[1]), serialized, threaded=True)
