"""The firmware's start-up self-check verdict (INFO ``selfcheck``) and the refusal to report
outputs from a target that computes an instruction the kernels rely on wrongly.

The firmware (``firmware/selfcheck/th_selfcheck.c``) runs known-answer checks of SSUB8/SADD8/
SSUB16/SADD16/USUB8 (through SEL), SMLAD, SMLABB, SSAT, USAT, SMMLAR, SXTB16 and PKHBT at
start-up. Stock Renode 1.15.x fails the GE-flag ones (its SSUB8 sets GE on overflow), which
would make max pooling give wrong outputs silently.
"""

from __future__ import annotations

from tinyhost.errors import DeployError

FIXED_RENODE = (
    "use a fixed Renode (the portable build in ../shared/tools/renode, see its README, "
    "or a Renode release newer than 1.15)"
)


def failing_instructions(verdict: str | None) -> list[str]:
    """The instructions a ``fail:A,B`` verdict names; [] for "ok", "none" or no verdict."""
    if verdict is None or not verdict.startswith("fail:"):
        return []
    return [name for name in verdict.removeprefix("fail:").split(",") if name]


def check_selfcheck(verdict: str | None, where: str, emulator: str | None = None) -> None:
    """Raise a DeployError naming the failing instructions when the target failed its check."""
    failing = failing_instructions(verdict)
    if not failing:
        return
    names = ", ".join(failing)
    ge = [n for n in failing if n in ("SSUB8", "SADD8", "SSUB16", "SADD16", "USUB8")]
    what = f"computes {'the GE flags of ' if ge else ''}{names} wrongly"
    advice = FIXED_RENODE if emulator == "renode" else "its outputs would be wrong"
    raise DeployError(
        f"{where}: the target failed its start-up self-check: this "
        f"{'Renode' if emulator == 'renode' else 'target'} {what}; refusing to report "
        f"outputs: {advice}"
    )
