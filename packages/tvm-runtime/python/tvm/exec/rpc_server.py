"""``python -m tvm.exec.rpc_server``: serve this machine's runtime to apache-tvm RPC clients.

Options follow apache-tvm 0.27's command so existing device setup scripts keep working; the
safety options (sessions, timeouts, --allow, authentication, TLS) are described with the threat
model in docs/rpc.md, "Threat model and safety options".
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import ssl
import sys
from pathlib import Path

SECRET_ENV = "TVM_RPC_SECRET"


def _tracker_addr(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"--tracker expects HOST:PORT, got {text!r}")
    return host, int(port)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on")
    parser.add_argument("--port", type=int, default=9090, help="first port to try")
    parser.add_argument("--port-end", type=int, default=9199, help="end of the port range to try")
    parser.add_argument(
        "--through-proxy",
        action="store_true",
        help="serve through the RPC proxy at --host:--port (connect out to it) instead of listening",
    )
    parser.add_argument("--tracker", type=_tracker_addr, help="register with the tracker at HOST:PORT")
    parser.add_argument(
        "--key", default="", help="device key: reported to the tracker, or served under at the proxy"
    )
    parser.add_argument("--custom-addr", help="address reported to the tracker instead of the peer's view")
    parser.add_argument("--silent", action="store_true", help="log errors only")
    parser.add_argument(
        "--max-packet-bytes", type=int, default=None, help="refuse packets larger than this (default 1 GiB)"
    )
    parser.add_argument("--work-dir", default=None, help="parent of the per-session temporary directories")
    sessions = parser.add_argument_group("sessions")
    sessions.add_argument(
        "--max-sessions",
        type=int,
        default=4,
        help="sessions served at once; a client beyond that is refused with a clear error (default 4; "
        "with --tracker the tracker hands the device to one client at a time)",
    )
    sessions.add_argument(
        "--idle-timeout",
        type=float,
        default=None,
        help="end a session whose client sends nothing for this many seconds",
    )
    sessions.add_argument(
        "--handshake-timeout", type=float, default=10.0, help="seconds a client has for the whole handshake"
    )
    allow = parser.add_argument_group(
        "what a session may do (default: everything apache-tvm's server allows)"
    )
    allow.add_argument(
        "--allow",
        choices=["all", "measure-only"],
        default="all",
        help="measure-only: upload, load its own uploads, run, copy and time; the global functions "
        "listed in docs/rpc.md only; uploads up to 1 GiB",
    )
    allow.add_argument(
        "--allow-global",
        action="append",
        default=[],
        metavar="PATTERN",
        help="let sessions get only the global functions matching these patterns (fnmatch, repeatable; "
        "added to measure-only's list); tvm.rpc.server.* file functions are always available",
    )
    allow.add_argument(
        "--confine-loads",
        action="store_true",
        help="functions that take a server path (ffi.ModuleLoadFromFile, ...) see only the session's "
        "own uploads",
    )
    allow.add_argument(
        "--max-upload-bytes", type=int, default=None, help="bytes one session may upload in all"
    )
    security = parser.add_argument_group("authentication and TLS")
    security.add_argument(
        "--auth-secret-file",
        type=Path,
        help=f"require this shared secret (the file's first line; or set {SECRET_ENV}) from every client",
    )
    security.add_argument("--tls-cert", type=Path, help="serve TLS only, with this certificate (PEM)")
    security.add_argument("--tls-key", type=Path, help="the certificate's private key (PEM)")
    security.add_argument(
        "--tls-client-ca", type=Path, help="also require a client certificate signed by this CA (PEM)"
    )
    parser.add_argument(
        "--load-library",
        help="shared libraries (':'-separated) loaded before serving, so their global functions are callable",
    )
    parser.add_argument(
        "--no-fork",
        action="store_true",
        help="accepted for apache-tvm compatibility; has no effect",
    )
    args = parser.parse_args(argv)
    if args.tracker and not args.key:
        parser.error("--tracker needs --key (the name clients request the device by)")
    if args.through_proxy and args.tracker:
        parser.error("--through-proxy with --tracker: start the proxy with --tracker instead")
    if (args.tls_key or args.tls_client_ca) and not args.tls_cert:
        parser.error("--tls-key and --tls-client-ca need --tls-cert")
    secret = _read_secret(parser, args.auth_secret_file)
    ssl_context = _tls_context(parser, args) if args.tls_cert else None

    logging.basicConfig(
        level=logging.ERROR if args.silent else logging.INFO,
        format="%(asctime)s.%(msecs)03d %(levelname)s %(message)s",
        datefmt="%Y-%m-%d %H:%M:%S",
    )
    import ctypes

    for path in (args.load_library or "").split(":"):
        if path:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)

    from tvm.rpc._policy import SessionPolicy
    from tvm.rpc.server import RPCServer

    try:
        policy = SessionPolicy.from_options(
            args.allow, args.allow_global, args.confine_loads, args.max_upload_bytes
        )
        server = RPCServer(
            host=args.host,
            port=args.port,
            port_end=args.port_end,
            key=args.key,
            tracker_addr=args.tracker,
            custom_addr=args.custom_addr,
            max_packet_bytes=args.max_packet_bytes,
            work_root=args.work_dir,
            is_proxy=args.through_proxy,
            policy=policy,
            auth_secret=secret,
            ssl_context=ssl_context,
            max_sessions=args.max_sessions,
            idle_timeout=args.idle_timeout,
            handshake_timeout=args.handshake_timeout,
        )
    except ValueError as err:
        parser.error(str(err))
    warning = server.exposure_warning()
    if warning:
        print(f"rpc_server: WARNING: {warning}", file=sys.stderr, flush=True)
    logging.getLogger("tvm.rpc.server").info(
        "sessions may use: %s%s%s",
        policy.describe(),
        "; shared secret required" if secret else "",
        "; TLS only" if ssl_context else "",
    )
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` ends the sessions too, not only the listener
    if args.through_proxy:
        print(f"tvm-runtime RPC server serving through the proxy at {args.host}:{server.port}", flush=True)
    else:
        print(f"tvm-runtime RPC server listening on {args.host}:{server.port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    except (ConnectionError, ValueError) as err:
        print(f"rpc_server: error: {err}", file=sys.stderr, flush=True)
        return 1
    finally:
        server.terminate()
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _read_secret(parser: argparse.ArgumentParser, path: Path | None) -> str | None:
    """The shared secret: the first line of ``path``, else the environment, else None."""
    if path is not None:
        try:
            lines = path.read_text().splitlines()
        except OSError as err:
            parser.error(f"cannot read --auth-secret-file: {err}")
        secret = lines[0].strip() if lines else ""
        if not secret:
            parser.error(f"--auth-secret-file {path} is empty")
        return secret
    # Not left in the environment the session processes inherit.
    return os.environ.pop(SECRET_ENV, "") or None


def _tls_context(parser: argparse.ArgumentParser, args: argparse.Namespace) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(args.tls_cert, args.tls_key)
        if args.tls_client_ca:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(args.tls_client_ca)
    except (OSError, ssl.SSLError) as err:
        parser.error(f"cannot load the TLS certificate or key: {err}")
    return context


if __name__ == "__main__":
    sys.exit(main())
