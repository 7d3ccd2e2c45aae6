# SPDX-License-Identifier: GPL-2.0-only
"""What the Python suites and benchmarks share: finding tools, and running
programs in a clean environment (no XRay variables inherited from the
caller's shell)."""
import os
import shutil
import subprocess

XRAY_VARIABLES = ("XRAY_OPTIONS", "XRAY_FDR_OPTIONS", "XRAY_BASIC_OPTIONS",
                  "XRAYFDR_OPTIONS", "LD_PRELOAD")


def which(*names):
    """The first of @names found on PATH, or None."""
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


def run(cmd, env=None, timeout=None, **kw):
    """Run @cmd with the XRay variables of @env only; capture its output."""
    e = {k: v for k, v in os.environ.items() if k not in XRAY_VARIABLES}
    e.update(env or {})
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                          env=e, timeout=timeout, **kw)
