/*
 * th_selfcheck.h - start-up known-answer checks of the instructions the int8 kernels rely on.
 *
 * An emulator that gets one of them wrong (Renode 1.15.x sets SSUB8's GE flags on overflow,
 * so SEL picks the wrong bytes) would make the kernels report wrong outputs silently; the
 * firmware runs these once at start-up and INFO carries the verdict (protocol README).
 */
#ifndef TH_SELFCHECK_H
#define TH_SELFCHECK_H

#include <stdint.h>

/* Run every check (once, a few hundred instructions); the verdict string stays valid:
 * "ok", "none" (a build without the DSP kernels: nothing to check) or
 * "fail:SSUB8,SEL,..." naming each failing instruction. */
const char *th_selfcheck_run(void);

/* The verdict of the last th_selfcheck_run() ("" before the first). */
const char *th_selfcheck_verdict(void);

#endif /* TH_SELFCHECK_H */
