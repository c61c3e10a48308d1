"""Deploy stage: firmware builds, QEMU/host runs and exact instruction counts."""

from tinyhost.deploy.build import BuildResult, SizeInfo, build
from tinyhost.deploy.icount import MARKER_OVERHEAD, count_instructions, run_with_icount
from tinyhost.deploy.qemu import RunResult, Session, open_session, run_semihosted

__all__ = [
    "MARKER_OVERHEAD",
    "BuildResult",
    "RunResult",
    "Session",
    "SizeInfo",
    "build",
    "count_instructions",
    "open_session",
    "run_semihosted",
    "run_with_icount",
]
