"""The matrix's adapter protocol for the Python clients (clients/README.md).

An adapter module defines one function per operation and calls run():

    run({"version": version, "produce": produce, ...})

Each function gets the settings (the first line of input) as a dict.
"""

import json
import logging
import os
import sys
import threading


class NotSupported(Exception):
    """The client cannot do what the operation asks; the text says why."""


_out = threading.Lock()


def emit(kind, **fields):
    """Writes one line of output."""
    fields["type"] = kind
    line = json.dumps(fields)
    with _out:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def error(name, message="", connection=False, protocol=False):
    """An error object of the protocol."""
    return {"name": name, "message": message, "connection": connection, "protocol": protocol}


def secure(cfg):
    """Whether the settings ask for a secured listener (SASL_SSL) instead of
    PLAINTEXT; securityProtocol, saslMechanism, saslUsername, saslPassword
    and sslCaFile say how."""
    return cfg.get("securityProtocol", "PLAINTEXT") not in ("", "PLAINTEXT")


def end_with(err):
    """Ends the operation with a fatal error at once, from any thread: for
    a failed authentication, which librdkafka keeps retrying."""
    emit("fatal", error=err)
    os._exit(0)


class EndOnAuthenticationFailure(logging.Handler):
    """Ends the operation at the first failed authentication a pure-Python
    client logs: kafka-python retries it until its bootstrap timeout, then
    raises a timeout; aiokafka raises "Unable to bootstrap"; neither says
    why. describe names the error as the adapter's other errors."""

    def __init__(self, describe):
        super().__init__()
        self.describe = describe

    def emit(self, rec):
        for a in rec.args if isinstance(rec.args, tuple) else ():
            if isinstance(a, BaseException) and "Authentication" in type(a).__name__:
                end_with(self.describe(a))


def end_on_authentication_failure(logger, describe):
    """Installs EndOnAuthenticationFailure on the client's logger."""
    logging.getLogger(logger).addHandler(EndOnAuthenticationFailure(describe))


def records():
    """Yields the records to produce, one per line of input, until its end."""
    for line in sys.stdin:
        line = line.strip()
        if line:
            yield json.loads(line)


class InputClosed:
    """Watches for the end of input, which tells a consumer to stop."""

    def __init__(self):
        self.event = threading.Event()
        threading.Thread(target=self._wait, daemon=True).start()

    def _wait(self):
        for _ in sys.stdin:
            pass
        self.event.set()

    def is_set(self):
        return self.event.is_set()


CONNECTION_WORDS = ("connection", "disconnected", "broken pipe", "refused", "reset by peer", "transport", "not connected", "nodenotready", "kafkaconnectionerror", "timed out connecting")


def is_connection_text(text):
    t = text.lower()
    return any(w in t for w in CONNECTION_WORDS)


def run(ops):
    op = sys.argv[1] if len(sys.argv) > 1 else ""
    if op not in ops:
        emit("fatal", error=error("usage", "unknown operation %r" % op))
        sys.exit(2)
    cfg = {} if op == "version" else json.loads(sys.stdin.readline())
    try:
        ops[op](cfg)
    except NotSupported as e:
        emit("notSupported", reason=str(e))
    except Exception as e:  # reported, not a crash: the harness shows it
        emit("fatal", error=error(type(e).__name__, str(e), connection=is_connection_text(type(e).__name__ + " " + str(e))))
    sys.stdout.flush()
