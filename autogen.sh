#!/bin/sh
# Generate configure and Makefile.in (generated files are not committed).
set -e
cd "$(dirname "$0")"
autoreconf --install --force
