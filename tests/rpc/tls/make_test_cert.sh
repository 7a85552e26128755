#!/bin/sh
# Regenerates the self-signed certificate the RPC TLS tests use (test-only: its private key is
# public, in this directory).  Valid for 127.0.0.1 and localhost until 2126.
set -e
cd "$(dirname "$0")"
openssl req -x509 -newkey rsa:2048 -nodes -days 36500 -subj "/CN=tvm-runtime RPC test" \
  -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" -keyout server.key -out server.pem
